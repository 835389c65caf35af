// Package foreign writes manifests and manifest lists laid out as other
// Iceberg writers lay them out, so that tests read what those engines leave
// in a table rather than what icectl itself writes:
//
//   - PyIceberg: the Avro schemas its manifest.py declares (DATA_FILE_TYPE,
//     MANIFEST_ENTRY_SCHEMAS, MANIFEST_LIST_FILE_SCHEMAS) converted as its
//     schema_conversion.py does: records named r<field id>, optional fields as
//     ["null", T], maps with int keys as arrays of k<id>_v<id> records,
//     and equality_ids as a list of long.
//   - BigQuery: every field of every record, data_file and partition
//     included, a ["null", T] union, and manifest entries holding only status
//     and data_file (snapshot and sequence numbers are inherited), as BigQuery
//     writes them (its writer is not open source; the layout is the one
//     reported by readers that failed on it, e.g. ClickHouse issue 114480).
//
// It is test support: it writes what it is given without the checks of
// manifest.Writer, and must never be used for a table's real manifests.
package foreign

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/hamba/avro/v2"
	"github.com/hamba/avro/v2/ocf"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// Engine is the writer whose layout is reproduced.
type Engine int

const (
	PyIceberg Engine = iota
	BigQuery
)

func (e Engine) String() string {
	switch e {
	case PyIceberg:
		return "pyiceberg"
	case BigQuery:
		return "bigquery"
	}
	return "engine(" + strconv.Itoa(int(e)) + ")"
}

// Engines lists every engine, for table-driven tests.
var Engines = []Engine{PyIceberg, BigQuery}

// field is one record field of the schema being built; value picks its
// value out of the Go value of the enclosing record.
type field struct {
	name     string
	id       int
	typ      any // Avro type JSON (string or map)
	optional bool
	doc      string
}

// schemaBuilder renders fields as the engine does.
type schemaBuilder struct{ engine Engine }

func (b schemaBuilder) record(name string, fields []field) map[string]any {
	out := make([]any, 0, len(fields))
	for _, f := range fields {
		t := f.typ
		opt := f.optional || b.engine == BigQuery
		if opt {
			t = []any{"null", t}
		}
		m := map[string]any{"name": f.name, "field-id": f.id, "type": t}
		if opt {
			m["default"] = nil
		}
		if f.doc != "" {
			m["doc"] = f.doc
		}
		out = append(out, m)
	}
	return map[string]any{"type": "record", "name": name, "fields": out}
}

// intMap is an Iceberg map with int keys: an array of key/value records.
func (b schemaBuilder) intMap(keyID, valueID int, value any) map[string]any {
	return map[string]any{
		"type": "array",
		"items": b.record(fmt.Sprintf("k%d_v%d", keyID, valueID), []field{
			{name: "key", id: keyID, typ: "int"},
			{name: "value", id: valueID, typ: value},
		}),
		"logicalType": "map",
	}
}

func list(elementID int, item any) map[string]any {
	return map[string]any{"type": "array", "element-id": elementID, "items": item}
}

// avroType is the Avro type PyIceberg's ConvertSchemaToAvro gives a
// primitive Iceberg type.
func avroType(t spec.Type) (any, error) {
	switch v := t.(type) {
	case spec.BooleanType:
		return "boolean", nil
	case spec.IntType:
		return "int", nil
	case spec.LongType:
		return "long", nil
	case spec.FloatType:
		return "float", nil
	case spec.DoubleType:
		return "double", nil
	case spec.DateType:
		return map[string]any{"type": "int", "logicalType": "date"}, nil
	case spec.TimeType:
		return map[string]any{"type": "long", "logicalType": "time-micros"}, nil
	case spec.TimestampType:
		return map[string]any{"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": false}, nil
	case spec.TimestampTzType:
		return map[string]any{"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": true}, nil
	case spec.StringType:
		return "string", nil
	case spec.BinaryType:
		return "bytes", nil
	case spec.UUIDType:
		return map[string]any{"type": "fixed", "size": 16, "logicalType": "uuid", "name": "uuid_fixed"}, nil
	case spec.FixedType:
		return map[string]any{"type": "fixed", "size": v.Length, "name": "fixed_" + strconv.Itoa(v.Length)}, nil
	}
	return nil, fmt.Errorf("partition type %s is not supported by the foreign writer", t)
}

