// Package icebergread reads Iceberg files and tables with iceberg-go, an
// implementation independent of icectl, and renders what it read as plain
// values with a deterministic JSON encoding (int64 as JSON numbers, binary
// as lower-case hex, rows in a canonical order). WriteFixture is its one
// writer: it builds, with iceberg-go alone, tables for icectl to read.
//
// It must never import icectl's own packages: its whole value is that it
// shares no code with the writer it checks. Only WriteFixture may create
// anything, and only the table (and namespace) it is asked for.
package icebergread
