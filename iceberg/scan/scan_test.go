package scan

import (
	"errors"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/puffin"
	"github.com/icectl/icectl/iceberg/table"
)

func TestNoSnapshotNoRows(t *testing.T) {
	e := newEnv(t, 2, false)
	wantIDs(t, e.scanIDs(t, Options{}))
}

func TestPartitionScopedPositionDeletes(t *testing.T) {
	e := newEnv(t, 2, true)
	d1 := e.data(t, rows(1, 2, 3, 4, 5)...)
	d2 := e.data(t, rows(6, 7, 8, 9, 10)...)
	d3 := e.data(t, r(11, "us"), r(12, "us"), r(13, "us"))
	e.commit(t, []manifest.DataFile{d1, d2, d3})
	// One file covers two data files of partition eu; its row for d3 (a
	// file of another partition) must not apply.
	pd := e.posDeletes(t, "eu", false, map[string][]int64{d1.FilePath: {0, 2}, d2.FilePath: {4}, d3.FilePath: {0}})
	e.commit(t, nil, pd)
	wantIDs(t, e.scanIDs(t, Options{}), 2, 4, 5, 6, 7, 8, 9, 11, 12, 13)
}

func TestFileScopedPositionDeletes(t *testing.T) {
	e := newEnv(t, 2, false)
	d1 := e.data(t, rows(1, 2, 3)...)
	d2 := e.data(t, rows(4, 5, 6)...)
	e.commit(t, []manifest.DataFile{d1, d2})
	e.commit(t, nil, e.posDeletes(t, "eu", true, map[string][]int64{d2.FilePath: {1}}))
	wantIDs(t, e.scanIDs(t, Options{}), 1, 2, 3, 4, 6)
}

func TestDeletesInSameCommitAsData(t *testing.T) {
	e := newEnv(t, 2, false)
	d1 := e.data(t, rows(1, 2, 3)...)
	// Same sequence number: the position delete applies (<=), the
	// equality delete does not (strictly less).
	pd := e.posDeletes(t, "eu", true, map[string][]int64{d1.FilePath: {0}})
	eq := e.eqDeletes(t, "eu", []int{1}, r(2, "eu"))
	e.commit(t, []manifest.DataFile{d1}, pd, eq)
	wantIDs(t, e.scanIDs(t, Options{}), 2, 3)
}

func TestEqualityDeleteSequenceRules(t *testing.T) {
	e := newEnv(t, 2, false)
	e.commit(t, []manifest.DataFile{e.data(t, rows(1, 2, 3)...)})
	e.commit(t, nil, e.eqDeletes(t, "eu", []int{1}, r(3, "eu"), r(99, "eu")))
	// Data newer than the equality delete keeps its id 3.
	e.commit(t, []manifest.DataFile{e.data(t, rows(3, 4)...)})
	wantIDs(t, e.scanIDs(t, Options{}), 1, 2, 3, 4)
}

func TestEqualityDeleteNullMatchesNull(t *testing.T) {
	e := newEnv(t, 2, false)
	noName := row{id: 2, region: "eu"}
	noName3 := row{id: 3, region: "eu"}
	e.commit(t, []manifest.DataFile{e.data(t, r(1, "eu"), noName, noName3, r(4, "eu"), r(5, "eu"))})
	e.commit(t, nil, e.eqDeletes(t, "eu", []int{2}, row{region: "eu"}, r(5, "eu")))
	wantIDs(t, e.scanIDs(t, Options{}), 1, 4)
}

