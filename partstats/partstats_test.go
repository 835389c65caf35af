package partstats_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/fixture"
	"github.com/icectl/icectl/partstats"
)

// history is a partitioned table with every kind of file: data files in
// three specs (identity(name); then identity(name), bucket[8](id); then
// bucket[8](id) alone, so a spec's fields are not a prefix of the unified
// type), position deletes (DVs at v3), equality deletes, a removed data
// file and a replaced delete file. snaps are the snapshot ids after each
// step.
type history struct {
	tb    *fixture.Table
	snaps []int64
}

func newHistory(t *testing.T, fv int) *history {
	t.Helper()
	cat := fixture.NewSQLite(t)
	name := spec.PartitionField{SourceID: 2, FieldID: 1000, Name: "name", Transform: spec.ParseTransform("identity")}
	bucket := spec.PartitionField{SourceID: 1, FieldID: 1001, Name: "id_bucket", Transform: spec.ParseTransform("bucket[8]")}
	tb := cat.Table(t, fixture.TableOptions{FormatVersion: fv, Spec: spec.PartitionSpec{Fields: []spec.PartitionField{name}}})
	h := &history{tb: tb}
	step := func(tbl *catalog.Table) *catalog.Table {
		h.snaps = append(h.snaps, *tbl.Metadata.CurrentSnapshotID)
		return tbl
	}
	a1 := tb.WriteIDs(t, nil, "a1", []any{"a"}, 1, 2, 3, 4)
	b1 := tb.WriteIDs(t, nil, "b1", []any{"b"}, 5, 6)
	tbl := step(tb.Append(t, nil, a1, b1))
	a2 := tb.WriteIDs(t, tbl, "a2", []any{"a"}, 7, 8, 9)
	tbl = step(tb.Append(t, tbl, a2))
	var del []manifest.DataFile
	if fv >= 3 {
		del = tb.WriteDVs(t, tbl, "dv1", []any{"a"}, map[string][]int64{a1.FilePath: {0, 1}})
	} else {
		del = []manifest.DataFile{tb.WritePositionDeletes(t, tbl, "pd1", []any{"a"}, map[string][]int64{a1.FilePath: {0, 1}}, true)}
	}
	tbl = step(tb.AddDeletes(t, tbl, del...))
	tbl = step(tb.AddDeletes(t, tbl, tb.WriteEqualityDeletes(t, tbl, "eq1", []any{"b"}, 5)))

	tb.Update(t, spec.AddSpec{Spec: spec.PartitionSpec{Fields: []spec.PartitionField{name, bucket}}}, spec.SetDefaultSpec{SpecID: -1})
	tbl = tb.Load(t)
	c1 := tb.WriteIDs(t, tbl, "c1", []any{"a", int32(3)}, 10, 11)
	c2 := tb.WriteIDs(t, tbl, "c2", []any{"b", int32(5)}, 12)
	tbl = step(tb.Append(t, tbl, c1, c2))
	tbl = step(tb.Commit(t, tbl, table.Change{Operation: spec.OperationDelete, Remove: []table.FileKey{table.KeyOf(&a2)}}))

	tb.Update(t, spec.AddSpec{Spec: spec.PartitionSpec{Fields: []spec.PartitionField{bucket}}}, spec.SetDefaultSpec{SpecID: -1})
	tbl = tb.Load(t)
	d1 := tb.WriteIDs(t, tbl, "d1", []any{int32(1)}, 13, 14, 15)
	tbl = step(tb.Append(t, tbl, d1))
	// Another delete of a1 replacing the first (a DV must at v3).
	var repl []manifest.DataFile
	if fv >= 3 {
		repl = tb.WriteDVs(t, tbl, "dv2", []any{"a"}, map[string][]int64{a1.FilePath: {0, 1, 2}})
	} else {
		repl = []manifest.DataFile{tb.WritePositionDeletes(t, tbl, "pd2", []any{"a"}, map[string][]int64{a1.FilePath: {2}}, true)}
	}
	for i := range repl {
		repl[i].SpecID = 0
	}
	ch := table.Change{Operation: spec.OperationDelete, AddDeletes: repl}
	if fv >= 3 {
		ch.Remove = []table.FileKey{table.KeyOf(&del[0])}
	}
	step(tb.Commit(t, tbl, ch))
	return h
}

func compute(t *testing.T, tbl *catalog.Table, id int64, full bool) *partstats.Result {
	t.Helper()
	res, err := partstats.Compute(context.Background(), tbl.IO, tbl.Metadata, id, partstats.Options{Full: full})
	if err != nil {
		t.Fatalf("compute snapshot %d (full %v): %v", id, full, err)
	}
	return res
}

