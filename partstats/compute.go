package partstats

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// ErrNoSnapshot is wrapped by the error for a snapshot the table does not
// have.
var ErrNoSnapshot = errors.New("the table has no snapshot")

// ErrBadFile is wrapped by the error for a partition statistics file that
// cannot be read whole: missing, of another size than registered, not
// Parquet, or without the fields the spec requires.
var ErrBadFile = errors.New("unreadable partition statistics file")

// Options tune Compute.
type Options struct {
	// Full computes from the snapshot's manifests alone, never from a
	// previous file.
	Full bool
}

// Result is a computation's outcome.
type Result struct {
	SnapshotID int64
	// Type is the unified partition type of the rows.
	Type *spec.StructType
	Rows []Row
	// Base is the previous file an incremental computation started from;
	// nil for a full one.
	Base *spec.PartitionStatisticsFile
	// Snapshots and Manifests count what was read: the snapshots whose
	// added manifests were folded (incremental) and the manifests read.
	Snapshots int
	Manifests int
}

// Registered returns md's partition statistics file of snapshot id.
func Registered(md *spec.TableMetadata, id int64) (spec.PartitionStatisticsFile, bool) {
	for _, f := range md.PartitionStatistics {
		if f.SnapshotID == id {
			return f, true
		}
	}
	return spec.PartitionStatisticsFile{}, false
}

// latest returns the file of the newest ancestor of snap (snap included)
// that has one, as Java's latestStatsFile does, and the snapshots after
// it up to snap, newest first; a file of a snapshot outside snap's
// history (another branch) is not used.
func latest(md *spec.TableMetadata, snap *spec.Snapshot) (*spec.PartitionStatisticsFile, []*spec.Snapshot) {
	chain := md.Ancestors(snap.SnapshotID)
	for i, s := range chain {
		if f, ok := Registered(md, s.SnapshotID); ok {
			return &f, chain[:i]
		}
	}
	return nil, nil
}

// Compute computes the partition statistics of md's snapshot id:
// incrementally from the newest ancestor's file when one is registered
// (and not opts.Full), else from every entry of the snapshot's manifests.
// A previous file that cannot be read is an error wrapping ErrBadFile.
func Compute(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, id int64, opts Options) (*Result, error) {
	snap, ok := md.SnapshotByID(id)
	if !ok {
		return nil, fmt.Errorf("%w %d", ErrNoSnapshot, id)
	}
	b, err := NewBuilder(md)
	if err != nil {
		return nil, err
	}
	res := &Result{SnapshotID: id, Type: b.Type()}
	var base *spec.PartitionStatisticsFile
	var since []*spec.Snapshot
	if !opts.Full {
		base, since = latest(md, snap)
	}
	if base == nil {
		mfs, err := table.ManifestFiles(ctx, fio, snap)
		if err != nil {
			return nil, err
		}
		res.Snapshots, res.Manifests = 1, len(mfs)
		if err := fold(ctx, fio, b, mfs, false); err != nil {
			return nil, err
		}
		res.Rows = b.Rows()
		return res, nil
	}
	res.Base = base
	prev, err := Read(ctx, fio, md, *base)
	if err != nil {
		return nil, err
	}
	if err := b.Merge(prev); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBadFile, base.StatisticsPath, err)
	}
	// Deleted entries are not carried into later snapshots' manifests, so
	// each snapshot since the base gives the manifests it added.
	var added []manifest.ManifestFile
	for _, s := range since {
		mfs, err := table.ManifestFiles(ctx, fio, s)
		if err != nil {
			return nil, err
		}
		for _, mf := range mfs {
			if mf.AddedSnapshotID == s.SnapshotID {
				added = append(added, mf)
			}
		}
	}
	res.Snapshots = len(since)
	res.Manifests = len(added)
	if err := fold(ctx, fio, b, added, true); err != nil {
		return nil, err
	}
	res.Rows = b.Rows()
	return res, nil
}

// fold reads every entry of mfs, deleted ones included, into b.
func fold(ctx context.Context, fio fileio.FileIO, b *Builder, mfs []manifest.ManifestFile, incremental bool) error {
	opts := table.WalkOptions{IncludeDeleted: true, SkipMetrics: true}
	return table.WalkManifests(ctx, fio, mfs, opts, func(e table.FileEntry) error {
		return b.Add(e.Manifest.SpecID, &e.Entry, incremental)
	})
}

