package interop

import (
	"fmt"
	"math"
	"math/big"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// testSchema has a column of every primitive type a partition or a bound
// can hold; v3 adds nanosecond timestamps.
func testSchema(version int) *spec.Schema {
	fields := []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "name", Type: spec.StringType{}},
		{ID: 3, Name: "dt", Type: spec.DateType{}},
		{ID: 4, Name: "ts", Type: spec.TimestampType{}},
		{ID: 5, Name: "tstz", Type: spec.TimestampTzType{}},
		{ID: 6, Name: "price", Type: spec.DecimalType{Precision: 9, Scale: 2}},
		{ID: 7, Name: "big", Type: spec.DecimalType{Precision: 38, Scale: 10}},
		{ID: 8, Name: "u", Type: spec.UUIDType{}},
		{ID: 9, Name: "f", Type: spec.FixedType{Length: 4}},
		{ID: 10, Name: "b", Type: spec.BinaryType{}},
		{ID: 11, Name: "flag", Type: spec.BooleanType{}},
		{ID: 12, Name: "x", Type: spec.FloatType{}},
		{ID: 13, Name: "y", Type: spec.DoubleType{}},
		{ID: 14, Name: "t", Type: spec.TimeType{}},
		{ID: 15, Name: "n", Type: spec.IntType{}},
	}
	if version >= 3 {
		fields = append(fields, spec.NestedField{ID: 16, Name: "tsns", Type: spec.TimestampNsType{}})
	}
	return &spec.Schema{ID: 0, Fields: fields}
}

// testSpec partitions by every column type, through identity and the
// transforms whose result type differs from the source's.
func testSpec(version int) spec.PartitionSpec {
	pf := func(src, id int, name, transform string) spec.PartitionField {
		return spec.PartitionField{SourceID: src, FieldID: id, Name: name, Transform: spec.ParseTransform(transform)}
	}
	fields := []spec.PartitionField{
		pf(1, 1000, "id_bucket", "bucket[16]"),
		pf(2, 1001, "name", "identity"),
		pf(4, 1002, "ts_day", "day"),
		pf(6, 1003, "price", "identity"),
		pf(8, 1004, "u", "identity"),
		pf(9, 1005, "f", "identity"),
		pf(11, 1006, "flag", "identity"),
		pf(15, 1007, "n", "identity"),
		pf(13, 1008, "y", "identity"),
		pf(10, 1009, "b", "identity"),
		pf(7, 1010, "big", "identity"),
		pf(5, 1011, "tstz", "identity"),
		pf(14, 1012, "t", "identity"),
		pf(12, 1013, "x", "identity"),
		pf(2, 1014, "name_trunc", "truncate[3]"),
		pf(3, 1015, "dt", "identity"),
		pf(1, 1016, "id", "identity"),
		pf(4, 1017, "ts_hour", "hour"),
	}
	if version >= 3 {
		fields = append(fields, pf(16, 1018, "tsns", "identity"))
	}
	return spec.PartitionSpec{ID: 3, Fields: fields}
}

func partitionTypes(s *spec.Schema, ps spec.PartitionSpec) []spec.Type {
	pt := ps.PartitionType(s)
	out := make([]spec.Type, len(pt.Fields))
	for i, f := range pt.Fields {
		out[i] = f.Type
	}
	return out
}

