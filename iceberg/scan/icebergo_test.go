package scan

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// goScan is the output of iceberg-read scan.
type goScan struct {
	RowCount int64             `json:"row_count"`
	Checksum string            `json:"checksum"`
	Rows     []json.RawMessage `json:"rows"`
}

func icebergGoScan(t *testing.T, e *env, lineage bool) goScan {
	t.Helper()
	args := []string{"scan", "--catalog-uri", "sqlite:" + filepath.Join(e.dir, "catalog.db"), "--catalog-name", "test", "--table", "ns.t"}
	if lineage {
		args = append(args, "--lineage")
	}
	out := testenv.IcebergGo(e.ctx, t, args...)
	var res goScan
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("iceberg-read output: %v", err)
	}
	return res
}

// compareWithIcebergGo checks that icectl's scan and iceberg-go's return
// the same rows and the same checksum.
func compareWithIcebergGo(t *testing.T, e *env, opts Options) {
	t.Helper()
	g := icebergGoScan(t, e, opts.WithLineage)
	var rows [][]byte
	err := Rows(e.ctx, e.tbl.IO, e.tbl.Metadata, e.tbl.Metadata.CurrentSnapshot(), opts, func(rec arrow.RecordBatch) error {
		enc, err := EncodeRows(rec)
		rows = append(rows, enc...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sum := ChecksumOf(rows)
	if int64(len(g.Rows)) != sum.RowCount {
		t.Errorf("iceberg-go reads %d rows, icectl %d", len(g.Rows), sum.RowCount)
	}
	for i := range min(len(g.Rows), len(rows)) {
		// The tool indents its output; compact each row back.
		var gr bytes.Buffer
		if err := json.Compact(&gr, g.Rows[i]); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gr.Bytes(), rows[i]) {
			t.Errorf("row %d: iceberg-go %s, icectl %s", i, gr.Bytes(), rows[i])
			break
		}
	}
	if g.RowCount != sum.RowCount || g.Checksum != sum.Checksum {
		t.Errorf("iceberg-go: %d rows, checksum %s; icectl: %d rows, checksum %s", g.RowCount, g.Checksum, sum.RowCount, sum.Checksum)
	}
	direct, err := Checksum(e.ctx, e.tbl.IO, e.tbl.Metadata, e.tbl.Metadata.CurrentSnapshot(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if direct != sum {
		t.Errorf("Checksum = %+v, rows hash to %+v", direct, sum)
	}
}

func TestIcebergGoAgreesV2AllDeleteKinds(t *testing.T) {
	e := newEnv(t, 2, true)
	d1 := e.data(t, rows(1, 2, 3, 4, 5)...)
	d2 := e.data(t, rows(6, 7, 8, 9, 10)...)
	d3 := e.data(t, r(11, "us"), row{id: 12, region: "us"}, r(13, "us"))
	e.commit(t, []manifest.DataFile{d1, d2, d3})
	e.commit(t, nil,
		e.posDeletes(t, "eu", false, map[string][]int64{d1.FilePath: {0}, d2.FilePath: {1, 2}}),
		e.posDeletes(t, "us", true, map[string][]int64{d3.FilePath: {2}}))
	e.commit(t, nil, e.eqDeletes(t, "eu", []int{1}, r(4, "eu"), r(6, "eu")))
	e.commit(t, []manifest.DataFile{e.data(t, rows(4, 20)...)})
	compareWithIcebergGo(t, e, Options{})
}

func TestIcebergGoAgreesV3Lineage(t *testing.T) {
	e := newEnv(t, 3, false)
	d1 := e.data(t, rows(1, 2, 3, 4)...)
	e.commit(t, []manifest.DataFile{d1})
	e.commit(t, []manifest.DataFile{e.data(t, rows(5, 6)...)})
	e.commit(t, nil, e.dv(t, "eu", d1.FilePath, 0, 2))
	compareWithIcebergGo(t, e, Options{WithLineage: true})
}

func TestIcebergGoAgreesDVAfterUpgrade(t *testing.T) {
	e := newEnv(t, 2, false)
	d1 := e.data(t, rows(1, 2, 3, 4, 5, 6)...)
	e.commit(t, []manifest.DataFile{d1})
	e.commit(t, nil, e.posDeletes(t, "eu", false, map[string][]int64{d1.FilePath: {0, 1}}))
	e.upgrade(t, 3)
	e.commit(t, nil, e.dv(t, "eu", d1.FilePath, 1, 5))
	compareWithIcebergGo(t, e, Options{})
}
