package interop

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"

	"github.com/icectl/icectl/internal/testing/testenv"
	"github.com/icectl/icectl/interop/icebergread"
)

// TestScanAppliesDeletesSQLite checks the scan path of the reader on tables
// written by iceberg-go itself in a SQLite SQL catalog: v2 position deletes
// and v3 deletion vectors are applied, and v3 rows carry lineage. (Tables
// written by icectl's catalog are scanned by the main module's tests.)
func TestScanAppliesDeletesSQLite(t *testing.T) {
	for _, version := range []string{"2", "3"} {
		t.Run("v"+version, func(t *testing.T) {
			dbPath := filepath.Join(t.TempDir(), "catalog.db")
			scanAfterDelete(t, version, "sqliteshim", "file:"+dbPath, sqlcat.SQLite, "sqlite:"+dbPath)
		})
	}
}

// TestScanAppliesDeletesPostgres does the same through a PostgreSQL catalog.
func TestScanAppliesDeletesPostgres(t *testing.T) {
	url := testenv.Need(t, testenv.PostgresURL, "PostgreSQL database")
	for _, version := range []string{"2", "3"} {
		t.Run("v"+version, func(t *testing.T) {
			scanAfterDelete(t, version, "pgx", url, sqlcat.Postgres, url)
		})
	}
}

func scanAfterDelete(t *testing.T, version, driver, dsn string, dialect sqlcat.SupportedDialect, uri string) {
	ctx := context.Background()
	dir := t.TempDir()
	// A catalog name per test keeps runs apart in a shared database.
	catName := fmt.Sprintf("interop_%s_%x", strings.NewReplacer("/", "_", "#", "_").Replace(t.Name()), rand.Uint64())
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cat, err := sqlcat.NewCatalog(catName, db, dialect, iceberg.Properties{"warehouse": "file://" + dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.CreateNamespace(ctx, catalog.ToIdentifier("ns"), nil); err != nil {
		t.Fatal(err)
	}
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String},
	)
	tbl, err := cat.CreateTable(ctx, catalog.ToIdentifier("ns", "t"), schema,
		catalog.WithLocation("file://"+filepath.Join(dir, "t")),
		catalog.WithProperties(iceberg.Properties{"format-version": version, "write.delete.mode": "merge-on-read"}))
	if err != nil {
		t.Fatal(err)
	}
	arrowSchema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrowSchema)
	defer b.Release()
	for i := range 100 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("n%d", i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	at := array.NewTableFromRecords(arrowSchema, []arrow.RecordBatch{rec})
	defer at.Release()
	if tbl, err = tbl.AppendTable(ctx, at, 1000, nil); err != nil {
		t.Fatal(err)
	}
	if tbl, err = tbl.Delete(ctx, iceberg.LessThan(iceberg.Reference("id"), int64(10)), nil); err != nil {
		t.Fatal(err)
	}
	// The point is a scan that must apply delete files: make sure the
	// delete wrote some rather than rewriting the data file.
	if sum := tbl.CurrentSnapshot().Summary; sum == nil || sum.Properties["added-position-deletes"] != "10" {
		t.Fatalf("delete did not write 10 position deletes: summary %v", sum)
	}
	cat.Close()

	lineage := version == "3"
	req := icebergread.ScanRequest{CatalogURI: uri, CatalogName: catName, Table: "ns.t", Lineage: lineage}
	res, err := icebergread.Scan(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.RowCount != 90 || len(res.Rows) != 90 {
		t.Fatalf("scan returns %d rows, want 90 (100 appended, 10 deleted)", res.RowCount)
	}
	seen := map[int64]bool{}
	for _, r := range res.Rows {
		var row struct {
			ID    int64  `json:"id"`
			Name  string `json:"name"`
			RowID *int64 `json:"_row_id"`
			Seq   *int64 `json:"_last_updated_sequence_number"`
		}
		if err := json.Unmarshal(r, &row); err != nil {
			t.Fatal(err)
		}
		if row.ID < 10 || row.Name != fmt.Sprintf("n%d", row.ID) || seen[row.ID] {
			t.Errorf("unexpected row %s", r)
		}
		seen[row.ID] = true
		if lineage && (row.RowID == nil || *row.RowID != row.ID || row.Seq == nil || *row.Seq != 1) {
			t.Errorf("row %s: want _row_id = id and _last_updated_sequence_number = 1", r)
		}
	}
	again, err := icebergread.Scan(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if again.Checksum != res.Checksum {
		t.Errorf("checksum differs between two scans: %s vs %s", again.Checksum, res.Checksum)
	}
}
