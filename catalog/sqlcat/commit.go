package sqlcat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/iceberg/spec"
)

// CommitTable makes one commit attempt. It loads the current row and
// metadata, checks reqs, applies ups, writes the next metadata file and
// swaps metadata_location with an UPDATE guarded by the old location.
//
// A lost swap (0 rows) wraps ErrCommitConflict and removes the written
// file, which nothing can reference. An error from the UPDATE itself wraps
// ErrCommitStateUnknown and leaves every file in place, except the
// errors that mean the statement never ran: SQLite's busy/locked
// (ErrCommitConflict, retried) and a read-only database, SQLite's or
// PostgreSQL's (ErrCommitFailed, for good); both remove the file.
func (c *Catalog) CommitTable(ctx context.Context, t *catalog.Table, reqs []spec.Requirement, ups []spec.Update) (*catalog.Table, error) {
	id := t.Ident
	if err := id.Validate(); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	current, err := c.LoadTable(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", id, err)
	}
	md, err := catalog.ApplyCommit(current, reqs, ups, time.Now())
	if err != nil {
		return nil, err
	}
	loc := catalog.NewMetadataLocation(md, catalog.NextMetadataVersion(current.MetadataLocation, current.Metadata))
	fio, err := c.ios.For(ctx, loc)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", id, err)
	}
	if err := catalog.WriteMetadata(ctx, fio, loc, md); err != nil {
		// A metadata file becomes visible only when its write completes, so
		// the catalog still points at the old version, for good.
		return nil, fmt.Errorf("commit %s: %w: %w", id, catalog.ErrCommitFailed, err)
	}
	// The file is unreferenced until the UPDATE runs; removing it is safe
	// only while that is certain.
	discard := func(cause error) error {
		return errors.Join(cause, reclaim.DeleteWritten(ctx, fio, md, []string{loc}))
	}
	if c.beforeSwap != nil {
		c.beforeSwap()
	}
	if err := ctx.Err(); err != nil {
		return nil, discard(fmt.Errorf("commit %s: %w", id, err))
	}
	res, err := c.exec(ctx, `UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ?
WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = ?`+c.tableFilter(),
		loc, current.MetadataLocation, c.name, strings.Join(id.Namespace, "."), id.Name, current.MetadataLocation)
	if err != nil {
		if c.dialect == SQLite && isSQLiteBusy(err) {
			return nil, discard(fmt.Errorf("commit %s: database busy: %w: %w", id, catalog.ErrCommitConflict, err))
		}
		if c.dialect == SQLite && isSQLiteReadOnly(err) {
			return nil, discard(fmt.Errorf("commit %s: the catalog database is read-only (check its file's permissions and its directory's): %w: %w", id, catalog.ErrCommitFailed, err))
		}
		if c.dialect == Postgres && isPostgresReadOnly(err) {
			return nil, discard(fmt.Errorf("commit %s: the catalog database refuses writes (a read-only database, transaction or standby, or a role without UPDATE on iceberg_tables): %w: %w", id, catalog.ErrCommitFailed, err))
		}
		return nil, fmt.Errorf("commit %s: swap metadata location to %s: %w: %w", id, loc, catalog.ErrCommitStateUnknown, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return nil, fmt.Errorf("commit %s: swap metadata location to %s: %w: %w", id, loc, catalog.ErrCommitStateUnknown, err)
	}
	if n != 1 {
		return nil, discard(fmt.Errorf("commit %s: metadata location changed since %s: %w", id, current.MetadataLocation, catalog.ErrCommitConflict))
	}
	return &catalog.Table{Ident: id, MetadataLocation: loc, Metadata: md, IO: fio}, nil
}
