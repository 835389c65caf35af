package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/scan"
)

// icectlScan loads b.ns.name afresh from cat and scans its current
// snapshot with icectl: the row encodings (sorted) and their checksum,
// which it also checks against scan.Checksum.
func icectlScan(t *testing.T, b backend, cat catalog.Catalog, name string, lineage bool) ([][]byte, scan.ChecksumResult) {
	t.Helper()
	ctx := context.Background()
	ns := b.ns
	tbl, err := cat.LoadTable(ctx, catalog.Ident{Namespace: []string{ns}, Name: name})
	if err != nil {
		t.Fatalf("icectl: load %s.%s: %v", ns, name, err)
	}
	if !strings.HasPrefix(tbl.Metadata.Location, b.scheme) {
		t.Errorf("table %s.%s is at %s, want a %s location", ns, name, tbl.Metadata.Location, b.scheme)
	}
	snap := tbl.Metadata.CurrentSnapshot()
	if snap == nil {
		t.Fatalf("icectl: %s.%s has no current snapshot", ns, name)
	}
	opts := scan.Options{WithLineage: lineage}
	var rows [][]byte
	err = scan.Rows(ctx, tbl.IO, tbl.Metadata, snap, opts, func(rec arrow.RecordBatch) error {
		enc, err := scan.EncodeRows(rec)
		rows = append(rows, enc...)
		return err
	})
	if err != nil {
		t.Fatalf("icectl: scan %s.%s: %v", ns, name, err)
	}
	sum := scan.ChecksumOf(rows)
	direct, err := scan.Checksum(ctx, tbl.IO, tbl.Metadata, snap, opts)
	if err != nil {
		t.Fatalf("icectl: checksum %s.%s: %v", ns, name, err)
	}
	if direct != sum {
		t.Errorf("icectl: scan.Checksum = %+v, its rows hash to %+v", direct, sum)
	}
	return rows, sum
}

// agree checks that iceberg-go's scan g and icectl's rows are the same
// rows with the same count and checksum.
func agree(t *testing.T, g goScan, rows [][]byte, sum scan.ChecksumResult) {
	t.Helper()
	if g.RowCount != sum.RowCount || g.Checksum != sum.Checksum {
		t.Errorf("iceberg-go: %d rows, checksum %s; icectl: %d rows, checksum %s",
			g.RowCount, g.Checksum, sum.RowCount, sum.Checksum)
	}
	if d := sameRows(g.Rows, rows); d != "" {
		t.Error(d)
	}
}
