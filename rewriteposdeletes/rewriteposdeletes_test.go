package rewriteposdeletes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/fixture"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// TestMain ends the reader process the tests share (testenv.IcebergGo).
func TestMain(m *testing.M) { os.Exit(testenv.Finish(m.Run())) }

const testCatalog = "test"

// env is a v2 table partitioned by truncate(100, id), with history.
type env struct {
	*fixture.Table
	data map[int64][]manifest.DataFile // by partition
	// late is a data file of partition 0 appended after a delete file
	// naming it was committed: that delete does not apply to it.
	late manifest.DataFile
	n    int
}

func newEnv(t *testing.T, version int) *env {
	t.Helper()
	ps := spec.PartitionSpec{Fields: []spec.PartitionField{{SourceID: 1, FieldID: 1000, Name: "id_trunc", Transform: spec.ParseTransform("truncate[100]")}}}
	c := fixture.NewSQLite(t, fixture.WithName(testCatalog))
	tb := c.Table(t, fixture.TableOptions{FormatVersion: version, Spec: ps})
	return &env{Table: tb, data: map[int64][]manifest.DataFile{}}
}

func part(p int64) []any { return []any{p} }

func (e *env) name(prefix string) string { e.n++; return fmt.Sprintf("%s-%03d", prefix, e.n) }

// posDeletes commits one position-delete file of partition p.
func (e *env) posDeletes(t *testing.T, p int64, deletes map[string][]int64, scoped bool) manifest.DataFile {
	t.Helper()
	df := e.WritePositionDeletes(t, nil, e.name("del"), part(p), deletes, scoped)
	e.AddDeletes(t, nil, df)
	return df
}

// build writes 3 partitions of 3 data files of 20 rows, then per
// partition 6 small delete files, file- and partition-scoped, one
// naming the data file "late" before it is appended; then removes one
// data file of partition 0, leaving its deletes dangling.
func build(t *testing.T, e *env) (removed manifest.DataFile) {
	t.Helper()
	for _, p := range []int64{0, 100, 200} {
		for f := range 3 {
			ids := make([]int64, 20)
			for i := range ids {
				ids[i] = p + int64(f*20+i)
			}
			df := e.WriteIDs(t, nil, e.name("data"), part(p), ids...)
			e.Append(t, nil, df)
			e.data[p] = append(e.data[p], df)
		}
	}
	// The late file: a delete naming it is committed first.
	e.late = e.WriteIDs(t, nil, "late", part(0), 60, 61, 62, 63)
	e.posDeletes(t, 0, map[string][]int64{e.late.FilePath: {0, 1}, e.data[0][0].FilePath: {19}}, false)
	e.Append(t, nil, e.late)
	for _, p := range []int64{0, 100, 200} {
		d := e.data[p]
		e.posDeletes(t, p, map[string][]int64{d[0].FilePath: {1, 2}}, true)
		e.posDeletes(t, p, map[string][]int64{d[1].FilePath: {3}}, true)
		e.posDeletes(t, p, map[string][]int64{d[0].FilePath: {2, 4}, d[1].FilePath: {5}, d[2].FilePath: {6}}, false)
		e.posDeletes(t, p, map[string][]int64{d[2].FilePath: {7, 8}}, true)
		e.posDeletes(t, p, map[string][]int64{d[1].FilePath: {9}, d[2].FilePath: {10}}, false)
	}
	e.posDeletes(t, 0, map[string][]int64{e.late.FilePath: {3}}, true)
	// Remove data file 1 of partition 0: its scoped delete is wholly
	// dangling, the partition-scoped ones naming it partly.
	removed = e.data[0][1]
	e.Commit(t, nil, table.Change{Operation: spec.OperationDelete, Remove: []table.FileKey{table.KeyOf(&removed)}})
	return removed
}

type goScan struct {
	RowCount int64  `json:"row_count"`
	Checksum string `json:"checksum"`
}

// checkRows asserts that icectl's scan and the iceberg-go reader read want.
func (e *env) checkRows(t *testing.T, want scan.ChecksumResult) {
	t.Helper()
	if got := e.Checksum(t, nil); got != want {
		t.Errorf("icectl reads %+v, want %+v", got, want)
	}
	out := testenv.IcebergGo(e.Ctx, t, "scan", "--catalog-uri", e.Cat.URI, "--catalog-name", testCatalog, "--table", e.ID.String())
	var g goScan
	if err := json.Unmarshal(out, &g); err != nil {
		t.Fatal(err)
	}
	if g.RowCount != want.RowCount || g.Checksum != want.Checksum {
		t.Errorf("iceberg-go reads %d rows checksum %s, want %+v", g.RowCount, g.Checksum, want)
	}
}

