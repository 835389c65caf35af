package table

import (
	"encoding/json"
	"path/filepath"
	"sort"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/testenv"
)

type scanRow struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	RowID     *int64 `json:"_row_id"`
	LastSeqNo *int64 `json:"_last_updated_sequence_number"`
}

// scanWithIcebergGo reads the table with the independent iceberg-go reader.
func scanWithIcebergGo(t *testing.T, e *env, lineage bool) []scanRow {
	t.Helper()
	args := []string{"scan", "--catalog-uri", "sqlite:" + filepath.Join(e.dir, "catalog.db"), "--catalog-name", "test", "--table", "ns.t"}
	if lineage {
		args = append(args, "--lineage")
	}
	out := testenv.IcebergGo(e.ctx, t, args...)
	var res struct {
		RowCount int64             `json:"row_count"`
		Rows     []json.RawMessage `json:"rows"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("iceberg-read output: %v\n%s", err, out)
	}
	rows := make([]scanRow, len(res.Rows))
	for i, r := range res.Rows {
		if err := json.Unmarshal(r, &rows[i]); err != nil {
			t.Fatalf("row %s: %v", r, err)
		}
	}
	if res.RowCount != int64(len(rows)) {
		t.Errorf("row_count %d but %d rows", res.RowCount, len(rows))
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].ID < rows[j].ID })
	return rows
}

func checkIDs(t *testing.T, what string, rows []scanRow, ids ...int64) {
	t.Helper()
	if len(rows) != len(ids) {
		t.Fatalf("%s: %d rows %+v, want ids %v", what, len(rows), rows, ids)
	}
	for i, r := range rows {
		if r.ID != ids[i] || r.Name != "n"+itoa(ids[i]) {
			t.Errorf("%s: row %d = %+v, want id %d", what, i, r, ids[i])
		}
	}
}

func TestIcebergGoReadsReplaceV2(t *testing.T) {
	testenv.Need(t, testenv.IcebergGoReader, "iceberg-go reader (scripts/build-iceberg-go-reader)")
	e, tbl := newEnv(t, 2)
	d1 := e.writeData(t, tbl, "d1", 1, 2, 3)
	d2 := e.writeData(t, tbl, "d2", 4, 5, 6)
	tbl, s1 := e.commit(t, tbl, appendFiles(d1, d2))
	pd := e.writePosDeletes(t, tbl, "pd", map[string][]int64{d1.FilePath: {0}, d2.FilePath: {1}}, false)
	tbl, _ = e.commit(t, tbl, Change{Operation: spec.OperationDelete, AddDeletes: []manifest.DataFile{pd}})
	checkIDs(t, "after delete", scanWithIcebergGo(t, e, false), 2, 3, 4, 6)

	d3 := e.writeData(t, tbl, "d3", 2, 3, 4, 6)
	e.commit(t, tbl, Change{
		Operation: spec.OperationReplace, AddData: []manifest.DataFile{d3},
		Remove:             []FileKey{PathKey(d1.FilePath), PathKey(d2.FilePath), PathKey(pd.FilePath)},
		DataSequenceNumber: ptr(s1.SequenceNumber),
	})
	checkIDs(t, "after replace", scanWithIcebergGo(t, e, false), 2, 3, 4, 6)
}

func TestIcebergGoReadsReplaceV3Lineage(t *testing.T) {
	testenv.Need(t, testenv.IcebergGoReader, "iceberg-go reader (scripts/build-iceberg-go-reader)")
	e, tbl := newEnv(t, 3)
	d1 := e.writeData(t, tbl, "d1", 1, 2, 3)
	d2 := e.writeData(t, tbl, "d2", 4, 5)
	tbl, _ = e.commit(t, tbl, appendFiles(d1, d2))
	dvs := e.writeDVs(t, tbl, "dv", map[string][]int64{d1.FilePath: {0}, d2.FilePath: {1}})
	tbl, _ = e.commit(t, tbl, Change{Operation: spec.OperationDelete, AddDeletes: dvs})
	before := scanWithIcebergGo(t, e, true)
	checkIDs(t, "after DVs", before, 2, 3, 4)

	// Compact d1 (rows 2, 3 remain) carrying their lineage.
	var dv1 manifest.DataFile
	for _, d := range dvs {
		if *d.ReferencedDataFile == d1.FilePath {
			dv1 = d
		}
	}
	d1b := e.writeRows(t, tbl, "d1b", []int64{2, 3}, []int64{1, 2}, []int64{1, 1})
	e.commit(t, tbl, Change{
		Operation: spec.OperationReplace, AddData: []manifest.DataFile{d1b},
		Remove: []FileKey{PathKey(d1.FilePath), KeyOf(&dv1)},
	})
	after := scanWithIcebergGo(t, e, true)
	checkIDs(t, "after replace", after, 2, 3, 4)
	for i := range before {
		b, a := before[i], after[i]
		if b.RowID == nil || a.RowID == nil || *b.RowID != *a.RowID || b.LastSeqNo == nil || a.LastSeqNo == nil || *b.LastSeqNo != *a.LastSeqNo {
			t.Errorf("lineage of id %d changed: before %v/%v after %v/%v", b.ID, b.RowID, b.LastSeqNo, a.RowID, a.LastSeqNo)
		}
	}
	for i, want := range []int64{1, 2, 3} { // d1 starts at row id 0, d2 at 3
		if before[i].RowID == nil || *before[i].RowID != want {
			t.Errorf("row id of id %d = %v, want %d", before[i].ID, before[i].RowID, want)
		}
	}
}