// valueOf returns the k-th test value of type t in spec/values.go's Go
// conventions; k = 0 is null, and odd and even k give values on both sides
// of zero where the type has a sign.
func valueOf(t spec.Type, k int) any {
	if k == 0 {
		return nil
	}
	sign := int64(1)
	if k%2 == 0 {
		sign = -1
	}
	i := int64(k)
	switch t := t.(type) {
	case spec.BooleanType:
		return k%2 == 1
	case spec.IntType:
		return int32(sign * i * 1_000_003 % math.MaxInt32)
	case spec.DateType:
		return int32(19_000 + sign*i*37)
	case spec.LongType:
		return sign * (i<<40 + 7)
	case spec.TimeType:
		return i*3_600_000_000 + 17
	case spec.TimestampType, spec.TimestampTzType:
		return 1_700_000_000_000_000 + sign*i*86_400_000_123
	case spec.TimestampNsType, spec.TimestampTzNsType:
		return 1_700_000_000_000_000_000 + sign*i*86_400_000_000_123
	case spec.FloatType:
		return float32(sign) * float32(i) * 1.5
	case spec.DoubleType:
		if k == 3 {
			return math.NaN()
		}
		return float64(sign) * float64(i) * 2.25e10
	case spec.StringType:
		return fmt.Sprintf("s%03d-é€", k)
	case spec.UUIDType:
		var u [16]byte
		for j := range u {
			u[j] = byte(k*16 + j)
		}
		return u
	case spec.FixedType:
		b := make([]byte, t.Length)
		for j := range b {
			b[j] = byte(k*31 + j*7)
		}
		return b
	case spec.BinaryType:
		return []byte{0, byte(k), 0x80, 0xff}
	case spec.DecimalType:
		u := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Precision-2)), nil)
		u.Mul(u, big.NewInt(sign))
		u.Add(u, big.NewInt(i*12_345))
		return spec.Decimal{Unscaled: u, Scale: t.Scale}
	}
	panic(fmt.Sprintf("no test value for %s", t))
}