// entrySchema is the manifest_entry schema of the engine, version 1 or 2.
func entrySchema(e Engine, version int, pt *spec.StructType) (map[string]any, error) {
	b := schemaBuilder{engine: e}
	var partFields []field
	for _, f := range pt.Fields {
		t, err := avroType(f.Type)
		if err != nil {
			return nil, err
		}
		partFields = append(partFields, field{name: f.Name, id: f.ID, typ: t, optional: !f.Required})
	}
	df := []field{
		{name: "file_path", id: 100, typ: "string", doc: "Location URI with FS scheme"},
		{name: "file_format", id: 101, typ: "string", doc: "File format name: avro, orc, or parquet"},
		{name: "partition", id: 102, typ: b.record("r102", partFields), doc: "Partition data tuple, schema based on the partition spec"},
		{name: "record_count", id: 103, typ: "long", doc: "Number of records in the file"},
		{name: "file_size_in_bytes", id: 104, typ: "long", doc: "Total file size in bytes"},
	}
	if version == 1 {
		df = append(df, field{name: "block_size_in_bytes", id: 105, typ: "long"})
	}
	df = append(df,
		field{name: "column_sizes", id: 108, typ: b.intMap(117, 118, "long"), optional: true},
		field{name: "value_counts", id: 109, typ: b.intMap(119, 120, "long"), optional: true},
		field{name: "null_value_counts", id: 110, typ: b.intMap(121, 122, "long"), optional: true},
		field{name: "nan_value_counts", id: 137, typ: b.intMap(138, 139, "long"), optional: true},
		field{name: "lower_bounds", id: 125, typ: b.intMap(126, 127, "bytes"), optional: true},
		field{name: "upper_bounds", id: 128, typ: b.intMap(129, 130, "bytes"), optional: true},
		field{name: "key_metadata", id: 131, typ: "bytes", optional: true},
		field{name: "split_offsets", id: 132, typ: list(133, "long"), optional: true},
	)
	if version >= 2 {
		df = append([]field{{name: "content", id: 134, typ: "int"}}, df...)
		// PyIceberg declares the elements LongType; Java writes int.
		df = append(df, field{name: "equality_ids", id: 135, typ: list(136, "long"), optional: true})
	}
	df = append(df, field{name: "sort_order_id", id: 140, typ: "int", optional: true})

	entry := []field{{name: "status", id: 0, typ: "int"}}
	switch {
	case e == BigQuery:
		// status and data_file only: the rest is inherited.
	case version == 1:
		entry = append(entry, field{name: "snapshot_id", id: 1, typ: "long"})
	default:
		entry = append(entry,
			field{name: "snapshot_id", id: 1, typ: "long", optional: true},
			field{name: "sequence_number", id: 3, typ: "long", optional: true},
			field{name: "file_sequence_number", id: 4, typ: "long", optional: true},
		)
	}
	entry = append(entry, field{name: "data_file", id: 2, typ: b.record("r2", df)})
	return b.record("manifest_entry", entry), nil
}

// listSchema is the manifest_file schema of the engine, version 2.
func listSchema(e Engine) map[string]any {
	b := schemaBuilder{engine: e}
	summary := b.record("r508", []field{
		{name: "contains_null", id: 509, typ: "boolean"},
		{name: "contains_nan", id: 518, typ: "boolean", optional: true},
		{name: "lower_bound", id: 510, typ: "bytes", optional: true},
		{name: "upper_bound", id: 511, typ: "bytes", optional: true},
	})
	return b.record("manifest_file", []field{
		{name: "manifest_path", id: 500, typ: "string", doc: "Location URI with FS scheme"},
		{name: "manifest_length", id: 501, typ: "long"},
		{name: "partition_spec_id", id: 502, typ: "int"},
		{name: "content", id: 517, typ: "int"},
		{name: "sequence_number", id: 515, typ: "long"},
		{name: "min_sequence_number", id: 516, typ: "long"},
		{name: "added_snapshot_id", id: 503, typ: "long"},
		{name: "added_files_count", id: 504, typ: "int"},
		{name: "existing_files_count", id: 505, typ: "int"},
		{name: "deleted_files_count", id: 506, typ: "int"},
		{name: "added_rows_count", id: 512, typ: "long"},
		{name: "existing_rows_count", id: 513, typ: "long"},
		{name: "deleted_rows_count", id: 514, typ: "long"},
		{name: "partitions", id: 507, typ: list(508, summary), optional: true},
		{name: "key_metadata", id: 519, typ: "bytes", optional: true},
	})
}

