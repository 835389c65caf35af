package orphan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	icefx "github.com/icectl/icectl/internal/testing/fixture"
)

// fixture is a SQLite catalog (internal/testing/fixture) whose tables are
// on local disk (file://) or in the in-memory FileIO (mem://, whose paths
// are opaque strings, so "a//b" and "a/b" are different files as on S3).
type fixture struct {
	*icefx.Catalog
	seq int
}

func newFixture(t *testing.T, warehouse string) *fixture {
	t.Helper()
	return newFixtureProps(t, warehouse, nil)
}

// newFixtureProps is newFixture with catalog (and FileIO) properties.
func newFixtureProps(t *testing.T, warehouse string, props map[string]string) *fixture {
	t.Helper()
	opts := []icefx.CatalogOption{icefx.WithProps(props)}
	if warehouse != "" {
		opts = append(opts, icefx.WithWarehouse(warehouse))
	}
	return &fixture{Catalog: icefx.NewSQLite(t, opts...)}
}

// create makes table ns.<name> (the fixture's schema) at location
// (default <warehouse>/ns/<name>).
func (f *fixture) create(t *testing.T, name, location string, props map[string]string) catalog.Ident {
	t.Helper()
	return f.Table(t, icefx.TableOptions{Name: name, Location: location, Props: props}).ID
}

func (f *fixture) load(t *testing.T, id catalog.Ident) *catalog.Table {
	t.Helper()
	return f.Existing(id).Load(t)
}

func (f *fixture) loader(id catalog.Ident) Loader {
	return func(ctx context.Context) (*catalog.Table, error) { return f.LoadTable(ctx, id) }
}

// put writes a file with distinct content and returns the content.
func (f *fixture) put(t *testing.T, fio fileio.FileIO, path string) []byte {
	t.Helper()
	f.seq++
	data := fmt.Appendf(nil, "file %d at %s\n%s", f.seq, path, bytes.Repeat([]byte{byte(f.seq)}, f.seq%7*100))
	if err := fileio.WriteFile(f.Ctx, fio, path, data); err != nil {
		t.Fatal(err)
	}
	return data
}

// dataFile describes a data file at path (its bytes are not Parquet:
// nothing here reads them).
func dataFile(path string, size int) manifest.DataFile {
	return icefx.Listed(path, nil, 1, int64(size))
}

// appendFiles writes files at paths (when write) and commits them.
func (f *fixture) appendFiles(t *testing.T, id catalog.Ident, write bool, paths ...string) *catalog.Table {
	t.Helper()
	tbl := f.load(t, id)
	ch := table.Change{Operation: spec.OperationAppend}
	for _, p := range paths {
		size := 1
		if write {
			size = len(f.put(t, tbl.IO, p))
		}
		ch.AddData = append(ch.AddData, dataFile(p, size))
	}
	return f.commit(t, tbl, ch)
}

func (f *fixture) commit(t *testing.T, tbl *catalog.Table, ch table.Change) *catalog.Table {
	t.Helper()
	return f.Existing(tbl.Ident).Commit(t, tbl, ch)
}

// files returns every file under prefix with its content.
func files(t *testing.T, fio fileio.FileIO, prefix string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := fio.(fileio.Lister).List(context.Background(), prefix, func(fi fileio.FileInfo) error {
		data, err := fileio.ReadFile(context.Background(), fio, fi.Path)
		out[fi.Path] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// referencedPaths lists what the table references, by our walker: every
// one of these must still exist after a run.
func referencedPaths(t *testing.T, tbl *catalog.Table) []string {
	t.Helper()
	md := tbl.Metadata
	out := []string{tbl.MetadataLocation}
	for _, e := range md.MetadataLog {
		out = append(out, e.MetadataFile)
	}
	var ids []int64
	for _, s := range md.Snapshots {
		ids = append(ids, s.SnapshotID)
	}
	err := table.WalkReachable(context.Background(), tbl.IO, md, ids, func(f table.ReachableFile) error {
		out = append(out, f.Path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// checkReferencedExist fails when a referenced file is gone.
func checkReferencedExist(t *testing.T, tbl *catalog.Table) {
	t.Helper()
	for _, p := range referencedPaths(t, tbl) {
		if strings.Contains(p, "://elsewhere/") || strings.HasPrefix(p, "memx:") {
			continue // references on purpose to paths no IO serves
		}
		f, err := tbl.IO.Open(context.Background(), p)
		if err != nil {
			t.Errorf("referenced file %s: %v", p, err)
			continue
		}
		f.Close()
	}
}

// sink collects a report.
type sink struct {
	conflicts []ConflictFile
	results   []Result
}

func (s *sink) Begin(Summary) error           { return nil }
func (s *sink) Conflict(c ConflictFile) error { s.conflicts = append(s.conflicts, c); return nil }
func (s *sink) Orphan(r Result) error         { s.results = append(s.results, r); return nil }

func (s *sink) byStatus() map[Status][]string {
	out := map[Status][]string{}
	for _, r := range s.results {
		out[r.Status] = append(out[r.Status], r.Path)
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

// later is a clock far enough ahead that every file written by a test is
// older than the default cutoff.
func later() time.Time { return time.Now().Add(10 * 24 * time.Hour) }

func opts() Options { return Options{Now: later, MemoryBudget: 1 << 10} }

// diff describes how two file sets differ.
func diff(before, after map[string][]byte) []string {
	var out []string
	for _, p := range slices.Sorted(maps.Keys(before)) {
		a, ok := after[p]
		switch {
		case !ok:
			out = append(out, "- "+p)
		case !bytes.Equal(a, before[p]):
			out = append(out, "~ "+p)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(after)) {
		if _, ok := before[p]; !ok {
			out = append(out, "+ "+p)
		}
	}
	return out
}

func sameStrings(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func isErr(err, target error) bool { return errors.Is(err, target) }

func catalogIdent(name string) catalog.Ident {
	return catalog.Ident{Namespace: []string{"ns"}, Name: name}
}