// register writes and commits the file of res.
func register(t *testing.T, h *history, res *partstats.Result) *catalog.Table {
	t.Helper()
	ctx := context.Background()
	tbl := h.tb.Load(t)
	data, err := partstats.Encode(res, tbl.Metadata.FormatVersion)
	if err != nil {
		t.Fatal(err)
	}
	f, err := partstats.Write(ctx, tbl.IO, partstats.NewPath(tbl.Metadata, res.SnapshotID), res.SnapshotID, data)
	if err != nil {
		t.Fatal(err)
	}
	out, err := partstats.Commit(ctx, h.tb.Cat, tbl, f, fixture.NoWait())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// liveCounts is what the live files of snapshot id give per spec and
// partition, read the way scans read them: the counts a full computation
// must have.
func liveCounts(t *testing.T, tbl *catalog.Table, id int64) map[string][5]int64 {
	t.Helper()
	snap, _ := tbl.Metadata.SnapshotByID(id)
	fs, err := table.LiveFiles(context.Background(), tbl.IO, snap)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][5]int64{}
	add := func(e table.FileEntry) {
		df := &e.Entry.DataFile
		k := fmt.Sprint(df.SpecID, df.Partition)
		c := out[k]
		switch {
		case df.Content == manifest.ContentData:
			c[0]++
			c[1] += df.RecordCount
		case table.IsDV(df):
			c[2]++
		case df.Content == manifest.ContentPositionDeletes:
			c[3]++
		default:
			c[4]++
		}
		out[k] = c
	}
	for _, e := range fs.Data {
		add(e)
	}
	for _, e := range fs.Deletes {
		add(e)
	}
	return out
}

// rowCounts is the same from computed rows (rows of emptied partitions
// are left out: their counts are zero), with the partition projected
// back onto the row's spec.
func rowCounts(t *testing.T, md *spec.TableMetadata, ut *spec.StructType, rows []partstats.Row) map[string][5]int64 {
	t.Helper()
	out := map[string][5]int64{}
	for _, r := range rows {
		c := [5]int64{int64(r.DataFileCount), r.DataRecordCount, int64(r.DVCount), int64(r.PositionDeleteFileCount), int64(r.EqualityDeleteFileCount)}
		if c == [5]int64{} {
			continue
		}
		ps, _ := md.SpecByID(int(r.SpecID))
		tuple := make([]any, len(ps.Fields))
		for i, pf := range ps.Fields {
			for j, f := range ut.Fields {
				if f.ID == pf.FieldID {
					tuple[i] = r.Partition[j]
				}
			}
		}
		out[fmt.Sprint(r.SpecID, tuple)] = c
	}
	return out
}

// TestIncrementalEqualsFull computes the statistics of every snapshot of
// the history in full and incrementally (registering a file at some
// snapshots on the way): both give the same rows, the counts of the live
// files, and the rows read back from the written file are the rows
// computed.
func TestIncrementalEqualsFull(t *testing.T) {
	for _, fv := range []int{2, 3} {
		t.Run(fmt.Sprintf("v%d", fv), func(t *testing.T) {
			h := newHistory(t, fv)
			tbl := h.tb.Load(t)
			for i, id := range h.snaps {
				full := compute(t, tbl, id, true)
				if got, want := rowCounts(t, tbl.Metadata, full.Type, full.Rows), liveCounts(t, tbl, id); !reflect.DeepEqual(got, want) {
					t.Errorf("snapshot %d (step %d): rows count\n%v\nthe live files\n%v", id, i+1, got, want)
				}
				inc := compute(t, tbl, id, false)
				if i > 0 && inc.Base == nil {
					t.Fatalf("snapshot %d (step %d): computed in full, want incrementally", id, i+1)
				}
				if !reflect.DeepEqual(inc.Rows, full.Rows) {
					t.Errorf("snapshot %d (step %d): incremental from %d\n%s\nfull\n%s", id, i+1, inc.Base.SnapshotID, dump(inc.Rows), dump(full.Rows))
				}
				// A file at every other snapshot: the next computes on from
				// the one before, or from two snapshots back.
				if i%2 == 0 || i == 1 {
					tbl = register(t, h, inc)
					f, _ := partstats.Registered(tbl.Metadata, id)
					back, err := partstats.Read(context.Background(), tbl.IO, tbl.Metadata, f)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(back, inc.Rows) {
						t.Errorf("snapshot %d: read back\n%s\nwrote\n%s", id, dump(back), dump(inc.Rows))
					}
				}
			}
		})
	}
}

