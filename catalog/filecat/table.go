package filecat

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/spec"
)

// CreateTable writes md as v1.metadata.json of <warehouse>/<ns...>/<name>.
// The Hadoop layout fixes the location: md.Location must be empty or that.
func (c *Catalog) CreateTable(ctx context.Context, id catalog.Ident, md *spec.TableMetadata) (*catalog.Table, error) {
	if err := id.Validate(); err != nil {
		return nil, fmt.Errorf("create table: %w", err)
	}
	if err := c.requireNamespace(id.Namespace); err != nil {
		return nil, fmt.Errorf("create table %s: %w", id, err)
	}
	want := c.tableLocation(id)
	first := *md
	if loc := strings.TrimSuffix(first.Location, "/"); loc != "" && loc != want {
		return nil, fmt.Errorf("create table %s: location %s: the file catalog keeps tables at %s", id, loc, want)
	}
	first.Location = want
	dir := filepath.Join(c.tableDir(id), "metadata")
	if isTableDir(c.tableDir(id)) {
		return nil, fmt.Errorf("create table %s: %w", id, catalog.ErrAlreadyExists)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create table %s: %w", id, err)
	}
	data, err := first.Marshal(catalog.MetadataGzip(&first))
	if err != nil {
		return nil, fmt.Errorf("create table %s: encode metadata: %w", id, err)
	}
	name, err := claimVersion(dir, 1, catalog.MetadataGzip(&first), data)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create table %s: %w", id, catalog.ErrAlreadyExists)
	}
	if err != nil {
		return nil, fmt.Errorf("create table %s: write metadata: %w", id, err)
	}
	// A missing hint is recovered by scanning, so a failure here is not
	// a failed create.
	_ = writeVersionHint(dir, 1)
	return &catalog.Table{Ident: id, MetadataLocation: c.metadataLocation(id, name), Metadata: &first, IO: c.io}, nil
}

// LoadTable reads the newest metadata version of the table.
func (c *Catalog) LoadTable(ctx context.Context, id catalog.Ident) (*catalog.Table, error) {
	t, _, err := c.load(ctx, id)
	return t, err
}

func (c *Catalog) load(ctx context.Context, id catalog.Ident) (*catalog.Table, int, error) {
	if err := id.Validate(); err != nil {
		return nil, 0, fmt.Errorf("load table: %w", err)
	}
	dir := filepath.Join(c.tableDir(id), "metadata")
	v, name, err := currentVersion(dir)
	if errors.Is(err, fs.ErrNotExist) {
		// The same table in another catalog's layout says whose it is.
		alt := filepath.Join(append([]string{c.root}, append(slices.Clone(id.Namespace[:len(id.Namespace)-1]), id.Namespace[len(id.Namespace)-1]+".db", id.Name)...)...)
		if t, ok := foreignTable(filepath.Dir(alt)); ok && filepath.Base(t) == id.Name {
			return nil, 0, fmt.Errorf("table %s: %w: %w", id, catalog.ErrNoSuchTable, foreignErr(c.root, t))
		}
		return nil, 0, fmt.Errorf("table %s: %w", id, catalog.ErrNoSuchTable)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("load table %s: %w", id, err)
	}
	loc := c.metadataLocation(id, name)
	md, err := catalog.ReadMetadata(ctx, c.io, loc)
	if err != nil {
		return nil, 0, fmt.Errorf("load table %s: %w", id, err)
	}
	return &catalog.Table{Ident: id, MetadataLocation: loc, Metadata: md, IO: c.io}, v, nil
}

// CommitTable makes one commit attempt: it checks reqs against the newest
// version N, applies ups, and claims version N+1. Losing the claim wraps
// ErrCommitConflict.
func (c *Catalog) CommitTable(ctx context.Context, t *catalog.Table, reqs []spec.Requirement, ups []spec.Update) (*catalog.Table, error) {
	current, v, err := c.load(ctx, t.Ident)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", t.Ident, err)
	}
	id := current.Ident
	md, err := catalog.ApplyCommit(current, reqs, ups, time.Now())
	if err != nil {
		return nil, err
	}
	if loc := strings.TrimSuffix(md.Location, "/"); loc != c.tableLocation(id) {
		return nil, fmt.Errorf("commit %s: location %s: the file catalog keeps tables at %s", id, loc, c.tableLocation(id))
	}
	data, err := md.Marshal(catalog.MetadataGzip(md))
	if err != nil {
		return nil, fmt.Errorf("commit %s: encode metadata: %w", id, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("commit %s: %w", id, err)
	}
	dir := filepath.Join(c.tableDir(id), "metadata")
	name, err := claimVersion(dir, v+1, catalog.MetadataGzip(md), data)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("commit %s: version %d was committed by someone else: %w", id, v+1, catalog.ErrCommitConflict)
	}
	if err != nil {
		return nil, fmt.Errorf("commit %s: write version %d: %w: %w", id, v+1, catalog.ErrCommitFailed, err)
	}
	// Readers find the new version by probing past the hint, so a stale
	// hint only costs them a stat.
	_ = writeVersionHint(dir, v+1)
	loc := c.metadataLocation(id, name)
	return &catalog.Table{Ident: id, MetadataLocation: loc, Metadata: md, IO: c.io}, nil
}

// DropTable forgets the table by deleting its version files and hint.
// Manifests and data files are left in place: icectl never deletes table
// data as a side effect of forgetting a table.
func (c *Catalog) DropTable(ctx context.Context, id catalog.Ident) error {
	if err := id.Validate(); err != nil {
		return fmt.Errorf("drop table: %w", err)
	}
	dir := filepath.Join(c.tableDir(id), "metadata")
	if !isTableDir(c.tableDir(id)) {
		return fmt.Errorf("drop table %s: %w", id, catalog.ErrNoSuchTable)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("drop table %s: %w", id, err)
	}
	// The hint goes first, so a crash part way leaves either a table or
	// version files that the next drop finishes removing.
	if err := os.Remove(filepath.Join(dir, versionHintFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("drop table %s: %w", id, err)
	}
	for _, e := range entries {
		if _, ok := hadoopVersion(e.Name()); ok {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("drop table %s: %w", id, err)
			}
		}
	}
	return nil
}
