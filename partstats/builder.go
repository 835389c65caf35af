package partstats

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// Row is one row of a partition statistics file: the statistics of one
// partition of one spec. Counts of deletes are zero when a v1 or v2 file
// left them null, as Java reads them.
type Row struct {
	// Partition holds one value per field of the unified partition type
	// (PartitionType), null for the fields the row's spec does not have.
	Partition                 []any
	SpecID                    int32
	DataRecordCount           int64
	DataFileCount             int32
	TotalDataFileSizeInBytes  int64
	PositionDeleteRecordCount int64 // position-delete files and DVs
	PositionDeleteFileCount   int32 // position-delete files only
	EqualityDeleteRecordCount int64
	EqualityDeleteFileCount   int32
	// TotalRecordCount is the live row count, nil when unknown; Java 1.10
	// never computes it and neither does icectl.
	TotalRecordCount      *int64
	LastUpdatedAt         *int64 // epoch ms
	LastUpdatedSnapshotID *int64
	DVCount               int32
}

// Builder folds manifest entries (and the rows of a previous file) into
// rows keyed by spec id and unified partition. It does no IO.
type Builder struct {
	md      *spec.TableMetadata
	unified *spec.StructType
	// project maps each spec's tuple onto the unified type: for each unified
	// field, the index of that field in the spec's tuple, or -1.
	project map[int32][]int
	rows    map[string]*Row
}

// NewBuilder starts an empty fold for md.
func NewBuilder(md *spec.TableMetadata) (*Builder, error) {
	ut, err := PartitionType(md)
	if err != nil {
		return nil, err
	}
	b := &Builder{md: md, unified: ut, project: map[int32][]int{}, rows: map[string]*Row{}}
	for _, ps := range md.PartitionSpecs {
		idx := make([]int, len(ut.Fields))
		for i, f := range ut.Fields {
			idx[i] = slices.IndexFunc(ps.Fields, func(pf spec.PartitionField) bool { return pf.FieldID == f.ID })
		}
		b.project[int32(ps.ID)] = idx
	}
	return b, nil
}

// Type is the unified partition type the rows' partitions have.
func (b *Builder) Type() *spec.StructType { return b.unified }

// Len is the number of rows so far.
func (b *Builder) Len() int { return len(b.rows) }

// row is the row of a spec's tuple, created empty.
func (b *Builder) row(specID int32, tuple []any) (*Row, error) {
	idx, ok := b.project[specID]
	if !ok {
		return nil, fmt.Errorf("partition statistics: a file of spec %d, which the table does not have", specID)
	}
	part := make([]any, len(idx))
	for i, j := range idx {
		if j < 0 || j >= len(tuple) {
			continue
		}
		v, err := widen(b.unified.Fields[i].Type, tuple[j])
		if err != nil {
			return nil, fmt.Errorf("partition statistics: spec %d field %s: %w", specID, b.unified.Fields[i].Name, err)
		}
		part[i] = v
	}
	return b.rowOf(specID, part), nil
}

func (b *Builder) rowOf(specID int32, part []any) *Row {
	k := table.PartitionKey(specID, part)
	r := b.rows[k]
	if r == nil {
		r = &Row{Partition: part, SpecID: specID}
		b.rows[k] = r
	}
	return r
}

// widen gives a value read under an older type of a promoted source
// column (int to long, float to double) the unified type's Go type.
func widen(t spec.Type, v any) (any, error) {
	switch x := v.(type) {
	case int32:
		switch t.(type) {
		case spec.LongType:
			return int64(x), nil
		case spec.IntType, spec.DateType:
			return x, nil
		}
	case float32:
		switch t.(type) {
		case spec.DoubleType:
			return float64(x), nil
		case spec.FloatType:
			return x, nil
		}
	case []byte:
		if _, ok := t.(spec.UUIDType); ok && len(x) == 16 {
			return [16]byte(x), nil
		}
		return x, nil
	default:
		return v, nil
	}
	return nil, fmt.Errorf("value %v (%T) does not fit type %s", v, v, t)
}