// ManifestOptions describes a manifest to write.
type ManifestOptions struct {
	Engine  Engine
	Version int // 1 or 2
	Content manifest.ManifestContent
	Schema  *spec.Schema
	Spec    spec.PartitionSpec
}

// WriteManifest writes entries as opts.Engine would and returns the
// number of bytes written.
func WriteManifest(w io.Writer, opts ManifestOptions, entries []manifest.Entry) (int64, error) {
	if opts.Version != 1 && opts.Version != 2 {
		return 0, fmt.Errorf("foreign manifest: version %d is not supported", opts.Version)
	}
	pt := opts.Spec.PartitionType(opts.Schema)
	sj, err := entrySchema(opts.Engine, opts.Version, pt)
	if err != nil {
		return 0, err
	}
	tableSchema, err := json.Marshal(opts.Schema)
	if err != nil {
		return 0, err
	}
	specFields := opts.Spec.Fields
	if specFields == nil {
		specFields = []spec.PartitionField{}
	}
	specJSON, err := json.Marshal(specFields)
	if err != nil {
		return 0, err
	}
	meta := map[string][]byte{
		"schema":            tableSchema,
		"partition-spec":    specJSON,
		"partition-spec-id": []byte(strconv.Itoa(opts.Spec.ID)),
		"format-version":    []byte(strconv.Itoa(opts.Version)),
	}
	if opts.Version >= 2 {
		meta["content"] = []byte("data")
		if opts.Content == manifest.ManifestContentDeletes {
			meta["content"] = []byte("deletes")
		}
	}
	values := make([]any, 0, len(entries))
	for _, en := range entries {
		v, err := entryValue(opts.Engine, opts.Version, pt, en)
		if err != nil {
			return 0, err
		}
		values = append(values, v)
	}
	return writeContainer(w, sj, meta, values)
}

// ListOptions describes a manifest list to write (format v2).
type ListOptions struct {
	Engine           Engine
	SnapshotID       int64
	ParentSnapshotID *int64
	SequenceNumber   int64
}

// WriteManifestList writes a v2 manifest list as opts.Engine would.
func WriteManifestList(w io.Writer, opts ListOptions, files []manifest.ManifestFile) (int64, error) {
	meta := map[string][]byte{
		"snapshot-id":     []byte(strconv.FormatInt(opts.SnapshotID, 10)),
		"sequence-number": []byte(strconv.FormatInt(opts.SequenceNumber, 10)),
		"format-version":  []byte("2"),
	}
	meta["parent-snapshot-id"] = []byte("null")
	if opts.ParentSnapshotID != nil {
		meta["parent-snapshot-id"] = []byte(strconv.FormatInt(*opts.ParentSnapshotID, 10))
	}
	values := make([]any, 0, len(files))
	for _, mf := range files {
		var parts []any
		for _, s := range mf.Partitions {
			p := map[string]any{"contains_null": s.ContainsNull, "lower_bound": nilBytes(s.LowerBound), "upper_bound": nilBytes(s.UpperBound)}
			if s.ContainsNaN != nil {
				p["contains_nan"] = *s.ContainsNaN
			}
			parts = append(parts, p)
		}
		values = append(values, map[string]any{
			"manifest_path": mf.Path, "manifest_length": mf.Length, "partition_spec_id": mf.SpecID,
			"content": int32(mf.Content), "sequence_number": mf.SequenceNumber, "min_sequence_number": mf.MinSequenceNumber,
			"added_snapshot_id": mf.AddedSnapshotID, "added_files_count": deref(mf.AddedFilesCount),
			"existing_files_count": deref(mf.ExistingFilesCount), "deleted_files_count": deref(mf.DeletedFilesCount),
			"added_rows_count": deref(mf.AddedRowsCount), "existing_rows_count": deref(mf.ExistingRowsCount),
			"deleted_rows_count": deref(mf.DeletedRowsCount), "partitions": listOrNil(parts), "key_metadata": nilBytes(mf.KeyMetadata),
		})
	}
	return writeContainer(w, listSchema(opts.Engine), meta, values)
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func nilBytes(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

func listOrNil(v []any) any {
	if v == nil {
		return nil
	}
	return v
}

func intMapValue[V any](m map[int]V) any {
	if m == nil {
		return nil
	}
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]any, 0, len(m))
	for _, k := range keys {
		out = append(out, map[string]any{"key": int32(k), "value": m[k]})
	}
	return out
}

