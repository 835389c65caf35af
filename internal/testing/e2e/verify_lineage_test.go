package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/compact"
	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/cli"
	"github.com/icectl/icectl/plan"
	"github.com/icectl/icectl/upgrade"
)

// lineageTable is a v3 table of 40 rows in two data files (eu, us), no
// deletes, every row with lineage; it returns the writer and the snapshot
// after the upgrade.
func lineageTable(t *testing.T, b backend, cat catalog.Catalog, name string) (*writer, *spec.Snapshot) {
	t.Helper()
	w := newWriter(t, b, cat, name, 2)
	w.commit(t, []manifest.DataFile{w.data(t, mkRows("eu", span(0, 20)...)), w.data(t, mkRows("us", span(20, 40)...))})
	if _, err := upgrade.Run(context.Background(), cat, w.tbl, upgrade.Options{To: 3, AssignRowIDs: true, Commit: noWait()}); err != nil {
		t.Fatal(err)
	}
	w.tbl = loadIdent(t, cat, b.ns, name)
	return w, w.tbl.Metadata.CurrentSnapshot()
}

// rewriteAll replaces every live data file by a copy, lineage carried,
// whose column col is set by fn, and commits a replace, as a compaction
// that garbles a column would.
func rewriteAll(t *testing.T, w *writer, col string, fn func(arrow.Array) arrow.Array) *spec.Snapshot {
	t.Helper()
	ctx := context.Background()
	md := w.tbl.Metadata
	fs, err := table.LiveFiles(ctx, w.tbl.IO, md.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	s := datafile.SchemaWithLineage(md.CurrentSchema())
	as, err := datafile.ArrowSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	ci := as.FieldIndices(col)[0]
	ch := table.Change{Operation: spec.OperationReplace}
	for _, d := range fs.Data {
		var recs []arrow.RecordBatch
		err = scan.ReadFile(ctx, w.tbl.IO, md, d, table.Applicable{}, scan.Options{WithLineage: true}, func(rec arrow.RecordBatch) error {
			cols := slices.Clone(rec.Columns())
			cols[ci] = fn(cols[ci])
			recs = append(recs, array.NewRecordBatch(as, cols, rec.NumRows()))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		df, err := datafile.WriteFile(ctx, w.tbl.IO, w.path(".parquet"), s, nil, recs...)
		if err != nil {
			t.Fatal(err)
		}
		df.Partition = slices.Clone(d.Entry.DataFile.Partition)
		ch.AddData = append(ch.AddData, df)
		ch.Remove = append(ch.Remove, d.Key())
	}
	tbl, snap, err := table.CommitChange(ctx, w.cat, w.tbl, ch, w.opts)
	if err != nil {
		t.Fatal(err)
	}
	w.tbl = tbl
	return snap
}

func nullsLike(a arrow.Array) arrow.Array {
	b := array.NewBuilder(memory.DefaultAllocator, a.DataType())
	defer b.Release()
	b.AppendNulls(a.Len())
	return b.NewArray()
}

// runLineage runs `icectl verify lineage` with extra arguments.
func runLineage(t *testing.T, b backend, name string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &cli.Factory{Out: &out, ErrOut: &errOut, Getenv: func(string) string { return "" }, Output: "text"}
	args = append([]string{"verify", "lineage", b.ns + "." + name}, args...)
	args = append(args, "--catalog-uri", b.cfg.URI, "--catalog-name", b.cfg.Name, "--warehouse", b.cfg.Warehouse)
	code = cli.Run(context.Background(), f, args)
	if code != 0 && strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("verify lineage: stderr is not one line: %q", errOut.String())
	}
	return code, out.String(), errOut.String()
}

type lineageJSON struct {
	OK          bool  `json:"ok"`
	RewriteOnly bool  `json:"rewrite_only"`
	RowsFrom    int64 `json:"rows_from"`
	RowsTo      int64 `json:"rows_to"`
	Matched     int64 `json:"matched"`
	OnlyFrom    int64 `json:"rows_only_in_from"`
	OnlyTo      int64 `json:"rows_only_in_to"`
	NullFrom    int64 `json:"null_keys_from"`
	NullTo      int64 `json:"null_keys_to"`
	Violations  int64 `json:"violations"`
	First       []struct {
		Kind string `json:"kind"`
	} `json:"first_violations"`
}

func lineageReport(t *testing.T, stdout string) lineageJSON {
	t.Helper()
	var r lineageJSON
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	return r
}

// A rewrite that turned every key to NULL matched nothing: verify lineage
// must fail, not print "lineage kept".
func TestVerifyLineageNullKeysProveNothing(t *testing.T) {
	t.Parallel()
	b := sqliteBackend(t)
	cat := b.open(t)
	w, start := lineageTable(t, b, cat, "nk")
	after := rewriteAll(t, w, "name", nullsLike)
	from, to := fmt.Sprint(start.SnapshotID), fmt.Sprint(after.SnapshotID)

	code, out, errOut := runLineage(t, b, "nk", "--from", from, "--to", to, "--key", "name")
	if code != cli.ExitFailure || strings.Contains(out, "lineage kept") || !strings.Contains(errOut, "no row matched") ||
		!strings.Contains(errOut, "NULL key") || !strings.Contains(out, "only in --from") {
		t.Errorf("NULL keys: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runLineage(t, b, "nk", "--from", from, "--to", to, "--key", "name", "--output", "json")
	r := lineageReport(t, out)
	// Rows 3, 7, ... had a NULL name before: 10 of 40.
	if code != cli.ExitFailure || r.OK || r.Matched != 0 || r.RowsFrom != 40 || r.RowsTo != 40 || r.OnlyFrom != 40 || r.OnlyTo != 40 ||
		r.NullFrom != 10 || r.NullTo != 40 || !r.RewriteOnly || r.First[0].Kind != "nothing-matched" || r.First[1].Kind != "rows-differ" {
		t.Errorf("NULL keys, json: exit %d %+v", code, r)
	}

	// By id every row matches, lineage is kept, but a rewrite changed
	// values: that is a violation too.
	code, out, _ = runLineage(t, b, "nk", "--from", from, "--to", to, "--key", "id", "--output", "json")
	r = lineageReport(t, out)
	if code != cli.ExitFailure || r.Matched != 40 || r.OnlyFrom != 0 || r.OnlyTo != 0 || r.Violations != 60 || r.First[0].Kind != "values-changed" {
		t.Errorf("values changed by a rewrite: exit %d %+v", code, r)
	}
}

// A compaction keeps every row: matched all, none only on one side. An
// append between is not a rewrite: rows only in --to are counted, not a
// violation.
func TestVerifyLineageCountsRowsOnEachSide(t *testing.T) {
	t.Parallel()
	b := sqliteBackend(t)
	cat := b.open(t)
	w, start := lineageTable(t, b, cat, "cnt")
	ctx := context.Background()
	opts := compact.Options{Plan: plan.Options{RewriteAll: true}, Commit: noWait()}
	p, err := compact.PlanTable(ctx, w.tbl, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := compact.Execute(ctx, cat, w.tbl, p, opts); err != nil {
		t.Fatal(err)
	}
	w.tbl = loadIdent(t, cat, b.ns, "cnt")
	from := fmt.Sprint(start.SnapshotID)
	code, out, errOut := runLineage(t, b, "cnt", "--from", from, "--key", "id", "--output", "json")
	r := lineageReport(t, out)
	if code != 0 || !r.OK || !r.RewriteOnly || r.Matched != 40 || r.OnlyFrom != 0 || r.OnlyTo != 0 {
		t.Errorf("after compaction: exit %d %+v %s", code, r, errOut)
	}

	w.commit(t, []manifest.DataFile{w.data(t, mkRows("eu", span(40, 45)...))})
	code, out, errOut = runLineage(t, b, "cnt", "--from", from, "--key", "id")
	if code != 0 || !strings.Contains(out, "lineage kept") || !strings.Contains(out, "not only rewrites") {
		t.Errorf("after an append: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runLineage(t, b, "cnt", "--from", from, "--key", "id", "--output", "json")
	if r := lineageReport(t, out); code != 0 || r.RewriteOnly || r.Matched != 40 || r.OnlyTo != 5 || r.OnlyFrom != 0 {
		t.Errorf("after an append, json: exit %d %+v", code, r)
	}

	// A replace that lost a file's rows, from the append on.
	appended := w.tbl.Metadata.CurrentSnapshot()
	fs, err := table.LiveFiles(ctx, w.tbl.IO, appended)
	if err != nil {
		t.Fatal(err)
	}
	lost := fs.Data[0]
	if _, _, err := table.CommitChange(ctx, cat, w.tbl, table.Change{Operation: spec.OperationReplace, Remove: []table.FileKey{lost.Key()}}, w.opts); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runLineage(t, b, "cnt", "--from", fmt.Sprint(appended.SnapshotID), "--key", "id", "--output", "json")
	r = lineageReport(t, out)
	if code != cli.ExitFailure || !r.RewriteOnly || r.OnlyFrom != lost.Entry.DataFile.RecordCount || r.OnlyTo != 0 || r.First[0].Kind != "rows-differ" ||
		!strings.Contains(errOut, "broken") {
		t.Errorf("after a lossy replace: exit %d %+v %s", code, r, errOut)
	}
}

// Without --from the error says what it is and where to find one.
func TestVerifyLineageWithoutFrom(t *testing.T) {
	t.Parallel()
	b := sqliteBackend(t)
	cat := b.open(t)
	lineageTable(t, b, cat, "nf")
	code, _, errOut := runLineage(t, b, "nf", "--key", "id")
	if code != cli.ExitUsage || !strings.Contains(errOut, "--from SNAPSHOT") || !strings.Contains(errOut, "icectl snapshots "+b.ns+".nf") {
		t.Errorf("exit %d, %s", code, errOut)
	}
}
