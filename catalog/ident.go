package catalog

import "github.com/icectl/icectl/iceberg/metastore"

// Ident names a table: its namespace levels and its name.
type Ident = metastore.Ident

// ParseIdent parses a dotted table name (see metastore.ParseIdent).
func ParseIdent(s string) (Ident, error) { return metastore.ParseIdent(s) }

// ValidateNamespace checks a namespace (see metastore.ValidateNamespace).
func ValidateNamespace(ns []string) error { return metastore.ValidateNamespace(ns) }