func entryValue(e Engine, version int, pt *spec.StructType, en manifest.Entry) (map[string]any, error) {
	df := en.DataFile
	part := map[string]any{}
	for i, f := range pt.Fields {
		if i < len(df.Partition) {
			part[f.Name] = df.Partition[i]
		}
	}
	d := map[string]any{
		"content": int32(df.Content), "file_path": df.FilePath, "file_format": df.FileFormat, "partition": part,
		"record_count": df.RecordCount, "file_size_in_bytes": df.FileSizeInBytes, "block_size_in_bytes": int64(64 << 20),
		"column_sizes": intMapValue(df.ColumnSizes), "value_counts": intMapValue(df.ValueCounts),
		"null_value_counts": intMapValue(df.NullValueCounts), "nan_value_counts": intMapValue(df.NaNValueCounts),
		"lower_bounds": intMapValue(df.LowerBounds), "upper_bounds": intMapValue(df.UpperBounds),
		"key_metadata": nilBytes(df.KeyMetadata), "sort_order_id": deref(df.SortOrderID),
	}
	if df.SplitOffsets != nil {
		offs := make([]any, len(df.SplitOffsets))
		for i, o := range df.SplitOffsets {
			offs[i] = o
		}
		d["split_offsets"] = offs
	}
	if df.EqualityIDs != nil {
		ids := make([]any, len(df.EqualityIDs))
		for i, id := range df.EqualityIDs {
			ids[i] = int64(id)
		}
		d["equality_ids"] = ids
	}
	if df.FirstRowID != nil || df.ReferencedDataFile != nil || df.ContentOffset != nil {
		return nil, fmt.Errorf("foreign manifest: %s carries v3 fields, which the %s layout here does not hold", df.FilePath, e)
	}
	out := map[string]any{"status": int32(en.Status), "data_file": d}
	if e == BigQuery {
		if en.Status != manifest.StatusAdded || en.SnapshotID != nil || en.SequenceNumber != nil || en.FileSequenceNumber != nil {
			return nil, fmt.Errorf("foreign manifest: a BigQuery entry can only be ADDED with inherited snapshot and sequence numbers (%s)", df.FilePath)
		}
		return out, nil
	}
	out["snapshot_id"] = deref(en.SnapshotID)
	if version >= 2 {
		out["sequence_number"] = deref(en.SequenceNumber)
		out["file_sequence_number"] = deref(en.FileSequenceNumber)
	}
	return out, nil
}

// writeContainer writes an Avro object container of values with the
// schema given as JSON, uncompressed, as PyIceberg does by default.
func writeContainer(w io.Writer, schemaJSON map[string]any, meta map[string][]byte, values []any) (int64, error) {
	sj, err := json.Marshal(schemaJSON)
	if err != nil {
		return 0, err
	}
	schema, err := avro.ParseWithCache(string(sj), "", &avro.SchemaCache{})
	if err != nil {
		return 0, fmt.Errorf("foreign schema: %w", err)
	}
	cw := &fileio.CountingWriter{W: w}
	enc, err := ocf.NewEncoderWithSchema(schema, cw, ocf.WithMetadata(meta),
		ocf.WithEncoderSchemaCache(&avro.SchemaCache{}),
		ocf.WithSchemaMarshaler(func(avro.Schema) ([]byte, error) { return sj, nil }))
	if err != nil {
		return 0, err
	}
	var buf bytes.Buffer
	aw := avro.NewWriter(&buf, 512)
	for _, v := range values {
		buf.Reset()
		if err := encode(aw, schema, v); err != nil {
			return 0, err
		}
		if err := aw.Flush(); err != nil {
			return 0, err
		}
		if _, err := enc.Write(buf.Bytes()); err != nil {
			return 0, err
		}
	}
	if err := enc.Close(); err != nil {
		return 0, err
	}
	return cw.N, nil
}
