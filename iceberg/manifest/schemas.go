package manifest

import (
	"github.com/icectl/icectl/iceberg/spec"
)

// The Iceberg structs of the files this package writes, field for field and
// in the order of Java's V2Metadata/V3Metadata.

func req(id int, name string, t spec.Type, doc string) spec.NestedField {
	return spec.NestedField{ID: id, Name: name, Type: t, Required: true, Doc: doc}
}

func opt(id int, name string, t spec.Type, doc string) spec.NestedField {
	return spec.NestedField{ID: id, Name: name, Type: t, Doc: doc}
}

func intLongMap(k, v int) *spec.MapType {
	return &spec.MapType{KeyID: k, Key: spec.IntType{}, ValueID: v, Value: spec.LongType{}, ValueRequired: true}
}

func intBinaryMap(k, v int) *spec.MapType {
	return &spec.MapType{KeyID: k, Key: spec.IntType{}, ValueID: v, Value: spec.BinaryType{}, ValueRequired: true}
}

func manifestListFields(version int) []spec.NestedField {
	summary := &spec.StructType{Fields: []spec.NestedField{
		req(509, "contains_null", spec.BooleanType{}, "True if any file has a null partition value"),
		opt(518, "contains_nan", spec.BooleanType{}, "True if any file has a nan partition value"),
		opt(510, "lower_bound", spec.BinaryType{}, "Partition lower bound for all files"),
		opt(511, "upper_bound", spec.BinaryType{}, "Partition upper bound for all files"),
	}}
	fs := []spec.NestedField{
		req(500, "manifest_path", spec.StringType{}, "Location URI with FS scheme"),
		req(501, "manifest_length", spec.LongType{}, "Total file size in bytes"),
		req(502, "partition_spec_id", spec.IntType{}, "Spec ID used to write"),
		req(517, "content", spec.IntType{}, "Contents of the manifest: 0=data, 1=deletes"),
		req(515, "sequence_number", spec.LongType{}, "Sequence number when the manifest was added"),
		req(516, "min_sequence_number", spec.LongType{}, "Lowest sequence number in the manifest"),
		req(503, "added_snapshot_id", spec.LongType{}, "Snapshot ID that added the manifest"),
		req(504, "added_files_count", spec.IntType{}, "Added entry count"),
		req(505, "existing_files_count", spec.IntType{}, "Existing entry count"),
		req(506, "deleted_files_count", spec.IntType{}, "Deleted entry count"),
		req(512, "added_rows_count", spec.LongType{}, "Added rows count"),
		req(513, "existing_rows_count", spec.LongType{}, "Existing rows count"),
		req(514, "deleted_rows_count", spec.LongType{}, "Deleted rows count"),
		opt(507, "partitions", &spec.ListType{ElementID: 508, Element: summary, ElementRequired: true}, "Summary for each partition"),
		opt(519, "key_metadata", spec.BinaryType{}, "Encryption key metadata blob"),
	}
	if version >= 3 {
		fs = append(fs, opt(520, "first_row_id", spec.LongType{}, "Starting row ID to assign to new rows in ADDED data files"))
	}
	return fs
}

func manifestEntryFields(version int, partition *spec.StructType) []spec.NestedField {
	df := []spec.NestedField{
		req(134, "content", spec.IntType{}, "Contents of the file: 0=data, 1=position deletes, 2=equality deletes"),
		req(100, "file_path", spec.StringType{}, "Location URI with FS scheme"),
		req(101, "file_format", spec.StringType{}, "File format name: avro, orc, or parquet"),
		req(102, "partition", partition, "Partition data tuple, schema based on the partition spec"),
		req(103, "record_count", spec.LongType{}, "Number of records in the file"),
		req(104, "file_size_in_bytes", spec.LongType{}, "Total file size in bytes"),
		opt(108, "column_sizes", intLongMap(117, 118), "Map of column id to total size on disk"),
		opt(109, "value_counts", intLongMap(119, 120), "Map of column id to total count, including null and NaN"),
		opt(110, "null_value_counts", intLongMap(121, 122), "Map of column id to null value count"),
		opt(137, "nan_value_counts", intLongMap(138, 139), "Map of column id to number of NaN values in the column"),
		opt(125, "lower_bounds", intBinaryMap(126, 127), "Map of column id to lower bound"),
		opt(128, "upper_bounds", intBinaryMap(129, 130), "Map of column id to upper bound"),
		opt(131, "key_metadata", spec.BinaryType{}, "Encryption key metadata blob"),
		opt(132, "split_offsets", &spec.ListType{ElementID: 133, Element: spec.LongType{}, ElementRequired: true}, "Splittable offsets"),
		opt(135, "equality_ids", &spec.ListType{ElementID: 136, Element: spec.IntType{}, ElementRequired: true}, "Equality comparison field IDs"),
		opt(140, "sort_order_id", spec.IntType{}, "Sort order ID"),
	}
	if version >= 3 {
		df = append(df, opt(142, "first_row_id", spec.LongType{}, "The first row ID assigned to the first row in the data file"))
	}
	df = append(df, opt(143, "referenced_data_file", spec.StringType{}, "Fully qualified location (URI with FS scheme) of a data file that all deletes reference"))
	if version >= 3 {
		df = append(df,
			opt(144, "content_offset", spec.LongType{}, "The offset in the file where the content starts"),
			opt(145, "content_size_in_bytes", spec.LongType{}, "The length of referenced content stored in the file"))
	}
	return []spec.NestedField{
		req(0, "status", spec.IntType{}, ""),
		opt(1, "snapshot_id", spec.LongType{}, ""),
		opt(3, "sequence_number", spec.LongType{}, ""),
		opt(4, "file_sequence_number", spec.LongType{}, ""),
		req(2, "data_file", &spec.StructType{Fields: df}, ""),
	}
}