// Read reads the rows of md's partition statistics file f in md's
// current unified partition type (fields a file written before a spec
// change lacks read as null). Any failure wraps ErrBadFile.
func Read(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, f spec.PartitionStatisticsFile) ([]Row, error) {
	ut, err := PartitionType(md)
	if err != nil {
		return nil, err
	}
	bad := func(err error) error {
		return fmt.Errorf("%w of snapshot %d, %s: %w", ErrBadFile, f.SnapshotID, f.StatisticsPath, err)
	}
	in, err := fio.Open(ctx, f.StatisticsPath)
	if err != nil {
		return nil, bad(err)
	}
	defer in.Close()
	if in.Size() != f.FileSizeInBytes {
		return nil, bad(fmt.Errorf("the file has %d bytes, the table metadata says %d", in.Size(), f.FileSizeInBytes))
	}
	raw, err := datafile.ReadRows(ctx, in, in.Size(), Schema(ut, md.FormatVersion))
	if err != nil {
		return nil, bad(err)
	}
	rows := make([]Row, len(raw))
	for i, r := range raw {
		if rows[i], err = fromValues(ut, r); err != nil {
			return nil, bad(fmt.Errorf("row %d: %w", i, err))
		}
	}
	return rows, nil
}

// fromValues converts one row read in Schema's order.
func fromValues(ut *spec.StructType, v []any) (Row, error) {
	if len(v) < 12 {
		return Row{}, fmt.Errorf("%d columns, want at least 12", len(v))
	}
	part, ok := v[0].([]any)
	if !ok || len(part) != len(ut.Fields) {
		return Row{}, fmt.Errorf("partition is %T, want a struct of %d fields", v[0], len(ut.Fields))
	}
	for i, f := range ut.Fields {
		if part[i] == nil {
			continue
		}
		w, err := widen(f.Type, part[i])
		if err != nil {
			return Row{}, fmt.Errorf("partition field %s: %w", f.Name, err)
		}
		part[i] = w
	}
	var r Row
	r.Partition = part
	i32 := func(x any) int32 { n, _ := x.(int32); return n }
	i64 := func(x any) int64 { n, _ := x.(int64); return n }
	opt := func(x any) *int64 {
		if n, ok := x.(int64); ok {
			return &n
		}
		return nil
	}
	for i := 1; i <= 4; i++ {
		if v[i] == nil {
			return Row{}, fmt.Errorf("required column %d is null", i+1)
		}
	}
	r.SpecID, r.DataRecordCount, r.DataFileCount, r.TotalDataFileSizeInBytes = i32(v[1]), i64(v[2]), i32(v[3]), i64(v[4])
	r.PositionDeleteRecordCount, r.PositionDeleteFileCount = i64(v[5]), i32(v[6])
	r.EqualityDeleteRecordCount, r.EqualityDeleteFileCount = i64(v[7]), i32(v[8])
	r.TotalRecordCount, r.LastUpdatedAt, r.LastUpdatedSnapshotID = opt(v[9]), opt(v[10]), opt(v[11])
	if len(v) > 12 {
		r.DVCount = i32(v[12])
	}
	return r, nil
}

// values is r in Schema's order for a table of format version fv.
func (r *Row) values(fv int) []any {
	opt := func(p *int64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	v := []any{r.Partition, r.SpecID, r.DataRecordCount, r.DataFileCount, r.TotalDataFileSizeInBytes,
		r.PositionDeleteRecordCount, r.PositionDeleteFileCount, r.EqualityDeleteRecordCount, r.EqualityDeleteFileCount,
		opt(r.TotalRecordCount), opt(r.LastUpdatedAt), opt(r.LastUpdatedSnapshotID)}
	if fv >= 3 {
		v = append(v, r.DVCount)
	}
	return v
}

// Encode is the Parquet file of res's rows for a table of format version
// fv.
func Encode(res *Result, fv int) ([]byte, error) {
	vals := make([][]any, len(res.Rows))
	for i := range res.Rows {
		vals[i] = res.Rows[i].values(fv)
	}
	var buf bytes.Buffer
	if _, err := datafile.WriteRows(&buf, Schema(res.Type, fv), vals); err != nil {
		return nil, fmt.Errorf("encode partition statistics: %w", err)
	}
	return buf.Bytes(), nil
}

// NewPath is where the file of snapshot id goes: the table's metadata
// directory, named as Java names it.
func NewPath(md *spec.TableMetadata, id int64) string {
	return fmt.Sprintf("%s/partition-stats-%d-%s.parquet", md.MetadataDir(), id, uuid.NewString())
}

// Write writes data to path and returns the registration of it for
// snapshot id. The file is visible only once whole.
func Write(ctx context.Context, fio fileio.FileIO, path string, id int64, data []byte) (spec.PartitionStatisticsFile, error) {
	w, err := fio.Create(ctx, path)
	if err != nil {
		return spec.PartitionStatisticsFile{}, fmt.Errorf("write partition statistics: %w", err)
	}
	defer w.Abort()
	if _, err := w.Write(data); err != nil {
		return spec.PartitionStatisticsFile{}, fmt.Errorf("write partition statistics %s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return spec.PartitionStatisticsFile{}, fmt.Errorf("write partition statistics %s: %w", path, err)
	}
	return spec.PartitionStatisticsFile{SnapshotID: id, StatisticsPath: path, FileSizeInBytes: int64(len(data))}, nil
}