func TestEqualityDeleteOnTwoColumnsProjected(t *testing.T) {
	e := newEnv(t, 2, false)
	e.commit(t, []manifest.DataFile{e.data(t, rows(1, 2, 3)...)})
	// (id, name) = (2, "n2") matches; (3, "x") does not.
	x := "x"
	e.commit(t, nil, e.eqDeletes(t, "eu", []int{1, 2}, r(2, "eu"), row{id: 3, name: &x, region: "eu"}))
	// The projection leaves name out: it must still be read for the match.
	s := testSchema()
	s.Fields = s.Fields[:1]
	var ids []int64
	err := Rows(e.ctx, e.tbl.IO, e.tbl.Metadata, e.tbl.Metadata.CurrentSnapshot(), Options{Schema: &s}, func(rec arrow.RecordBatch) error {
		if rec.NumCols() != 1 {
			t.Errorf("got %d columns, want the 1 projected", rec.NumCols())
		}
		ids = append(ids, rec.Column(0).(*array.Int64).Int64Values()...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantIDs(t, ids, 1, 3)
}

func TestEqualityDeletesByPartition(t *testing.T) {
	e := newEnv(t, 2, true)
	e.commit(t, []manifest.DataFile{e.data(t, rows(1, 2)...), e.data(t, r(1, "us"), r(2, "us"))})
	// A partitioned equality delete applies to its own partition only.
	e.commit(t, nil, e.eqDeletes(t, "us", []int{1}, r(1, "us")))
	var got []string
	err := Rows(e.ctx, e.tbl.IO, e.tbl.Metadata, e.tbl.Metadata.CurrentSnapshot(), Options{}, func(rec arrow.RecordBatch) error {
		ids, regions := rec.Column(0).(*array.Int64), rec.Column(2).(*array.String)
		for i := range ids.Len() {
			got = append(got, regions.Value(i)+":"+string(rune('0'+ids.Value(i))))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []string{"eu:1", "eu:2", "us:2"}; !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
}

func TestGlobalEqualityDeletesUnpartitioned(t *testing.T) {
	e := newEnv(t, 2, false)
	e.commit(t, []manifest.DataFile{e.data(t, rows(1, 2)...), e.data(t, r(1, "us"), r(3, "us"))})
	e.commit(t, nil, e.eqDeletes(t, "eu", []int{1}, r(1, "eu")))
	wantIDs(t, e.scanIDs(t, Options{}), 2, 3)
}

func TestDVSuppressesPositionDeletes(t *testing.T) {
	e := newEnv(t, 2, false)
	d1 := e.data(t, rows(1, 2, 3, 4, 5, 6)...)
	e.commit(t, []manifest.DataFile{d1})
	e.commit(t, nil, e.posDeletes(t, "eu", false, map[string][]int64{d1.FilePath: {0, 1}}))
	wantIDs(t, e.scanIDs(t, Options{}), 3, 4, 5, 6)
	e.upgrade(t, 3)
	// The DV deliberately omits position 0: once a DV applies, readers
	// ignore the file's v2 position deletes, so id 1 comes back.
	e.commit(t, nil, e.dv(t, "eu", d1.FilePath, 1, 5))
	wantIDs(t, e.scanIDs(t, Options{}), 1, 3, 4, 5)
}

func TestDVCardinalityMismatchIsAnError(t *testing.T) {
	e := newEnv(t, 3, false)
	d1 := e.data(t, rows(1, 2, 3)...)
	e.commit(t, []manifest.DataFile{d1})
	dv := e.dv(t, "eu", d1.FilePath, 1)
	dv.RecordCount = 2
	e.commit(t, nil, dv)
	err := Rows(e.ctx, e.tbl.IO, e.tbl.Metadata, e.tbl.Metadata.CurrentSnapshot(), Options{}, func(arrow.RecordBatch) error { return nil })
	if !errors.Is(err, puffin.ErrDVCardinality) {
		t.Fatalf("err = %v, want one wrapping ErrDVCardinality", err)
	}
}

func TestLineageV3(t *testing.T) {
	e := newEnv(t, 3, false)
	d1 := e.data(t, rows(1, 2, 3)...)
	s1 := e.commit(t, []manifest.DataFile{d1})
	s2 := e.commit(t, []manifest.DataFile{e.data(t, rows(4, 5)...)})
	e.commit(t, nil, e.dv(t, "eu", d1.FilePath, 1))
	type lineage struct{ rowID, seq int64 }
	got := map[int64]lineage{}
	err := Rows(e.ctx, e.tbl.IO, e.tbl.Metadata, e.tbl.Metadata.CurrentSnapshot(), Options{WithLineage: true}, func(rec arrow.RecordBatch) error {
		s := rec.Schema()
		if n := s.NumFields(); s.Field(n-2).Name != "_row_id" || s.Field(n-1).Name != "_last_updated_sequence_number" {
			t.Fatalf("schema %s lacks the lineage columns", s)
		}
		ids := rec.Column(0).(*array.Int64)
		rid, seq := rec.Column(3).(*array.Int64), rec.Column(4).(*array.Int64)
		for i := range ids.Len() {
			got[ids.Value(i)] = lineage{rid.Value(i), seq.Value(i)}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	first1, first2 := *s1.FirstRowID, *s2.FirstRowID
	want := map[int64]lineage{
		1: {first1, s1.SequenceNumber}, 3: {first1 + 2, s1.SequenceNumber},
		4: {first2, s2.SequenceNumber}, 5: {first2 + 1, s2.SequenceNumber},
	}
	if len(got) != len(want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("id %d: lineage %+v, want %+v", id, got[id], w)
		}
	}
}

func TestFileAndPosColumns(t *testing.T) {
	e := newEnv(t, 2, true)
	d1 := e.data(t, rows(10, 11, 12, 13)...)
	d2 := e.data(t, r(20, "us"), r(21, "us"))
	e.commit(t, []manifest.DataFile{d1, d2})
	e.commit(t, nil, e.posDeletes(t, "eu", false, map[string][]int64{d1.FilePath: {1}}))
	type loc struct {
		file string
		pos  int64
	}
	got := map[int64]loc{}
	err := Rows(e.ctx, e.tbl.IO, e.tbl.Metadata, e.tbl.Metadata.CurrentSnapshot(), Options{WithFile: true, WithPos: true}, func(rec arrow.RecordBatch) error {
		ids := rec.Column(0).(*array.Int64)
		files, pos := rec.Column(3).(*array.String), rec.Column(4).(*array.Int64)
		for i := range ids.Len() {
			got[ids.Value(i)] = loc{files.Value(i), pos.Value(i)}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]loc{10: {d1.FilePath, 0}, 12: {d1.FilePath, 2}, 13: {d1.FilePath, 3}, 20: {d2.FilePath, 0}, 21: {d2.FilePath, 1}}
	if len(got) != len(want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("id %d at %+v, want %+v", id, got[id], w)
		}
	}
}

func TestOrderDoesNotDependOnConcurrency(t *testing.T) {
	e := newEnv(t, 2, false)
	var files []manifest.DataFile
	var dels = map[string][]int64{}
	for f := range 12 {
		var ids []int64
		for i := range 5 {
			ids = append(ids, int64(f*10+i))
		}
		d := e.data(t, rows(ids...)...)
		files = append(files, d)
		dels[d.FilePath] = []int64{int64(f % 5)}
	}
	e.commit(t, files[:6])
	e.commit(t, files[6:])
	e.commit(t, nil, e.posDeletes(t, "eu", false, dels))
	one := e.scanIDs(t, Options{Concurrency: 1, BatchSize: 2})
	four := e.scanIDs(t, Options{Concurrency: 4, BatchSize: 2})
	if len(one) != 12*4 {
		t.Fatalf("%d rows survive, want %d", len(one), 12*4)
	}
	if !slices.Equal(one, four) {
		t.Errorf("order differs with concurrency:\n1: %v\n4: %v", one, four)
	}
}

func TestScanStopsOnCallbackError(t *testing.T) {
	e := newEnv(t, 2, false)
	e.commit(t, []manifest.DataFile{e.data(t, rows(1)...), e.data(t, rows(2)...), e.data(t, rows(3)...)})
	stop := errors.New("stop")
	calls := 0
	err := Rows(e.ctx, e.tbl.IO, e.tbl.Metadata, e.tbl.Metadata.CurrentSnapshot(), Options{Concurrency: 3}, func(arrow.RecordBatch) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("err = %v after %d calls, want stop after 1", err, calls)
	}
}

func TestReadFileAppliesGivenDeletes(t *testing.T) {
	e := newEnv(t, 2, false)
	d1 := e.data(t, rows(1, 2, 3, 4)...)
	e.commit(t, []manifest.DataFile{d1})
	e.commit(t, nil, e.posDeletes(t, "eu", false, map[string][]int64{d1.FilePath: {3}}))
	e.commit(t, nil, e.eqDeletes(t, "eu", []int{1}, r(1, "eu")))
	fs, err := table.LiveFiles(e.ctx, e.tbl.IO, e.tbl.Metadata.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	ix := table.DeletesForTable(e.tbl.Metadata, fs)
	var ids []int64
	err = ReadFile(e.ctx, e.tbl.IO, e.tbl.Metadata, fs.Data[0], ix.For(fs.Data[0]), Options{}, func(rec arrow.RecordBatch) error {
		ids = append(ids, rec.Column(0).(*array.Int64).Int64Values()...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantIDs(t, ids, 2, 3)
	// With no deletes given, every row is returned.
	ids = nil
	err = ReadFile(e.ctx, e.tbl.IO, e.tbl.Metadata, fs.Data[0], table.Applicable{}, Options{}, func(rec arrow.RecordBatch) error {
		ids = append(ids, rec.Column(0).(*array.Int64).Int64Values()...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantIDs(t, ids, 1, 2, 3, 4)
}

func TestRecordCountMismatchIsAnError(t *testing.T) {
	e := newEnv(t, 2, false)
	d1 := e.data(t, rows(1, 2)...)
	d1.RecordCount = 3
	e.commit(t, []manifest.DataFile{d1})
	err := Rows(e.ctx, e.tbl.IO, e.tbl.Metadata, e.tbl.Metadata.CurrentSnapshot(), Options{}, func(arrow.RecordBatch) error { return nil })
	if err == nil {
		t.Fatal("a data file with fewer rows than its manifest entry read without error")
	}
}
