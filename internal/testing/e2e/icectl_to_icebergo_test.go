package e2e

import (
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
)

// A table icectl commits through each catalog scans in iceberg-go, through
// the same catalog, to the rows icectl reads and to the rows the test wrote
// minus the ones it deleted.

func TestIcectlToIcebergGoSQLite(t *testing.T) {
	t.Parallel()
	icectlToIcebergGo(t, sqliteBackend)
}

func TestIcectlToIcebergGoPostgres(t *testing.T) {
	t.Parallel()
	icectlToIcebergGo(t, postgresBackend)
}

func TestIcectlToIcebergGoREST(t *testing.T) {
	t.Parallel()
	icectlToIcebergGo(t, restBackend)
}

func icectlToIcebergGo(t *testing.T, mk func(*testing.T) backend) {
	t.Run("v2", func(t *testing.T) {
		readerBin(t)
		b := mk(t)
		cat := b.open(t)
		const name = "icectl_v2"
		w := newWriter(t, b, cat, name, 2)
		m := &model{}

		eu1, us1 := mkRows("eu", span(0, 10)...), mkRows("us", span(10, 20)...)
		d1, d2 := w.data(t, eu1), w.data(t, us1)
		seq := w.commit(t, []manifest.DataFile{d1, d2})
		m.add(d1.FilePath, eu1, seq, 0)
		m.add(d2.FilePath, us1, seq, 0)

		eu2 := mkRows("eu", span(20, 30)...)
		d3 := w.data(t, eu2)
		m.add(d3.FilePath, eu2, w.commit(t, []manifest.DataFile{d3}), 0)

		// One partition-scoped position-delete file over two data files.
		w.commit(t, nil, w.positionDeletes(t, []any{"eu"}, map[string][]int64{d1.FilePath: {0, 3}, d3.FilePath: {1, 9}}))
		m.deletePositions(t, d1.FilePath, 0, 3)
		m.deletePositions(t, d3.FilePath, 1, 9)

		// Equality deletes on id, in both partitions.
		seq = w.commit(t, nil, w.equalityDeletes(t, []any{"us"}, 12, 15), w.equalityDeletes(t, []any{"eu"}, 25))
		m.deleteEqual("us", seq, 12, 15)
		m.deleteEqual("eu", seq, 25)

		// A later file with an id deleted by equality before: the delete's
		// sequence number is not above the file's, so the row stays.
		reborn := mkRows("eu", 25, 30, 31, 32)
		other := "reborn"
		reborn[0].name = &other
		d4 := w.data(t, reborn)
		m.add(d4.FilePath, reborn, w.commit(t, []manifest.DataFile{d4}), 0)

		g := goScanTable(t, b, name, false)
		rows, sum := icectlScan(t, b, cat, name, false)
		agree(t, g, rows, sum)
		checkExpected(t, g.Rows, m.live(false))
	})

	t.Run("v3", func(t *testing.T) {
		readerBin(t)
		b := mk(t)
		cat := b.open(t)
		const name = "icectl_v3"
		w := newWriter(t, b, cat, name, 3)
		m := &model{}

		// One data file per snapshot, so each file's first row id is the
		// number of rows added before it.
		eu := mkRows("eu", span(0, 10)...)
		d1 := w.data(t, eu)
		m.add(d1.FilePath, eu, w.commit(t, []manifest.DataFile{d1}), 0)
		us := mkRows("us", span(10, 20)...)
		d2 := w.data(t, us)
		m.add(d2.FilePath, us, w.commit(t, []manifest.DataFile{d2}), 10)

		w.commit(t, nil, w.dv(t, d1, 2, 5, 7))
		m.deletePositions(t, d1.FilePath, 2, 5, 7)

		seq := w.commit(t, nil, w.equalityDeletes(t, []any{"us"}, 11, 19))
		m.deleteEqual("us", seq, 11, 19)

		eu2 := mkRows("eu", span(20, 25)...)
		d3 := w.data(t, eu2)
		m.add(d3.FilePath, eu2, w.commit(t, []manifest.DataFile{d3}), 20)

		if next := w.tbl.Metadata.NextRowID; next == nil || *next != 25 {
			t.Errorf("next-row-id = %v, want 25", next)
		}
		for _, lineage := range []bool{false, true} {
			g := goScanTable(t, b, name, lineage)
			rows, sum := icectlScan(t, b, cat, name, lineage)
			agree(t, g, rows, sum)
			checkExpected(t, g.Rows, m.live(lineage))
		}
	})
}