func partitionTuple(types []spec.Type, k int) []any {
	out := make([]any, len(types))
	for i, t := range types {
		out[i] = valueOf(t, k)
	}
	return out
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func ptr[T any](v T) *T { return &v }

// dataFiles returns data manifest entries covering every status, null and
// explicit sequence numbers, all optional data_file fields, and (v3)
// explicit and inherited first_row_ids.
func dataEntries(version int, s *spec.Schema, types []spec.Type) []manifest.Entry {
	stats := func(k int) manifest.DataFile {
		lower := map[int][]byte{}
		upper := map[int][]byte{}
		for _, f := range s.Fields {
			if _, ok := f.Type.(spec.DoubleType); ok {
				continue // no NaN in bounds
			}
			lower[f.ID] = must(spec.EncodeValue(f.Type, valueOf(f.Type, 1)))
			upper[f.ID] = must(spec.EncodeValue(f.Type, valueOf(f.Type, 3)))
		}
		return manifest.DataFile{
			Content:         manifest.ContentData,
			FilePath:        fmt.Sprintf("s3://bucket/tbl/data/part-%05d.parquet", k),
			FileFormat:      "PARQUET",
			Partition:       partitionTuple(types, k),
			RecordCount:     int64(100 * (k + 1)),
			FileSizeInBytes: int64(4096*k + 17),
			ColumnSizes:     map[int]int64{1: int64(800 * k), 2: 5},
			ValueCounts:     map[int]int64{1: int64(100 * (k + 1)), 2: int64(100 * (k + 1))},
			NullValueCounts: map[int]int64{1: 0, 2: int64(k)},
			NaNValueCounts:  map[int]int64{12: 0, 13: int64(k)},
			LowerBounds:     lower,
			UpperBounds:     upper,
		}
	}
	var es []manifest.Entry

	// ADDED, inheriting snapshot id and sequence numbers, null partition.
	es = append(es, manifest.Entry{Status: manifest.StatusAdded, DataFile: stats(0)})

	// ADDED with every optional field.
	full := stats(1)
	full.KeyMetadata = []byte{0xde, 0xad, 0xbe, 0xef}
	full.SplitOffsets = []int64{4, 1 << 33}
	full.SortOrderID = ptr[int32](1)
	es = append(es, manifest.Entry{Status: manifest.StatusAdded, DataFile: full})

	// EXISTING with explicit numbers (v3: an explicit first_row_id).
	existing := stats(2)
	if version >= 3 {
		existing.FirstRowID = ptr[int64](800)
	}
	es = append(es, manifest.Entry{Status: manifest.StatusExisting, SnapshotID: ptr[int64](41),
		SequenceNumber: ptr[int64](2), FileSequenceNumber: ptr[int64](2), DataFile: existing})

	// DELETED: keeps its numbers, gets no row id.
	es = append(es, manifest.Entry{Status: manifest.StatusDeleted, SnapshotID: ptr[int64](42),
		SequenceNumber: ptr[int64](1), FileSequenceNumber: ptr[int64](3), DataFile: stats(3)})

	// EXISTING without first_row_id: inherits one in v3 like an ADDED file.
	es = append(es, manifest.Entry{Status: manifest.StatusExisting, SnapshotID: ptr[int64](41),
		SequenceNumber: ptr[int64](4), FileSequenceNumber: ptr[int64](4), DataFile: stats(4)})

	// ADDED with explicit data sequence number (as a rewrite keeps it).
	es = append(es, manifest.Entry{Status: manifest.StatusAdded, SequenceNumber: ptr[int64](3),
		FileSequenceNumber: ptr[int64](5), DataFile: stats(5)})

	// ADDED with empty (not null) optional lists and maps.
	empty := stats(6)
	empty.SplitOffsets = []int64{}
	empty.ColumnSizes = map[int]int64{}
	es = append(es, manifest.Entry{Status: manifest.StatusAdded, DataFile: empty})
	return es
}

// deleteEntries returns position deletes (v2: Parquet with a referenced
// data file; v3: deletion vectors), and equality deletes.
func deleteEntries(version int, types []spec.Type) []manifest.Entry {
	var es []manifest.Entry
	if version >= 3 {
		for k := 1; k <= 3; k++ {
			es = append(es, manifest.Entry{Status: manifest.StatusAdded, DataFile: manifest.DataFile{
				Content:            manifest.ContentPositionDeletes,
				FilePath:           "s3://bucket/tbl/data/dvs-1.puffin",
				FileFormat:         "PUFFIN",
				Partition:          partitionTuple(types, k),
				RecordCount:        int64(k * 3),
				FileSizeInBytes:    999,
				ReferencedDataFile: ptr(fmt.Sprintf("s3://bucket/tbl/data/part-%05d.parquet", k)),
				ContentOffset:      ptr(int64(4 + 40*(k-1))),
				ContentSizeInBytes: ptr[int64](40),
			}})
		}
	} else {
		es = append(es, manifest.Entry{Status: manifest.StatusAdded, DataFile: manifest.DataFile{
			Content:            manifest.ContentPositionDeletes,
			FilePath:           "s3://bucket/tbl/data/pos-1.parquet",
			FileFormat:         "PARQUET",
			Partition:          partitionTuple(types, 1),
			RecordCount:        12,
			FileSizeInBytes:    2048,
			ReferencedDataFile: ptr("s3://bucket/tbl/data/part-00001.parquet"),
			LowerBounds:        map[int][]byte{2147483545: must(spec.EncodeValue(spec.LongType{}, int64(3)))},
			UpperBounds:        map[int][]byte{2147483545: must(spec.EncodeValue(spec.LongType{}, int64(99)))},
		}})
		es = append(es, manifest.Entry{Status: manifest.StatusExisting, SnapshotID: ptr[int64](41),
			SequenceNumber: ptr[int64](2), FileSequenceNumber: ptr[int64](2), DataFile: manifest.DataFile{
				Content:         manifest.ContentPositionDeletes,
				FilePath:        "s3://bucket/tbl/data/pos-0.parquet",
				FileFormat:      "PARQUET",
				Partition:       partitionTuple(types, 2),
				RecordCount:     4,
				FileSizeInBytes: 1024,
			}})
	}
	es = append(es, manifest.Entry{Status: manifest.StatusAdded, DataFile: manifest.DataFile{
		Content:         manifest.ContentEqualityDeletes,
		FilePath:        "s3://bucket/tbl/data/eq-1.parquet",
		FileFormat:      "PARQUET",
		Partition:       partitionTuple(types, 4),
		RecordCount:     7,
		FileSizeInBytes: 512,
		EqualityIDs:     []int{1, 2},
		SortOrderID:     ptr[int32](0),
	}})
	es = append(es, manifest.Entry{Status: manifest.StatusDeleted, SnapshotID: ptr[int64](42),
		SequenceNumber: ptr[int64](1), FileSequenceNumber: ptr[int64](1), DataFile: manifest.DataFile{
			Content:         manifest.ContentEqualityDeletes,
			FilePath:        "s3://bucket/tbl/data/eq-0.parquet",
			FileFormat:      "PARQUET",
			Partition:       partitionTuple(types, 0),
			RecordCount:     1,
			FileSizeInBytes: 256,
			EqualityIDs:     []int{1},
		}})
	return es
}