// Add folds one manifest entry (inheritance applied) of spec specID in. In a full computation
// (incremental false) a live entry counts and a deleted one only marks
// its partition updated; incrementally, over the manifests added since a
// previous file, an added entry counts, a deleted one is taken off, an
// existing one (counted before) is skipped. Either way the partition's
// last update is the newest snapshot among its entries, when md still has
// that snapshot.
func (b *Builder) Add(specID int32, e *manifest.Entry, incremental bool) error {
	r, err := b.row(specID, e.DataFile.Partition)
	if err != nil {
		return err
	}
	switch e.Status {
	case manifest.StatusAdded:
		err = r.count(&e.DataFile, 1)
	case manifest.StatusExisting:
		if incremental {
			return nil // counted in the previous file
		}
		err = r.count(&e.DataFile, 1)
	case manifest.StatusDeleted:
		if incremental {
			err = r.count(&e.DataFile, -1)
		}
	default:
		err = fmt.Errorf("partition statistics: entry of %s has status %d", e.DataFile.FilePath, e.Status)
	}
	if err != nil {
		return err
	}
	if e.SnapshotID != nil {
		if s, ok := b.md.SnapshotByID(*e.SnapshotID); ok {
			r.updated(s.SnapshotID, s.TimestampMS)
		}
	}
	return nil
}

// count adds (sign 1) or takes off (sign -1) one file.
func (r *Row) count(df *manifest.DataFile, sign int64) error {
	n := int32(sign)
	switch df.Content {
	case manifest.ContentData:
		r.DataRecordCount += sign * df.RecordCount
		r.DataFileCount += n
		r.TotalDataFileSizeInBytes += sign * df.FileSizeInBytes
	case manifest.ContentPositionDeletes:
		r.PositionDeleteRecordCount += sign * df.RecordCount
		// Java tells a DV by its file format, as the spec does.
		if strings.EqualFold(df.FileFormat, "puffin") {
			r.DVCount += n
		} else {
			r.PositionDeleteFileCount += n
		}
	case manifest.ContentEqualityDeletes:
		r.EqualityDeleteRecordCount += sign * df.RecordCount
		r.EqualityDeleteFileCount += n
	default:
		return fmt.Errorf("partition statistics: file %s has unknown content %d", df.FilePath, df.Content)
	}
	return nil
}

// updated records a change by snapshot id at ms, keeping the newest.
func (r *Row) updated(id, ms int64) {
	if r.LastUpdatedAt == nil || *r.LastUpdatedAt < ms {
		r.LastUpdatedAt, r.LastUpdatedSnapshotID = &ms, &id
	}
}

// Merge adds the rows of a previous file (read in the current unified
// type) to the fold, as Java's appendStats does.
func (b *Builder) Merge(rows []Row) error {
	for i := range rows {
		in := &rows[i]
		if _, ok := b.project[in.SpecID]; !ok {
			return fmt.Errorf("partition statistics: a row of spec %d, which the table does not have", in.SpecID)
		}
		if len(in.Partition) != len(b.unified.Fields) {
			return fmt.Errorf("partition statistics: a row with %d partition values, the partition type has %d", len(in.Partition), len(b.unified.Fields))
		}
		r := b.rowOf(in.SpecID, in.Partition)
		r.DataRecordCount += in.DataRecordCount
		r.DataFileCount += in.DataFileCount
		r.TotalDataFileSizeInBytes += in.TotalDataFileSizeInBytes
		r.PositionDeleteRecordCount += in.PositionDeleteRecordCount
		r.PositionDeleteFileCount += in.PositionDeleteFileCount
		r.EqualityDeleteRecordCount += in.EqualityDeleteRecordCount
		r.EqualityDeleteFileCount += in.EqualityDeleteFileCount
		r.DVCount += in.DVCount
		if in.TotalRecordCount != nil {
			t := *in.TotalRecordCount
			if r.TotalRecordCount != nil {
				t += *r.TotalRecordCount
			}
			r.TotalRecordCount = &t
		}
		if in.LastUpdatedAt != nil && in.LastUpdatedSnapshotID != nil {
			r.updated(*in.LastUpdatedSnapshotID, *in.LastUpdatedAt)
		}
	}
	return nil
}

// Rows are the fold's rows sorted by partition (Java's comparator of the
// unified type: field by field, nulls first), then by spec id.
func (b *Builder) Rows() []Row {
	out := make([]Row, 0, len(b.rows))
	for _, r := range b.rows {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(x, y Row) int {
		return cmp.Or(ComparePartitions(b.unified, x.Partition, y.Partition), cmp.Compare(x.SpecID, y.SpecID))
	})
	return out
}

