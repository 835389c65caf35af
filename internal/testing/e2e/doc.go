// Package e2e holds end-to-end tests that run icectl and iceberg-go, an
// independent Iceberg implementation, against the same catalog: a table
// icectl commits must scan to the same rows in iceberg-go, and a table
// iceberg-go writes must scan to the same rows in icectl, through SQLite,
// PostgreSQL and a REST catalog server with its data on S3.
//
// iceberg-go is never linked here: the tests exec the iceberg-read binary
// built from the interop module (scripts/build-iceberg-go-reader). The
// package has no non-test code and must never grow any: it is not part of
// the product.
package e2e
