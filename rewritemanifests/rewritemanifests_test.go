package rewritemanifests

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/fixture"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// env is a test table, ns.t in a SQLite catalog (internal/testing/fixture).
type env struct {
	*fixture.Table
	n int
}

// newTable creates ns.t in format v with manifest merging off, so every
// append leaves one more manifest.
func newTable(t *testing.T, v int) (*env, *catalog.Table) {
	t.Helper()
	c := fixture.NewSQLite(t)
	tb := c.Table(t, fixture.TableOptions{FormatVersion: v, Props: map[string]string{table.PropManifestMergeEnabled: "false"}})
	return &env{Table: tb}, tb.Load(t)
}

func opts() commit.Options { return fixture.NoWait() }

// appendRows commits one Parquet file of ids as its own snapshot, through
// cat (the catalog or a wrapper of it).
func (e *env) appendRows(t *testing.T, cat catalog.Catalog, tbl *catalog.Table, ids ...int64) *catalog.Table {
	t.Helper()
	e.n++
	df := e.WriteIDs(t, tbl, fmt.Sprintf("f%d", e.n), nil, ids...)
	res, _, err := table.CommitChange(e.Ctx, cat, tbl, table.Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{df}}, opts())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func dataManifests(t *testing.T, e *env, tbl *catalog.Table) int {
	t.Helper()
	mfs, err := table.ManifestFiles(e.Ctx, tbl.IO, tbl.Metadata.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range mfs {
		if mf.Content == manifest.ManifestContentData {
			n++
		}
	}
	return n
}

type row struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	RowID     *int64 `json:"_row_id"`
	LastSeqNo *int64 `json:"_last_updated_sequence_number"`
}