// ComparePartitions orders two tuples of type t as Java's
// Comparators.forType does: field by field, null first; strings and
// binary by unsigned bytes; floats with -0 before 0 and NaN last; UUIDs
// as java.util.UUID does (two signed 64-bit halves).
func ComparePartitions(t *spec.StructType, a, b []any) int {
	for i := range t.Fields {
		var x, y any
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if c := compareValues(x, y); c != 0 {
			return c
		}
	}
	return 0
}

func compareValues(x, y any) int {
	switch {
	case x == nil && y == nil:
		return 0
	case x == nil:
		return -1
	case y == nil:
		return 1
	}
	switch a := x.(type) {
	case bool:
		b, _ := y.(bool)
		return cmp.Compare(btoi(a), btoi(b))
	case int32:
		b, _ := y.(int32)
		return cmp.Compare(a, b)
	case int64:
		b, _ := y.(int64)
		return cmp.Compare(a, b)
	case float32:
		b, _ := y.(float32)
		return compareFloat(float64(a), float64(b))
	case float64:
		b, _ := y.(float64)
		return compareFloat(a, b)
	case string:
		b, _ := y.(string)
		return strings.Compare(a, b)
	case []byte:
		b, _ := y.([]byte)
		return slices.Compare(a, b)
	case [16]byte:
		b, _ := y.([16]byte)
		return cmp.Or(compareSigned(a[:8], b[:8]), compareSigned(a[8:], b[8:]))
	case spec.Decimal:
		b, _ := y.(spec.Decimal)
		if a.Unscaled == nil || b.Unscaled == nil {
			return 0
		}
		return a.Unscaled.Cmp(b.Unscaled)
	}
	return 0
}

// compareFloat is Java's Double.compare: -0.0 < 0.0, NaN above all.
func compareFloat(a, b float64) int {
	if an, bn := math.IsNaN(a), math.IsNaN(b); an || bn {
		return cmp.Compare(btoi(an), btoi(bn))
	}
	if a == b { // -0 before 0
		return cmp.Compare(btoi(!math.Signbit(a)), btoi(!math.Signbit(b)))
	}
	return cmp.Compare(a, b)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func compareSigned(a, b []byte) int {
	var x, y int64
	for i := range 8 {
		x, y = x<<8|int64(a[i]), y<<8|int64(b[i])
	}
	return cmp.Compare(x, y)
}

// Diff compares the counts of two computations of one table (not
// when they were updated, nor total_record_count), ignoring rows whose
// counts are all zero (a full computation keeps the partitions emptied by
// the snapshot, an incremental one every partition it ever saw). It
// returns the first difference, or "" when they agree.
func Diff(a, b []Row) string {
	key := func(r *Row) string { return table.PartitionKey(r.SpecID, r.Partition) }
	index := func(rows []Row) map[string]Row {
		m := map[string]Row{}
		for _, r := range rows {
			c := r.counts()
			if c != ([8]int64{}) {
				m[key(&r)] = r
			}
		}
		return m
	}
	ma, mb := index(a), index(b)
	for _, rows := range [][]Row{a, b} {
		for i := range rows {
			r := &rows[i]
			x, okA := ma[key(r)]
			y, okB := mb[key(r)]
			switch {
			case !okA && !okB:
				continue
			case !okA || !okB:
				return fmt.Sprintf("spec %d partition %v: in one only", r.SpecID, r.Partition)
			case x.counts() != y.counts():
				return fmt.Sprintf("spec %d partition %v: counts %v and %v", r.SpecID, r.Partition, x.counts(), y.counts())
			}
		}
	}
	return ""
}

// counts are r's data files, records and bytes, position-delete files
// and records, DVs, equality-delete files and records.
func (r *Row) counts() [8]int64 {
	return [8]int64{int64(r.DataFileCount), r.DataRecordCount, r.TotalDataFileSizeInBytes, int64(r.PositionDeleteFileCount),
		r.PositionDeleteRecordCount, int64(r.DVCount), int64(r.EqualityDeleteFileCount), r.EqualityDeleteRecordCount}
}
