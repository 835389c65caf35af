// Package metastore is what the table layer needs from a catalog: a loaded
// table version, the name of a table, the interface the commit loop commits
// through, and the errors that classify a commit's outcome.
//
// It exists so that the format and table packages (iceberg/...) depend on
// nothing above them: catalog implementations live in catalog/ and satisfy
// Committer; catalog re-exports these names. The package must never grow an
// implementation or import anything but iceberg/spec and iceberg/fileio.
package metastore

import (
	"context"
	"errors"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
)

// Table is one loaded version of a table.
type Table struct {
	Ident            Ident
	MetadataLocation string
	Metadata         *spec.TableMetadata
	IO               fileio.FileIO
}

// Committer loads tables and makes commit attempts; every catalog is one.
type Committer interface {
	LoadTable(ctx context.Context, id Ident) (*Table, error)
	// CommitTable makes one commit attempt: reqs are checked against the
	// catalog's current metadata (not t's) and ups are applied to it. Its
	// errors name the commit and the table ("commit ns.t: ..."), so
	// callers do not add them again.
	CommitTable(ctx context.Context, t *Table, reqs []spec.Requirement, ups []spec.Update) (*Table, error)
}

// MetadataFileOwner is implemented by catalogs that write the table's
// metadata files themselves (metastore catalogs: SQL, file). After one of
// their commits, the metadata files that fell off the metadata log are the
// committer's to clean up; a REST server owns its files and cleans them up.
type MetadataFileOwner interface {
	OwnsMetadataFiles() bool
}

// Errors that classify a commit's outcome. Catalog errors wrap them.
var (
	// ErrCommitConflict: a requirement failed or another commit won the
	// compare-and-swap. Nothing changed; reload the table and retry.
	ErrCommitConflict = errors.New("commit conflict")
	// ErrCommitStateUnknown: the commit may or may not have happened
	// (connection lost after the update was sent, server error, timeout).
	// Reload the table to find out; never clean up the files of such a commit.
	ErrCommitStateUnknown = errors.New("commit state unknown")
	// ErrCommitFailed: the commit definitely did not happen and will not
	// (its metadata file could not be written, the catalog refused it for
	// good). Nothing references the files the attempt wrote.
	ErrCommitFailed = errors.New("commit failed")
)
