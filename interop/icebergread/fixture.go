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
	Evolve        int    // then evolve the schema and spec and append this many rows (EvolveTable)
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
	if req.Rows < 0 || req.DeleteEvery < 0 || req.Evolve < 0 {
		return nil, errors.New("--rows, --delete-every and --evolve must not be negative")
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
	if n := req.Rows + req.Evolve; req.DeleteEvery > 0 && n > 0 {
		res.Deleted = int64((n-1)/req.DeleteEvery + 1)
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
		at := fixtureRecords(int64(lo), int64(hi), false)
		tbl, err = tbl.AppendTable(ctx, at, int64(hi-lo), nil)
		at.Release()
		if err != nil {
			return nil, fmt.Errorf("append rows %d..%d: %w", lo, hi-1, err)
		}
	}

	// With --evolve the rows of each spec are deleted before the next:
	// iceberg-go v0.7.0 writes a v2 position-delete file for an older
	// spec's data file in the current spec's partition, where readers
	// (its own too) do not apply it.
	if tbl, err = deleteEvery(ctx, tbl, 0, int64(req.Rows), int64(req.DeleteEvery)); err != nil {
		return nil, err
	}
	if req.Evolve > 0 {
		if tbl, err = EvolveTable(ctx, tbl); err != nil {
			return nil, err
		}
		lo, hi := int64(req.Rows), int64(req.Rows+req.Evolve)
		at := fixtureRecords(lo, hi, true)
		tbl, err = tbl.AppendTable(ctx, at, hi-lo, nil)
		at.Release()
		if err != nil {
			return nil, fmt.Errorf("append rows %d..%d after the evolution: %w", lo, hi-1, err)
		}
		if tbl, err = deleteEvery(ctx, tbl, lo, hi, int64(req.DeleteEvery)); err != nil {
			return nil, err
		}
	}
	return tbl, nil
}

// deleteEvery deletes the ids in lo..hi-1 divisible by k (none when k is
// 0) with merge-on-read, in one commit.
func deleteEvery(ctx context.Context, tbl *table.Table, lo, hi, k int64) (*table.Table, error) {
	var ids []int64
	for i := lo; k > 0 && i < hi; i++ {
		if i%k == 0 {
			ids = append(ids, i)
		}
	}
	if len(ids) == 0 {
		return tbl, nil
	}
	tbl, err := tbl.Delete(ctx, iceberg.IsIn(iceberg.Reference("id"), ids...), nil)
	if err != nil {
		return nil, fmt.Errorf("delete every %d-th row of %d..%d: %w", k, lo, hi-1, err)
	}
	// The fixture exists to exercise merge-on-read: a delete that
	// rewrote data files instead would test nothing. Only a file whose
	// every row goes is dropped whole.
	sum := tbl.CurrentSnapshot().Summary
	pos, whole := 0, 0
	if sum != nil {
		pos, _ = strconv.Atoi(sum.Properties["added-position-deletes"])
		whole, _ = strconv.Atoi(sum.Properties["deleted-records"])
	}
	if pos == 0 || pos+whole != len(ids) {
		return nil, fmt.Errorf("delete did not write %d position deletes (summary %v)", len(ids), sum)
	}
	return tbl, nil
}

// EvolvedColumn is the column EvolveTable adds, and EvolvedField the
// partition field.
const (
	EvolvedColumn = "dt"
	EvolvedField  = "id_bucket"
)

// FixtureDate is row i's value of EvolvedColumn: every 6th null, the
// rest on 45 days from the fixture's epoch.
func FixtureDate(i int64) *time.Time {
	if i%6 == 5 {
		return nil
	}
	d := fixtureEpoch().AddDate(0, 0, int(i%45))
	return &d
}

// EvolveTable changes a fixture table's schema and partition spec with
// iceberg-go's own updates, in one commit: an optional column dt (date;
// the rows written before read it as null), and a spec partitioned by
// id_bucket, bucket(4, id), alone (the day field of a --partitioned
// fixture removed). Rows appended after it (fixtureRecords with dt) are
// written in the new spec, four files at most; the older files stay in
// theirs.
func EvolveTable(ctx context.Context, tbl *table.Table) (*table.Table, error) {
	txn := tbl.NewTransaction()
	if err := txn.UpdateSchema(true, false).AddColumn([]string{EvolvedColumn}, iceberg.PrimitiveTypes.Date, "", false, nil).Commit(); err != nil {
		return nil, fmt.Errorf("add column %s: %w", EvolvedColumn, err)
	}
	us := txn.UpdateSpec(true)
	spec := tbl.Spec()
	for i := range spec.NumFields() {
		us.RemoveField(spec.Field(i).Name)
	}
	if err := us.AddField("id", iceberg.BucketTransform{NumBuckets: 4}, EvolvedField).Commit(); err != nil {
		return nil, fmt.Errorf("partition by %s: %w", EvolvedField, err)
	}
	out, err := txn.Commit(ctx)
	if err != nil {
		return nil, fmt.Errorf("commit the schema and spec evolution: %w", err)
	}
	return out, nil
}

// fixtureRecords returns rows lo..hi-1 as an Arrow table, with
// EvolvedColumn when evolved.
func fixtureRecords(lo, hi int64, evolved bool) arrow.Table {
	s := fixtureArrowSchema()
	if evolved {
		s = arrow.NewSchema(append(s.Fields(), arrow.Field{Name: EvolvedColumn, Type: arrow.FixedWidthTypes.Date32, Nullable: true}), nil)
	}
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
		if evolved {
			if d := FixtureDate(i); d == nil {
				b.Field(4).AppendNull()
			} else {
				b.Field(4).(*array.Date32Builder).Append(arrow.Date32FromTime(*d))
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return array.NewTableFromRecords(s, []arrow.RecordBatch{rec})
}
