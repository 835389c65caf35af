package catalog

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/icectl/icectl/iceberg/metastore"
)

// Errors callers branch on. Catalog errors wrap them, with context.
var (
	// ErrNoSuchTable: the table does not exist in the catalog.
	ErrNoSuchTable = errors.New("no such table")
	// ErrNoSuchNamespace: the namespace does not exist in the catalog.
	ErrNoSuchNamespace = errors.New("no such namespace")
	// ErrNamespaceNotEmpty: the namespace holds tables, views or other
	// namespaces, and is not dropped.
	ErrNamespaceNotEmpty = errors.New("namespace is not empty")
	// ErrAlreadyExists: a table or namespace of that name exists.
	ErrAlreadyExists = errors.New("already exists")
	// ErrCommitConflict: a requirement failed or another commit won the
	// compare-and-swap. Nothing changed; reload the table and retry.
	ErrCommitConflict = metastore.ErrCommitConflict
	// ErrCommitStateUnknown: the commit may or may not have happened.
	// Reload the table to find out; never clean up the files of such a commit.
	ErrCommitStateUnknown = metastore.ErrCommitStateUnknown
	// ErrCommitFailed: the commit definitely did not happen; the files its
	// attempt wrote are referenced by nothing.
	ErrCommitFailed = metastore.ErrCommitFailed
	// ErrCorruptMetadata: a table's current metadata file cannot be parsed.
	ErrCorruptMetadata = errors.New("corrupt table metadata")
	// ErrReadOnly: the catalog or table was opened for inspection only.
	ErrReadOnly = errors.New("catalog is read-only")
)

// OtherCatalogsError is ErrNoSuchTable from a database that holds tables
// only under other catalog names (a SQL catalog opened with the wrong
// catalog_name): it names them, so the user can pick one.
type OtherCatalogsError struct {
	Table   Ident
	Catalog string   // the catalog name asked for
	Others  []string // the names the database holds, sorted
}

func (e *OtherCatalogsError) Error() string {
	names := make([]string, len(e.Others))
	for i, n := range e.Others {
		names[i] = strconv.Quote(n)
	}
	what := "catalog"
	if len(names) > 1 {
		what = "catalogs"
	}
	return fmt.Sprintf("no table %s in catalog %q; this database holds %s %s", e.Table, e.Catalog, what, strings.Join(names, ", "))
}

func (e *OtherCatalogsError) Unwrap() error { return ErrNoSuchTable }
