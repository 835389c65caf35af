package icebergread

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// FixtureRequest says where and what WriteFixture writes.
type FixtureRequest struct {
	CatalogURI    string // SQL catalog, as in ScanRequest
	RESTURI       string // REST catalog; used instead of CatalogURI
	Warehouse     string // warehouse (REST) or warehouse root (SQL catalog)
	CatalogName   string
	Table         string // ns.tbl; the namespace is created when missing
	FormatVersion int    // 2 or 3
	Rows          int    // rows appended, ids 0..Rows-1
	DeleteEvery   int    // delete ids divisible by DeleteEvery (0: none)
	Partitioned   bool   // partition by day(ts)
	Location      string // the table's location; "" for the catalog's default
	Props         map[string]string
}

// FixtureResult is what the fixture wrote and iceberg-go's own scan of it.
type FixtureResult struct {
	ScanResult
	FormatVersion    int               `json:"format_version"`
	SnapshotID       int64             `json:"snapshot_id"`
	Snapshots        int               `json:"snapshots"`
	Deleted          int64             `json:"deleted_rows"`
	DeleteSummary    map[string]string `json:"delete_summary,omitempty"`
	MetadataLocation string            `json:"metadata_location"`
}

// Appends are split into this many commits, so the table has several data
// files and snapshots for deletes to span.
const fixtureCommits = 3

// fixtureEpoch is the timestamp of row 0; row i is i*7 hours later, so a
// day-partitioned fixture spreads over several partitions.
func fixtureEpoch() time.Time { return time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC) }

// FixtureSchema is the fixture's Iceberg schema.
func FixtureSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "amount", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 4, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
	)
}

func fixtureArrowSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	}, nil)
}

// FixtureRow returns row i of the fixture: every 5th name is null, so
// nulls are part of what readers must agree on.
func FixtureRow(i int64) (id int64, name *string, amount float64, ts time.Time) {
	if i%5 != 4 {
		n := "name-" + strconv.FormatInt(i, 10)
		name = &n
	}
	return i, name, float64(i)*1.25 - 3, fixtureEpoch().Add(time.Duration(i) * 7 * time.Hour)
}

// WriteFixture creates req.Table with iceberg-go, appends req.Rows rows in
// a few commits and deletes every DeleteEvery-th row with merge-on-read
// (position-delete files in v2, deletion vectors in v3), then scans the
// table through a fresh catalog connection.
func WriteFixture(ctx context.Context, req FixtureRequest) (*FixtureResult, error) {
	if req.FormatVersion != 2 && req.FormatVersion != 3 {
		return nil, fmt.Errorf("format version %d: want 2 or 3", req.FormatVersion)
	}
	if req.Rows < 0 || req.DeleteEvery < 0 {
		return nil, errors.New("--rows and --delete-every must not be negative")
	}
	ns, name, err := splitTable(req.Table)
	if err != nil {
		return nil, err
	}
	target := ScanRequest{CatalogURI: req.CatalogURI, RESTURI: req.RESTURI, Warehouse: req.Warehouse,
		CatalogName: req.CatalogName, Table: req.Table, Props: req.Props}
	cat, closeCat, err := openCatalog(ctx, target, true)
	if err != nil {
		return nil, err
	}
	tbl, err := writeFixtureTable(ctx, cat, ns, name, req)
	closeCat()
	if err != nil {
		return nil, fmt.Errorf("write fixture %s: %w", req.Table, err)
	}

	scan, err := Scan(ctx, target)
	if err != nil {
		return nil, err
	}
	res := &FixtureResult{ScanResult: *scan, FormatVersion: tbl.Metadata().Version(),
		Snapshots: len(tbl.Metadata().Snapshots()), MetadataLocation: tbl.MetadataLocation()}
	if snap := tbl.CurrentSnapshot(); snap != nil {
		res.SnapshotID = snap.SnapshotID
		if req.DeleteEvery > 0 && snap.Summary != nil {
			res.DeleteSummary = snap.Summary.Properties
		}
	}
	if req.DeleteEvery > 0 && req.Rows > 0 {
		res.Deleted = int64((req.Rows-1)/req.DeleteEvery + 1)
	}
	return res, nil
}

func splitTable(s string) ([]string, string, error) {
	i := strings.LastIndex(s, ".")
	if i <= 0 || i == len(s)-1 {
		return nil, "", fmt.Errorf("table %q: want ns.tbl", s)
	}
	return strings.Split(s[:i], "."), s[i+1:], nil
}

func writeFixtureTable(ctx context.Context, cat catalog.Catalog, ns []string, name string, req FixtureRequest) (*table.Table, error) {
	if err := cat.CreateNamespace(ctx, catalog.ToIdentifier(ns...), nil); err != nil &&
		!errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		return nil, fmt.Errorf("create namespace %s: %w", strings.Join(ns, "."), err)
	}
	props := iceberg.Properties{
		"format-version":    strconv.Itoa(req.FormatVersion),
		"write.delete.mode": "merge-on-read",
	}
	opts := []catalog.CreateTableOpt{catalog.WithProperties(props)}
	if req.Location != "" {
		opts = append(opts, catalog.WithLocation(req.Location))
	}
	if req.Partitioned {
		ps := iceberg.NewPartitionSpec(iceberg.PartitionField{
			SourceIDs: []int{4}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{},
		})
		opts = append(opts, catalog.WithPartitionSpec(&ps))
	}
	tbl, err := cat.CreateTable(ctx, catalog.ToIdentifier(append(ns, name)...), FixtureSchema(), opts...)
	if err != nil {
		return nil, fmt.Errorf("create table: %w", err)
	}

	for c := range fixtureCommits {
		lo, hi := req.Rows*c/fixtureCommits, req.Rows*(c+1)/fixtureCommits
		if lo == hi {
			continue
		}
		at := fixtureRecords(int64(lo), int64(hi))
		tbl, err = tbl.AppendTable(ctx, at, int64(hi-lo), nil)
		at.Release()
		if err != nil {
			return nil, fmt.Errorf("append rows %d..%d: %w", lo, hi-1, err)
		}
	}

	if req.DeleteEvery > 0 && req.Rows > 0 {
		var ids []int64
		for i := int64(0); i < int64(req.Rows); i += int64(req.DeleteEvery) {
			ids = append(ids, i)
		}
		if tbl, err = tbl.Delete(ctx, iceberg.IsIn(iceberg.Reference("id"), ids...), nil); err != nil {
			return nil, fmt.Errorf("delete every %d-th row: %w", req.DeleteEvery, err)
		}
		// The fixture exists to exercise merge-on-read: a delete that
		// rewrote data files instead would test nothing.
		sum := tbl.CurrentSnapshot().Summary
		if sum == nil || sum.Properties["added-position-deletes"] != strconv.Itoa(len(ids)) {
			return nil, fmt.Errorf("delete did not write %d position deletes (summary %v)", len(ids), sum)
		}
	}
	return tbl, nil
}

// fixtureRecords returns rows lo..hi-1 as an Arrow table.
func fixtureRecords(lo, hi int64) arrow.Table {
	s := fixtureArrowSchema()
	b := array.NewRecordBuilder(memory.DefaultAllocator, s)
	defer b.Release()
	for i := lo; i < hi; i++ {
		id, name, amount, ts := FixtureRow(i)
		b.Field(0).(*array.Int64Builder).Append(id)
		if name == nil {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(*name)
		}
		b.Field(2).(*array.Float64Builder).Append(amount)
		b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(ts.UnixMicro()))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return array.NewTableFromRecords(s, []arrow.RecordBatch{rec})
}