func dump(rows []partstats.Row) string {
	s := ""
	for _, r := range rows {
		s += fmt.Sprintf("  spec %d %v: data %d/%d/%d pos %d/%d dv %d eq %d/%d total %v at %v by %v\n", r.SpecID, r.Partition,
			r.DataFileCount, r.DataRecordCount, r.TotalDataFileSizeInBytes, r.PositionDeleteFileCount, r.PositionDeleteRecordCount,
			r.DVCount, r.EqualityDeleteFileCount, r.EqualityDeleteRecordCount, ptr(r.TotalRecordCount), ptr(r.LastUpdatedAt), ptr(r.LastUpdatedSnapshotID))
	}
	return s
}

func ptr(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestBadInput: a snapshot the table lacks, an unpartitioned table, and a
// previous file that is truncated, missing or of another size are
// errors naming what is wrong; --full computes past the bad file.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	h := newHistory(t, 2)
	tbl := h.tb.Load(t)
	if _, err := partstats.Compute(ctx, tbl.IO, tbl.Metadata, 42, partstats.Options{}); !errors.Is(err, partstats.ErrNoSnapshot) {
		t.Errorf("unknown snapshot: %v, want ErrNoSnapshot", err)
	}
	tbl = register(t, h, compute(t, tbl, h.snaps[2], false))
	f, _ := partstats.Registered(tbl.Metadata, h.snaps[2])
	last := h.snaps[len(h.snaps)-1]

	data := readAll(t, tbl, f.StatisticsPath)
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"truncated", data[:len(data)-9]},
		{"not parquet", make([]byte, len(data))},
		{"empty", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			writeFile(t, tbl, f.StatisticsPath, c.body)
			_, err := partstats.Compute(ctx, tbl.IO, tbl.Metadata, last, partstats.Options{})
			if !errors.Is(err, partstats.ErrBadFile) {
				t.Fatalf("compute on from a %s file: %v, want ErrBadFile", c.name, err)
			}
			if full := compute(t, tbl, last, true); full.Base != nil || len(full.Rows) == 0 {
				t.Errorf("--full: base %v, %d rows", full.Base, len(full.Rows))
			}
		})
	}

	u := fixture.NewSQLite(t).Table(t, fixture.TableOptions{Files: [][]int64{{1, 2}}})
	ut := u.Load(t)
	if _, err := partstats.Compute(ctx, ut.IO, ut.Metadata, *ut.Metadata.CurrentSnapshotID, partstats.Options{}); !errors.Is(err, partstats.ErrUnpartitioned) {
		t.Errorf("unpartitioned table: %v, want ErrUnpartitioned", err)
	}
}

// TestCommitOnMovedTable: another writer commits (a new snapshot, a
// statistics file of another snapshot) between computation and commit;
// the registration lands on the new version and keeps both.
func TestCommitOnMovedTable(t *testing.T) {
	h := newHistory(t, 3)
	tbl := h.tb.Load(t)
	id := h.snaps[len(h.snaps)-2]
	res := compute(t, tbl, id, false)
	register(t, h, compute(t, tbl, h.snaps[1], false))
	moved := h.tb.Append(t, nil, h.tb.WriteIDs(t, nil, "late", []any{int32(2)}, 99))
	data, err := partstats.Encode(res, 3)
	if err != nil {
		t.Fatal(err)
	}
	f, err := partstats.Write(context.Background(), tbl.IO, partstats.NewPath(tbl.Metadata, id), id, data)
	if err != nil {
		t.Fatal(err)
	}
	now, err := partstats.Commit(context.Background(), h.tb.Cat, tbl, f, fixture.NoWait())
	if err != nil {
		t.Fatal(err)
	}
	if *now.Metadata.CurrentSnapshotID != *moved.Metadata.CurrentSnapshotID {
		t.Errorf("current snapshot %d, the other writer's was %d", *now.Metadata.CurrentSnapshotID, *moved.Metadata.CurrentSnapshotID)
	}
	if got, ok := partstats.Registered(now.Metadata, id); !ok || !reflect.DeepEqual(got, f) {
		t.Errorf("registered %v, want %v", now.Metadata.PartitionStatistics, f)
	}
	if _, ok := partstats.Registered(now.Metadata, h.snaps[1]); !ok {
		t.Errorf("the other writer's file is gone: %v", now.Metadata.PartitionStatistics)
	}
}

func readAll(t *testing.T, tbl *catalog.Table, path string) []byte {
	t.Helper()
	f, err := tbl.IO.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, f.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, tbl *catalog.Table, path string, data []byte) {
	t.Helper()
	w, err := tbl.IO.Create(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
