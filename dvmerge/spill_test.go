package dvmerge

import (
	"bytes"
	"cmp"
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// A delete file's entry and a data file survive the spill's encoding,
// with every optional field set and with none.
func TestSpillRecordsRoundTrip(t *testing.T) {
	parts := table.NewPartitions()
	id := parts.ID(3, []any{"a\x00b", int32(7)})
	i64 := func(v int64) *int64 { return &v }
	ref, order := "s3://b/t/data/x.parquet", int32(2)
	full := table.FileEntry{Entry: manifest.Entry{Status: manifest.StatusAdded, SnapshotID: i64(9), SequenceNumber: i64(4), FileSequenceNumber: i64(5),
		DataFile: manifest.DataFile{Content: manifest.ContentPositionDeletes, FilePath: "s3://b/t/data/d\x00v.puffin", FileFormat: "PUFFIN",
			SpecID: 3, Partition: []any{"a\x00b", int32(7)}, RecordCount: 12, FileSizeInBytes: 3456, KeyMetadata: []byte{0, 1, 2},
			EqualityIDs: []int{1, -2}, SortOrderID: &order, ReferencedDataFile: &ref, ContentOffset: i64(4), ContentSizeInBytes: i64(40),
			FirstRowID: i64(100), LowerBounds: map[int][]byte{spec.FieldIDFilePath: []byte(ref)}, UpperBounds: map[int][]byte{spec.FieldIDFilePath: []byte(ref)}}}}
	bare := table.FileEntry{Entry: manifest.Entry{Status: manifest.StatusExisting, DataFile: manifest.DataFile{Content: manifest.ContentEqualityDeletes,
		FilePath: "/t/eq.parquet", FileFormat: "PARQUET", SpecID: 3, Partition: []any{"a\x00b", int32(7)}}}}
	for _, e := range []table.FileEntry{full, bare} {
		rec := appendDelete(nil, id, &e)
		got, err := decodeDelete(rec, parts.All())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, e) {
			t.Errorf("delete entry:\n got %+v\nwant %+v", got, e)
		}
		for n := range rec {
			if _, err := decodeDelete(rec[:n], parts.All()); err == nil {
				t.Errorf("a record cut to %d of %d bytes decodes", n, len(rec))
			}
		}
	}
	lf := table.LiveDataFile{Pos: 1<<32 | 5, Path: []byte("/t/data/\x00f.parquet"), Format: "PARQUET", SpecID: 3, Partition: id,
		RecordCount: 100, FileSizeInBytes: 1 << 20, DataSequenceNumber: 4, FileSequenceNumber: 6, FirstRowID: 1000,
		HasFileSequenceNumber: true, HasFirstRowID: true}
	rec := appendData(nil, &lf)
	var got table.LiveDataFile
	if err := decodeData(rec, &got); err != nil || !reflect.DeepEqual(got, lf) {
		t.Errorf("data file: %v\n got %+v\nwant %+v", err, got, lf)
	}
	if err := decodeData(rec[:len(rec)-1], &got); err == nil {
		t.Error("a cut data record decodes")
	}
}

// The byte order of partition prefixes is the plan's order: spec, then
// partition path, then key, whatever bytes the paths hold.
func TestPartitionPrefixOrder(t *testing.T) {
	md := &spec.TableMetadata{PartitionSpecs: []spec.PartitionSpec{{ID: 0}, {ID: 1, Fields: []spec.PartitionField{{SourceID: 1, FieldID: 1000, Name: "cat", Transform: spec.ParseTransform("identity")}}}}}
	var ps []table.Partition
	for _, v := range []any{"b", "a", "a\x00", "a\x00\x00", "ab", "", nil, "a b", "a\x01"} {
		ps = append(ps, table.Partition{SpecID: 1, Tuple: []any{v}, Key: table.PartitionKey(1, []any{v})})
	}
	ps = append(ps, table.Partition{SpecID: 0, Tuple: []any{}, Key: table.PartitionKey(0, []any{})})
	want := slices.Clone(ps)
	slices.SortFunc(want, func(a, b table.Partition) int {
		sa, _ := md.SpecByID(int(a.SpecID))
		sb, _ := md.SpecByID(int(b.SpecID))
		return cmp.Or(cmp.Compare(a.SpecID, b.SpecID), strings.Compare(table.PartitionPathOf(md.CurrentSchema(), sa, a.Tuple), table.PartitionPathOf(md.CurrentSchema(), sb, b.Tuple)),
			strings.Compare(a.Key, b.Key))
	})
	got := slices.Clone(ps)
	slices.SortFunc(got, func(a, b table.Partition) int { return bytes.Compare(partitionPrefix(md, a), partitionPrefix(md, b)) })
	if !reflect.DeepEqual(got, want) {
		t.Errorf("prefix order %v, want %v", got, want)
	}
	for _, p := range ps {
		pre := partitionPrefix(md, p)
		rec := append(slices.Clone(pre), kindData, 'x')
		gotPre, rest, err := skipPrefix(rec)
		if err != nil || !bytes.Equal(gotPre, pre) || string(rest) != string([]byte{kindData, 'x'}) {
			t.Errorf("skipPrefix(%q) = %q, %q, %v", rec, gotPre, rest, err)
		}
	}
}