func scan(t *testing.T, e *env) []row {
	t.Helper()
	out := testenv.IcebergGo(e.Ctx, t, "scan", "--catalog-uri", "sqlite:"+filepath.Join(e.Cat.Dir, "catalog.db"), "--catalog-name", "test", "--table", "ns.t", "--lineage")
	var res struct {
		Rows []row `json:"rows"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	sort.Slice(res.Rows, func(i, j int) bool { return res.Rows[i].ID < res.Rows[j].ID })
	return res.Rows
}

// tree maps every file under dir to its size and modification time.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		out[p] = fmt.Sprint(st.Size(), st.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRewriteManifestsV3KeepsRowsAndLineage(t *testing.T) {
	testenv.Need(t, testenv.IcebergGoReader, "iceberg-go reader (scripts/build-iceberg-go-reader)")
	e, tbl := newTable(t, 3)
	for i := int64(0); i < 12; i++ {
		tbl = e.appendRows(t, e.Cat.Catalog, tbl, 3*i, 3*i+1, 3*i+2)
	}
	if n := dataManifests(t, e, tbl); n != 12 {
		t.Fatalf("%d data manifests before, want 12", n)
	}
	before := scan(t, e)

	files := tree(t, e.Cat.Dir)
	p, err := PlanRewrite(e.Ctx, tbl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Selected != 12 || p.Planned != 1 || p.Entries != 12 || !p.Worthwhile() {
		t.Fatalf("plan %+v, want 12 manifests of 12 entries into 1", p)
	}
	if !reflect.DeepEqual(files, tree(t, e.Cat.Dir)) {
		t.Fatal("planning changed files")
	}

	res, err := Run(e.Ctx, e.Cat.Catalog, tbl, Options{Commit: opts()})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Committed || res.Snapshot.Summary["operation"] != spec.OperationReplace {
		t.Fatalf("result %+v", res)
	}
	tbl = e.Load(t)
	if n := dataManifests(t, e, tbl); n != p.Planned {
		t.Errorf("%d data manifests after, planned %d", n, p.Planned)
	}
	after := scan(t, e)
	if !reflect.DeepEqual(before, after) {
		t.Errorf("rows or lineage changed:\nbefore %+v\nafter  %+v", before, after)
	}
	for _, r := range after {
		if r.RowID == nil || r.LastSeqNo == nil {
			t.Fatalf("row %d has no lineage", r.ID)
		}
	}
	// A second run has nothing to do and commits nothing.
	res, err = Run(e.Ctx, e.Cat.Catalog, tbl, Options{Commit: opts()})
	if err != nil || res.Committed {
		t.Errorf("second run committed=%v, %v", res != nil && res.Committed, err)
	}
}

func TestRewriteManifestsTargetSizeAndSpecID(t *testing.T) {
	e, tbl := newTable(t, 2)
	for i := int64(0); i < 6; i++ {
		tbl = e.appendRows(t, e.Cat.Catalog, tbl, i)
	}
	if _, err := PlanRewrite(e.Ctx, tbl, Options{SpecID: ptr(int32(7))}); err == nil {
		t.Error("unknown spec id accepted")
	}
	// A tiny target gives one entry per manifest: nothing to gain.
	p, err := PlanRewrite(e.Ctx, tbl, Options{TargetSize: 1})
	if err != nil || p.Worthwhile() || p.Planned != 6 {
		t.Errorf("plan with a 1-byte target %+v, %v", p, err)
	}
	res, err := Run(e.Ctx, e.Cat.Catalog, tbl, Options{SpecID: ptr(int32(0)), Commit: opts()})
	if err != nil || !res.Committed {
		t.Fatalf("run %+v, %v", res, err)
	}
	if n := dataManifests(t, e, e.Load(t)); n != 1 {
		t.Errorf("%d manifests, want 1", n)
	}
}

// racing wraps the catalog so an append lands just before the rewrite's
// first commit: the rewrite is rebuilt on it and loses nothing.
type racing struct {
	catalog.Catalog
	race func()
	done bool
}

func (r *racing) CommitTable(ctx context.Context, t *catalog.Table, reqs []spec.Requirement, ups []spec.Update) (*catalog.Table, error) {
	if !r.done {
		r.done = true
		r.race()
	}
	return r.Catalog.CommitTable(ctx, t, reqs, ups)
}

func TestRewriteManifestsRacingAppend(t *testing.T) {
	testenv.Need(t, testenv.IcebergGoReader, "iceberg-go reader (scripts/build-iceberg-go-reader)")
	e, tbl := newTable(t, 3)
	for i := int64(0); i < 5; i++ {
		tbl = e.appendRows(t, e.Cat.Catalog, tbl, i)
	}
	before := scan(t, e)
	rc := &racing{Catalog: e.Cat.Catalog, race: func() { e.appendRows(t, e.Cat.Catalog, e.Load(t), 100) }}
	res, err := Run(e.Ctx, rc, tbl, Options{Commit: opts()})
	if err != nil || !res.Committed {
		t.Fatalf("run %+v, %v", res, err)
	}
	after := scan(t, e)
	if len(after) != len(before)+1 || after[len(after)-1].ID != 100 {
		t.Fatalf("rows after the race %+v", after)
	}
	if !reflect.DeepEqual(before, after[:len(before)]) {
		t.Errorf("rows or lineage changed:\nbefore %+v\nafter  %+v", before, after)
	}
	if n := dataManifests(t, e, e.Load(t)); n != 1 {
		t.Errorf("%d manifests after the rewrite, want 1 (the racing append's included)", n)
	}
}

func ptr[T any](v T) *T { return &v }

// A manifest left with only DELETED entries (its files removed by an
// earlier snapshot) is dropped by the rewrite and counted as replaced,
// even when regrouping alone would not pay.
func TestRewriteManifestsDropsManifestsWithoutLiveFiles(t *testing.T) {
	e, tbl := newTable(t, 2)
	tbl = e.appendRows(t, e.Cat.Catalog, tbl, 1)
	gone := e.Load(t)
	fs, err := table.LiveFiles(e.Ctx, gone.IO, gone.Metadata.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	tbl = e.appendRows(t, e.Cat.Catalog, tbl, 2)
	if tbl, _, err = table.CommitChange(e.Ctx, e.Cat.Catalog, tbl, table.Change{Operation: spec.OperationDelete, Remove: []table.FileKey{fs.Data[0].Key()}}, opts()); err != nil {
		t.Fatal(err)
	}
	p, err := PlanRewrite(e.Ctx, tbl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Selected != 1 || p.Planned != 1 || p.Dropped != 1 || !p.Worthwhile() {
		t.Fatalf("plan %+v: want one manifest kept as it is and one dropped", p)
	}
	res, err := Run(e.Ctx, e.Cat.Catalog, tbl, Options{Commit: opts()})
	if err != nil || !res.Committed {
		t.Fatalf("run %+v, %v", res, err)
	}
	if s := res.Snapshot.Summary; s["manifests-replaced"] != "2" || s["manifests-created"] != "1" || s["manifests-kept"] != "0" || s["total-records"] != "1" {
		t.Errorf("summary %v", s)
	}
	if n := dataManifests(t, e, e.Load(t)); n != 1 {
		t.Errorf("%d data manifests, want 1", n)
	}
}
