// Package icebergread reads Iceberg files and tables with iceberg-go, an
// implementation independent of icectl, and renders what it read as plain
// values with a deterministic JSON encoding (int64 as JSON numbers, binary
// as lower-case hex, rows in a canonical order).
//
// It must never import icectl's own packages: its whole value is that it
// shares no code with the writer it checks.
package icebergread
