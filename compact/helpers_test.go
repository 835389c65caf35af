package compact

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/fixture"
	"github.com/icectl/icectl/plan"
)

// env is a test table, ns.t in a SQLite catalog (internal/testing/fixture).
type env struct{ *fixture.Table }

func newEnv(t *testing.T, v int) *env {
	t.Helper()
	return newEnvWith(t, fixture.TableOptions{FormatVersion: v})
}

// newEnvWith is newEnv for a table o describes.
func newEnvWith(t *testing.T, o fixture.TableOptions) *env {
	t.Helper()
	return &env{fixture.NewSQLite(t).Table(t, o)}
}

func checksum(t *testing.T, tbl *catalog.Table) scan.ChecksumResult {
	t.Helper()
	r, err := scan.Checksum(context.Background(), tbl.IO, tbl.Metadata, tbl.Metadata.CurrentSnapshot(), scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// lineage is a row's _row_id and _last_updated_sequence_number (-1 = null).
type lineage struct{ rowID, seq int64 }

// lineageByID reads the surviving rows of tbl with lineage, keyed by id.
func lineageByID(t *testing.T, tbl *catalog.Table) map[int64]lineage {
	t.Helper()
	out := map[int64]lineage{}
	err := scan.Rows(context.Background(), tbl.IO, tbl.Metadata, tbl.Metadata.CurrentSnapshot(), scan.Options{WithLineage: true},
		func(rec arrow.RecordBatch) error {
			ids := rec.Column(0).(*array.Int64)
			rid := rec.Column(int(rec.NumCols()) - 2).(*array.Int64)
			seq := rec.Column(int(rec.NumCols()) - 1).(*array.Int64)
			for i := range ids.Len() {
				l := lineage{-1, -1}
				if rid.IsValid(i) {
					l.rowID = rid.Value(i)
				}
				if seq.IsValid(i) {
					l.seq = seq.Value(i)
				}
				if _, dup := out[ids.Value(i)]; dup {
					t.Fatalf("id %d read twice", ids.Value(i))
				}
				out[ids.Value(i)] = l
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func liveFiles(t *testing.T, tbl *catalog.Table) *table.FileSet {
	t.Helper()
	fs, err := table.LiveFiles(context.Background(), tbl.IO, tbl.Metadata.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// smallFiles are options that make every test file a candidate.
func (e *env) options() Options {
	minIn := 2
	return Options{
		Plan:                plan.Options{TargetFileSize: 64 << 20, MinInputFiles: minIn},
		MaxConcurrentGroups: 2,
		Commit:              e.Opts,
	}
}

func (e *env) compact(t *testing.T, opts Options) (*Report, error) {
	t.Helper()
	tbl := e.Load(t)
	p, err := PlanTable(e.Ctx, tbl, opts)
	if err != nil {
		t.Fatal(err)
	}
	return Execute(e.Ctx, e.Cat, tbl, p, opts)
}

// faultCatalog runs before ahead of each commit the compaction makes.
type faultCatalog struct {
	catalog.Catalog
	calls  atomic.Int32
	before func(n int) error
}

func (f *faultCatalog) CommitTable(ctx context.Context, t *catalog.Table, reqs []spec.Requirement, ups []spec.Update) (*catalog.Table, error) {
	n := int(f.calls.Add(1))
	if f.before != nil {
		if err := f.before(n); err != nil {
			return nil, err
		}
	}
	return f.Catalog.CommitTable(ctx, t, reqs, ups)
}

func ids(from, n int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = from + int64(i)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// readLineage reads one data file entry with lineage, in file order.
func readLineage(t *testing.T, e *env, md *spec.TableMetadata, fio fileio.FileIO, fe table.FileEntry) []lineage {
	t.Helper()
	var out []lineage
	err := scan.ReadFile(e.Ctx, fio, md, fe, table.Applicable{}, scan.Options{WithLineage: true}, func(rec arrow.RecordBatch) error {
		rid := rec.Column(int(rec.NumCols()) - 2).(*array.Int64)
		seq := rec.Column(int(rec.NumCols()) - 1).(*array.Int64)
		for i := range rid.Len() {
			l := lineage{-1, -1}
			if rid.IsValid(i) {
				l.rowID = rid.Value(i)
			}
			if seq.IsValid(i) {
				l.seq = seq.Value(i)
			}
			out = append(out, l)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// lineageOrIDs is the set of surviving ids.
func lineageOrIDs(t *testing.T, tbl *catalog.Table) map[int64]bool {
	t.Helper()
	out := map[int64]bool{}
	err := scan.Rows(context.Background(), tbl.IO, tbl.Metadata, tbl.Metadata.CurrentSnapshot(), scan.Options{},
		func(rec arrow.RecordBatch) error {
			c := rec.Column(0).(*array.Int64)
			for i := range c.Len() {
				out[c.Value(i)] = true
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