func posDeleteFiles(fs *table.FileSet) []table.FileEntry {
	var out []table.FileEntry
	for _, d := range fs.Deletes {
		if d.Entry.DataFile.Content == manifest.ContentPositionDeletes {
			out = append(out, d)
		}
	}
	return out
}

// checkNoDangling asserts that every position of every live
// position-delete file names a live data file the file applies to.
func (e *env) checkNoDangling(t *testing.T) {
	t.Helper()
	tbl := e.Load(t)
	fs := e.LiveFiles(t, tbl)
	p, err := PlanFiles(tbl.Metadata, fs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range posDeleteFiles(fs) {
		got, err := table.ReadPositionDeletes(e.Ctx, tbl.IO, &d.Entry.DataFile, nil)
		if err != nil {
			t.Fatal(err)
		}
		for path := range got {
			if !p.applies[d.Key()][path] {
				t.Errorf("%s holds positions of %s, which it does not apply to", d.Entry.DataFile.FilePath, path)
			}
		}
	}
}

func (e *env) run(t *testing.T, cat catalog.Catalog) (*Result, error) {
	t.Helper()
	return Run(e.Ctx, cat, e.Load(t), Options{Commit: fixture.NoWait()})
}

func TestRewritePositionDeletes(t *testing.T) {
	e := newEnv(t, 2)
	removed := build(t, e)
	before := e.Checksum(t, nil)
	e.checkRows(t, before)
	fsBefore := e.LiveFiles(t, nil)
	nBefore := len(posDeleteFiles(fsBefore))

	tbl := e.Load(t)
	p, err := PlanRewrite(e.Ctx, tbl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Dangling) != 1 || len(p.Groups) != 3 {
		t.Fatalf("plan = %+v, want 1 dangling file and 3 groups", p)
	}
	if again, _ := PlanRewrite(e.Ctx, e.Load(t), Options{}); again.Rewritten != p.Rewritten {
		t.Error("planning twice differs")
	}

	res, err := e.run(t, e.Cat.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Committed || res.Added != 3 || res.Removed != nBefore {
		t.Errorf("result = committed %v, added %d, removed %d; want 3 added, %d removed", res.Committed, res.Added, res.Removed, nBefore)
	}
	e.checkRows(t, before)
	fs := e.LiveFiles(t, nil)
	after := posDeleteFiles(fs)
	if len(after) != 3 {
		t.Errorf("%d position-delete files after, want 3 (one per partition)", len(after))
	}
	e.checkNoDangling(t)

	// Each output carries the largest data sequence number of its inputs,
	// and names no position of the removed or the late file.
	maxSeq := map[string]int64{}
	for _, d := range posDeleteFiles(fsBefore) {
		k := table.PartitionKey(d.Entry.DataFile.SpecID, d.Entry.DataFile.Partition)
		maxSeq[k] = max(maxSeq[k], d.DataSequenceNumber())
	}
	tbl = e.Load(t)
	for _, d := range after {
		k := table.PartitionKey(d.Entry.DataFile.SpecID, d.Entry.DataFile.Partition)
		if d.DataSequenceNumber() != maxSeq[k] {
			t.Errorf("%s has data sequence number %d, want %d", d.Entry.DataFile.FilePath, d.DataSequenceNumber(), maxSeq[k])
		}
		got, err := table.ReadPositionDeletes(e.Ctx, tbl.IO, &d.Entry.DataFile, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got[removed.FilePath] != nil {
			t.Errorf("%s keeps the dangling deletes of %s", d.Entry.DataFile.FilePath, removed.FilePath)
		}
		if bm := got[e.late.FilePath]; bm != nil && bm.Contains(0) {
			t.Errorf("%s deletes position 0 of the late file, which no input deleted", d.Entry.DataFile.FilePath)
		}
	}

	// A second run has nothing to do and commits nothing.
	snap := e.Load(t).Metadata.CurrentSnapshot().SnapshotID
	res, err = e.run(t, e.Cat.Catalog)
	if err != nil || res.Committed || res.Worthwhile() {
		t.Errorf("second run: %+v, %v", res, err)
	}
	if got := e.Load(t).Metadata.CurrentSnapshot().SnapshotID; got != snap {
		t.Error("second run committed")
	}
}

// A writer deletes more rows while the rewrite runs: the rewrite is
// rebuilt on its commit, whose deletes stay.
func TestConcurrentDeletesKept(t *testing.T) {
	e := newEnv(t, 2)
	build(t, e)
	var want scan.ChecksumResult
	res, err := e.run(t, &fixture.CommitHook{Catalog: e.Cat.Catalog, Hook: func() {
		d := e.data[100]
		e.posDeletes(t, 100, map[string][]int64{d[0].FilePath: {11, 12}, d[2].FilePath: {13}}, false)
		want = e.Checksum(t, nil)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Committed {
		t.Fatal("nothing committed")
	}
	e.checkRows(t, want)
	e.checkNoDangling(t)
}

// A writer removes a delete file the rewrite merges, with its data
// file: the rewrite is refused, never committed
// without it, and the table reads as the writer left it.
func TestConcurrentRemovalRefused(t *testing.T) {
	e := newEnv(t, 2)
	build(t, e)
	before := parquetFiles(t, e.Cat.Dir)
	var want scan.ChecksumResult
	var snap int64
	_, err := e.run(t, &fixture.CommitHook{Catalog: e.Cat.Catalog, Hook: func() {
		fs := e.LiveFiles(t, nil)
		var victim manifest.DataFile
		for _, d := range posDeleteFiles(fs) {
			if p := d.Entry.DataFile.Partition; len(p) == 1 && p[0] == int64(200) && d.Entry.DataFile.ReferencedDataFile != nil {
				victim = d.Entry.DataFile
			}
		}
		// Drop its data file with it, as an overwrite does.
		var data manifest.DataFile
		for _, d := range e.data[200] {
			if d.FilePath == *victim.ReferencedDataFile {
				data = d
			}
		}
		e.Commit(t, nil, table.Change{Operation: spec.OperationDelete, Remove: []table.FileKey{table.KeyOf(&victim), table.KeyOf(&data)}})
		want = e.Checksum(t, nil)
		snap = e.Load(t).Metadata.CurrentSnapshot().SnapshotID
	}})
	if !errors.Is(err, table.ErrFileGone) {
		t.Fatalf("err = %v, want ErrFileGone", err)
	}
	if got := e.Load(t).Metadata.CurrentSnapshot().SnapshotID; got != snap {
		t.Error("the refused rewrite committed")
	}
	// The refused run's outputs are gone (the writer wrote no Parquet file).
	for p := range parquetFiles(t, e.Cat.Dir) {
		if !before[p] {
			t.Errorf("the refused rewrite left %s", p)
		}
	}
	e.checkRows(t, want)
}

// parquetFiles are the Parquet files under dir.
func parquetFiles(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			out[p] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestV3Refused(t *testing.T) {
	e := newEnv(t, 3)
	_, err := e.run(t, e.Cat.Catalog)
	if !errors.Is(err, ErrFormatV3) {
		t.Fatalf("err = %v, want ErrFormatV3", err)
	}
}

// TestIcebergGoTable: a v2 table iceberg-go wrote (its deletes are
// partition-scoped position-delete files over several data files), with
// a file-scoped position-delete file per data file added: the rewrite
// leaves one file per partition, and both readers read the same rows.
func TestIcebergGoTable(t *testing.T) {
	for _, partitioned := range []bool{false, true} {
		t.Run(map[bool]string{false: "unpartitioned", true: "by day"}[partitioned], func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			uri := "sqlite:///" + filepath.Join(dir, "catalog.db")
			args := []string{"write-fixture", "--catalog-uri", uri, "--warehouse", "file://" + dir, "--catalog-name", testCatalog,
				"--table", "ns.t", "--format-version", "2", "--rows", "300", "--delete-every", "7"}
			if partitioned {
				args = append(args, "--partitioned")
			}
			testenv.IcebergGo(ctx, t, args...)
			c := fixture.NewSQLite(t, fixture.InDir(dir), fixture.WithName(testCatalog), fixture.WithWarehouse("file://"+dir))
			e := &env{Table: c.Existing(catalog.Ident{Namespace: []string{"ns"}, Name: "t"})}
			fs := e.LiveFiles(t, nil)
			if len(posDeleteFiles(fs)) == 0 {
				t.Fatal("iceberg-go wrote no position-delete file")
			}
			for _, d := range fs.Data {
				df := d.Entry.DataFile
				del := e.WritePositionDeletes(t, nil, e.name("scoped"), df.Partition, map[string][]int64{df.FilePath: {df.RecordCount - 1}}, true)
				del.SpecID = df.SpecID
				e.AddDeletes(t, nil, del)
			}
			before := e.Checksum(t, nil)
			e.checkRows(t, before)
			res, err := Run(ctx, e.Cat.Catalog, e.Load(t), Options{MinInputFiles: 2, Commit: fixture.NoWait()})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Committed || res.Added == 0 {
				t.Fatalf("result = %+v", res)
			}
			e.checkRows(t, before)
			e.checkNoDangling(t)
			parts := map[string]int{}
			for _, d := range posDeleteFiles(e.LiveFiles(t, nil)) {
				parts[table.PartitionKey(d.Entry.DataFile.SpecID, d.Entry.DataFile.Partition)]++
			}
			for k, n := range parts {
				if n != 1 {
					t.Errorf("partition %q has %d position-delete files after, want 1", k, n)
				}
			}
		})
	}
}