// A spill too small for one partition writes runs to disk: the plan (as
// written out) and the merge are the same as with everything in memory.
func TestMergeSpilledRuns(t *testing.T) {
	build := func(t *testing.T) *env {
		e := newEnv(t, true)
		for _, cat := range []string{"red", "blue", "green", "a b"} {
			v2Debt(t, e, cat)
		}
		e.upgrade(t)
		return e
	}
	plan := func(t *testing.T, e *env, budget int) (string, bool) {
		opts := e.options()
		opts.spillBudget = budget
		p, err := PlanTable(e.Ctx, e.Load(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		var b strings.Builder
		if err := p.WriteJSON(e.Ctx, &b, "ns.t"); err != nil {
			t.Fatal(err)
		}
		if len(p.Partitions) != 4 || p.DataFiles != 12 {
			t.Errorf("budget %d: plan of %d partitions, %d data files", budget, len(p.Partitions), p.DataFiles)
		}
		return b.String(), p.spill.sorter.Spilled()
	}
	e := build(t)
	inMemory, spilled := plan(t, e, 0)
	if spilled {
		t.Fatal("the default budget spilled a table of 12 files")
	}
	onDisk, spilled := plan(t, e, 1)
	if !spilled {
		t.Fatal("a budget of one byte did not spill")
	}
	if onDisk != inMemory {
		t.Errorf("plans differ:\n%s\n%s", onDisk, inMemory)
	}
	if !strings.Contains(onDisk, `"data_files":["`) || !strings.Contains(onDisk, `cat=a+b`) {
		t.Errorf("plan document without its files: %s", onDisk)
	}

	before := e.Checksum(t, nil)
	opts := e.options()
	opts.spillBudget = 1
	rep := e.mustMerge(t, opts)
	e.checkSameRows(t, before)
	checkMerged(t, e)
	if rep.DVsWritten != 12 || rep.PositionDeleteFilesRetired != 12 || len(rep.Partitions) != 4 {
		t.Errorf("report = %+v", rep)
	}
}

// A global equality delete applies to the data files of partitions
// without any delete (which the spill leaves out) when it is newer than
// one of them: it is not dangling. One older than every live data file
// is, and goes.
func TestMergeGlobalEqualityOverUnspilledFiles(t *testing.T) {
	e := newEnv(t, true)
	blue := e.writeData(t, "blue", "blue", seq(100, 10)...)
	e.Append(t, nil, blue)
	e.Update(t, spec.AddSpec{Spec: spec.PartitionSpec{ID: 1}}, spec.SetDefaultSpec{SpecID: 1})
	e.AddDeletes(t, nil, e.writeEq(t, "all", 1, []any{}, 101, 102))
	e.Update(t, spec.SetDefaultSpec{SpecID: 0})
	red := e.writeData(t, "red", "red", seq(0, 10)...)
	e.Append(t, nil, red)
	e.AddDeletes(t, nil, e.writePos(t, "red-pos", red, map[string][]int64{red.FilePath: {9}}, false))
	before := e.Checksum(t, nil)
	e.upgrade(t)

	rep := e.mustMerge(t, e.options())
	e.checkSameRows(t, before)
	if rep.DanglingDeletesRemoved != 0 || rep.DVsWritten != 1 {
		t.Errorf("report = %+v", rep)
	}
	if n := countKind(liveFiles(t, e), false, manifest.ContentEqualityDeletes); n != 1 {
		t.Fatalf("%d equality-delete files live, want the global one", n)
	}

	// Once blue is gone, the global delete is older than every live data
	// file: dangling.
	e.Commit(t, nil, table.Change{Operation: spec.OperationDelete, Remove: []table.FileKey{table.KeyOf(&blue)}})
	p, err := PlanTable(context.Background(), e.Load(t), e.options())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if len(p.Dangling) != 1 || !strings.Contains(p.Dangling[0], "all-eq") {
		t.Errorf("dangling = %v, want the global equality delete", p.Dangling)
	}
}

// A closed plan has released its spill: executing it or writing it out is
// an error, not a run on nothing.
func TestClosedPlan(t *testing.T) {
	e := newEnv(t, true)
	v2Debt(t, e, "red")
	e.upgrade(t)
	tbl := e.Load(t)
	p, err := PlanTable(e.Ctx, tbl, e.options())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Execute(e.Ctx, e.Cat.Catalog, tbl, p, e.options()); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Execute of a closed plan: %v", err)
	}
	if err := p.WriteJSON(e.Ctx, &strings.Builder{}, "ns.t"); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("WriteJSON of a closed plan: %v", err)
	}
	if e.Load(t).Metadata.CurrentSnapshotID == nil || *e.Load(t).Metadata.CurrentSnapshotID != *tbl.Metadata.CurrentSnapshotID {
		t.Error("executing a closed plan committed")
	}
}
