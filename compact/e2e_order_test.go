package compact_test

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/testenv"
	"github.com/icectl/icectl/plan/where"
)

// orderFixture is a v3 table of many small files in three partitions, each
// file's ts spread over five days, with position deletes: what a sorted
// or z-ordered rewrite cuts into range files.
func orderFixture(t *testing.T) *fixture {
	f := newFixture(t, 3, 26, nil)
	f.must(f.appendFiles(f.partitions(3), 30, 200))
	f.must(f.deleteIDs(delDV, f.pickLive(40)))
	return f
}

// orderRow is the columns a sorted rewrite is checked by.
type orderRow struct {
	id     int64
	ts     int64
	amount *float64
}

// fileRows reads every live data file's rows in file order.
func fileRows(t *testing.T, f *fixture) map[string][]orderRow {
	t.Helper()
	tbl := f.reload()
	out := map[string][]orderRow{}
	for _, fe := range mustLive(t, f).Data {
		var rows []orderRow
		err := scan.ReadFile(f.ctx, tbl.IO, tbl.Metadata, fe, table.Applicable{}, scan.Options{}, func(rec arrow.RecordBatch) error {
			ids := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
			ts := rec.Column(rec.Schema().FieldIndices("ts")[0]).(*array.Timestamp)
			am := rec.Column(rec.Schema().FieldIndices("amount")[0]).(*array.Float64)
			for i := range ids.Len() {
				r := orderRow{id: ids.Value(i), ts: int64(ts.Value(i))}
				if !am.IsNull(i) {
					r.amount = new(float64)
					*r.amount = am.Value(i)
				}
				rows = append(rows, r)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		out[fe.Entry.DataFile.FilePath] = rows
	}
	return out
}

// skippable counts the live data files a predicate skips by their column
// bounds, as a reader's metrics evaluation does.
func skippable(t *testing.T, f *fixture, pred string) (skipped, files int) {
	t.Helper()
	tbl := f.reload()
	flt, err := where.Compile(pred, tbl.Metadata.CurrentSchema())
	if err != nil {
		t.Fatal(err)
	}
	for _, fe := range mustLive(t, f).Data {
		files++
		if !flt.MatchMetrics(&fe.Entry.DataFile) {
			skipped++
		}
	}
	return skipped, files
}

// TestCompactExplicitSortOrder: --sort='amount DESC NULLS FIRST, id'
// rewrites every file into files each in that order, the table's sort
// order untouched and the files recording the unsorted order 0 (the
// order is none of the table's), rows and lineage as before.
func TestCompactExplicitSortOrder(t *testing.T) {
	bin := testenv.Icectl(t)
	f := orderFixture(t)
	before := snapshotBefore(t, f, true)
	flags := []string{"--rewrite-all", "--target-file-size", "4KiB", "--sort=amount DESC NULLS FIRST, id"}
	type plannedGroup struct {
		ID       string `json:"id"`
		Expected int    `json:"expected_output_files"`
	}
	var planned struct {
		Groups []plannedGroup `json:"groups"`
	}
	if err := json.Unmarshal(compactJSON(t, bin, f, append(flags, "--dry-run")...), &planned); err != nil {
		t.Fatal(err)
	}
	var done struct {
		Groups []struct {
			ID    string `json:"id"`
			Files int    `json:"output_files"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(compactJSON(t, bin, f, flags...), &done); err != nil {
		t.Fatal(err)
	}
	checkUnchanged(t, f, before, true)
	// Each group is one run, cut into the files the plan expects, as
	// Spark's sort strategy (one fewer when the deleted rows took a
	// file's worth), not into files of the write max size.
	for _, g := range done.Groups {
		i := slices.IndexFunc(planned.Groups, func(p plannedGroup) bool { return p.ID == g.ID })
		if i < 0 {
			t.Fatalf("group %s was not planned", g.ID)
		}
		if want := planned.Groups[i].Expected; g.Files != want && g.Files != want-1 || want < 3 {
			t.Errorf("group %s: %d output files, the plan expects %d", g.ID, g.Files, want)
		}
	}
	tbl := f.reload()
	if tbl.Metadata.DefaultSortOrderID != 0 || len(tbl.Metadata.SortOrders) != 1 {
		t.Errorf("the table's sort orders changed: default %d, %d orders", tbl.Metadata.DefaultSortOrderID, len(tbl.Metadata.SortOrders))
	}
	byFile := fileRows(t, f)
	if len(byFile) < 6 {
		t.Fatalf("%d output files: too few to show files cut by range", len(byFile))
	}
	order := func(a, b orderRow) int {
		switch {
		case a.amount == nil && b.amount != nil:
			return -1
		case a.amount != nil && b.amount == nil:
			return 1
		case a.amount != nil && b.amount != nil:
			if c := cmp.Compare(*b.amount, *a.amount); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.id, b.id)
	}
	for path, rows := range byFile {
		if !slices.IsSortedFunc(rows, order) {
			t.Errorf("%s is not sorted by amount DESC NULLS FIRST, id", path)
		}
	}
	for _, fe := range mustLive(t, f).Data {
		if id := fe.Entry.DataFile.SortOrderID; id == nil || *id != 0 {
			t.Errorf("%s records sort order %v, want 0 (unsorted, as Spark): it is sorted by no order of the table", fe.Entry.DataFile.FilePath, id)
		}
	}
}

// zorderFixture is an unpartitioned v3 table (id, x, y) of many small
// files, x and y spread over 0 to 2^20 in every file, so that a predicate
// on either skips no file, with DVs.
func zorderFixture(t *testing.T) *fixture {
	s := spec.Schema{IdentifierFieldIDs: []int{fID}, Fields: []spec.NestedField{
		{ID: fID, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "x", Type: spec.LongType{}, Required: true},
		{ID: 3, Name: "y", Type: spec.IntType{}},
	}}
	f := newFixtureOf(t, t.TempDir(), 3, 27, nil, s, spec.PartitionSpec{})
	as, err := datafile.ArrowSchema(&s)
	if err != nil {
		t.Fatal(err)
	}
	var add []manifest.DataFile
	for range 20 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, as)
		for range 300 {
			id := f.next
			f.next++
			f.live[id] = true
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).(*array.Int64Builder).Append(f.rng.Int64N(1 << 20))
			if id%13 == 0 {
				b.Field(2).AppendNull()
			} else {
				b.Field(2).(*array.Int32Builder).Append(f.rng.Int32N(1<<20) - 1<<19)
			}
		}
		rec := b.NewRecordBatch()
		b.Release()
		df, err := datafile.WriteFile(f.ctx, f.tbl.IO, f.fileName(".parquet"), &s, f.tbl.Metadata.Properties, rec)
		rec.Release()
		f.must(err)
		df.Partition = []any{}
		add = append(add, df)
	}
	f.must(f.commit(table.Change{Operation: spec.OperationAppend, AddData: add}))
	f.must(f.deleteIDs(delDV, f.pickLive(50)))
	return f
}

// xyRow is a row of zorderFixture.
type xyRow struct {
	x int64
	y *int32
}

// zkey is the z-order key of (x, y) as Iceberg's Spark zorder computes
// it, written here apart from icectl's: each value's 8 order-preserving
// bytes (sign bit flipped; null as zeros), bits interleaved x first.
func zkey(r xyRow) []byte {
	var cols [2][8]byte
	binary.BigEndian.PutUint64(cols[0][:], uint64(r.x)^(1<<63))
	if r.y != nil {
		binary.BigEndian.PutUint64(cols[1][:], uint64(int64(*r.y))^(1<<63))
	}
	key := make([]byte, 16)
	for bit := range 128 {
		src := cols[bit%2][bit/2/8] >> (7 - bit/2%8) & 1
		key[bit/8] |= src << (7 - bit%8)
	}
	return key
}

// TestCompactZOrder: --zorder x,y rewrites every file into files each in
// z-order, rows, deletes and lineage as before, no sort order id
// recorded; a predicate on either column skips more files by their
// bounds after than before.
func TestCompactZOrder(t *testing.T) {
	bin := testenv.Icectl(t)
	f := zorderFixture(t)
	preds := []string{"x < 200000", "y >= 300000", "x < 300000 AND y < -200000"}
	var skipBefore []int
	for _, p := range preds {
		n, files := skippable(t, f, p)
		t.Logf("before: %q skips %d of %d files", p, n, files)
		skipBefore = append(skipBefore, n)
	}
	before := snapshotBefore(t, f, true)
	compactJSON(t, bin, f, "--rewrite-all", "--target-file-size", "4KiB", "--zorder", "x,y")
	checkUnchanged(t, f, before, true)
	checkZOrdered(t, f)
	for i, p := range preds {
		n, files := skippable(t, f, p)
		t.Logf("after: %q skips %d of %d files", p, n, files)
		if n <= skipBefore[i] {
			t.Errorf("%q skips %d files after z-ordering, %d before: no pruning gain", p, n, skipBefore[i])
		}
	}
}

// checkZOrdered checks that every live data file of f is in the z-order
// of x, y, records the unsorted order 0 (as Spark), and that there are enough of them to
// show files cut by range.
func checkZOrdered(t *testing.T, f *fixture) {
	t.Helper()
	tbl := f.reload()
	files := 0
	for _, fe := range mustLive(t, f).Data {
		files++
		df := fe.Entry.DataFile
		if df.SortOrderID == nil || *df.SortOrderID != 0 {
			t.Errorf("%s records sort order %v, want 0 (unsorted, as Spark): it is z-ordered", df.FilePath, df.SortOrderID)
		}
		var rows []xyRow
		err := scan.ReadFile(f.ctx, tbl.IO, tbl.Metadata, fe, table.Applicable{}, scan.Options{}, func(rec arrow.RecordBatch) error {
			xs := rec.Column(1).(*array.Int64)
			ys := rec.Column(2).(*array.Int32)
			for i := range xs.Len() {
				r := xyRow{x: xs.Value(i)}
				if !ys.IsNull(i) {
					r.y = new(int32)
					*r.y = ys.Value(i)
				}
				rows = append(rows, r)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.IsSortedFunc(rows, func(a, b xyRow) int { return bytes.Compare(zkey(a), zkey(b)) }) {
			t.Errorf("%s is not in z-order of x, y", df.FilePath)
		}
	}
	if files < 6 {
		t.Fatalf("%d output files: too few to show files cut by range", files)
	}
}

// TestCompactZOrderSharded: a sharded run z-orders as the plan says: the
// plan records the columns, the worker orders by them.
func TestCompactZOrderSharded(t *testing.T) {
	f := zorderFixture(t)
	before := snapshotBefore(t, f, true)
	planPath, stage := filepath.Join(t.TempDir(), "plan.json"), t.TempDir()
	common := cliArgs(f)
	for _, args := range [][]string{
		{"--dry-run", "--plan-out", planPath, "--rewrite-all", "--target-file-size", "4KiB", "--zorder", "x,y"},
		{"--plan", planPath, "--shard", "0/1", "--stage", stage},
		{"--commit", stage},
	} {
		if _, stderr, code := f.run(t, nil, append(append([]string{"compact", f.tableName()}, args...), common...)...); code != 0 {
			t.Fatalf("compact %v: exit %d: %s", args, code, stderr)
		}
		if args[0] == "--dry-run" {
			data, err := os.ReadFile(planPath)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				ZOrder []string `json:"zorder"`
			}
			if err := json.Unmarshal(data, &doc); err != nil || !slices.Equal(doc.ZOrder, []string{"x", "y"}) {
				t.Errorf("the plan records z-order %q (%v), want x, y", doc.ZOrder, err)
			}
		}
	}
	checkUnchanged(t, f, before, true)
	checkZOrdered(t, f)
}

// TestCompactOrderBadInput: a bad --sort or --zorder is a usage error
// (exit 2, one line) that changes no byte of the catalog or warehouse.
func TestCompactOrderBadInput(t *testing.T) {
	bin := testenv.Icectl(t)
	f := orderFixture(t)
	f.cat.Close()
	hashes := hashTree(t, f.dir)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sort=region ASC"}, `no column "region"`},
		{[]string{"--sort=amount UP"}, "want `column [ASC|DESC]"},
		{[]string{"--sort=amount,,id"}, "empty term"},
		{[]string{"--sort=bucket(4, id)"}, "transform"},
		{[]string{"--zorder", "ts,nope"}, `no column "nope"`},
		{[]string{"--zorder", "ts DESC"}, "no direction"},
		{[]string{"--zorder", "ts,ts"}, "given twice"},
		{[]string{"--zorder", "ts", "--sort=amount"}, "exclusive"},
		{[]string{"--zorder", "ts", "--sort"}, "exclusive"},
		{[]string{"--sort="}, "empty"},
		{[]string{"--zorder", " "}, "empty"},
		{[]string{"--where", "nope = 1"}, "nope"}, // refused before the claim, which would commit
	} {
		args := append(append([]string{"compact", f.tableName()}, c.args...), cliArgs(f)...)
		cmd := exec.Command(bin, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		msg := strings.TrimSpace(stderr.String())
		switch {
		case code != 2:
			t.Errorf("%v: exit %d (err %v), want 2; stderr %q", c.args, code, err, msg)
		case strings.Contains(msg, "\n"):
			t.Errorf("%v: error is more than one line:\n%s", c.args, msg)
		case !strings.Contains(msg, c.want):
			t.Errorf("%v: error %q does not say %q", c.args, msg, c.want)
		case len(out) != 0:
			t.Errorf("%v: printed %q on stdout", c.args, out)
		}
		if after := hashTree(t, f.dir); !maps.Equal(hashes, after) {
			for p, h := range after {
				if hashes[p] != h {
					t.Errorf("%v: changed or created %s", c.args, p)
				}
			}
			hashes = after
		}
	}
}
