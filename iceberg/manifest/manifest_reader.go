package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/hamba/avro/v2"
	"github.com/icectl/icectl/iceberg/spec"
)

var entryFieldNames = map[string]int{
	"status": 0, "snapshot_id": 1, "data_file": 2, "sequence_number": 3, "file_sequence_number": 4,
	"data_sequence_number": 3, // the name older PyIceberg releases wrote
}

var dataFileFieldNames = map[string]int{
	"file_path": 100, "file_format": 101, "partition": 102, "record_count": 103,
	"file_size_in_bytes": 104, "column_sizes": 108, "value_counts": 109, "null_value_counts": 110,
	"lower_bounds": 125, "upper_bounds": 128, "key_metadata": 131, "split_offsets": 132,
	"content": 134, "equality_ids": 135, "nan_value_counts": 137, "sort_order_id": 140,
	"first_row_id": 142, "referenced_data_file": 143, "content_offset": 144, "content_size_in_bytes": 145,
}

// Reader streams the entries of a manifest.
type Reader struct {
	in      lease // the container, until the end of the file or Close
	meta    ManifestMeta
	decode  func(*avro.Reader, *Entry)
	scratch Entry
	n       int

	inherit  bool
	mf       ManifestFile
	nextRow  int64 // next first_row_id to hand out under inheritance
	hasRowID bool
}

// OpenManifest reads a manifest's header and schema; entries are then read
// one at a time with Next.
func OpenManifest(r io.Reader, opts ...ReadOption) (*Reader, error) {
	o := collectOptions(opts)
	c, err := openContainer(r, o)
	if err != nil {
		return nil, fmt.Errorf("open manifest: %w", err)
	}
	cm, err := o.schemas.manifestHeader(c, o)
	if err != nil {
		c.close()
		return nil, fmt.Errorf("open manifest: %w", err)
	}
	return &Reader{in: lease{c: c}, meta: cm.meta, decode: cm.decode}, nil
}

// compiledManifest is what a Reader derives from a manifest's header,
// shared by the readers of manifests with the same header.
type compiledManifest struct {
	meta   ManifestMeta
	decode func(*avro.Reader, *Entry)
}

// compileManifest interprets a manifest's header and compiles the decoder
// of its entries.
func compileManifest(c *header, o readOptions) (*compiledManifest, error) {
	root, ok := c.schema.(*avro.RecordSchema)
	if !ok {
		return nil, fmt.Errorf("root schema is %s, want a record", c.schema.Type())
	}
	meta := ManifestMeta{Metadata: c.metadata()}
	if sj, ok := c.metaString("schema"); ok {
		meta.SchemaJSON = sj
		var s spec.Schema
		if err := json.Unmarshal([]byte(sj), &s); err != nil {
			return nil, fmt.Errorf("header schema: %w", err)
		}
		meta.Schema = &s
	}
	if v, ok := c.metaString("partition-spec-id"); ok {
		id, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("header partition-spec-id=%s is not a number", clip(strconv.Quote(v)))
		}
		meta.Spec.ID = id
	}
	partSchema := findPartitionSchema(root)
	if ps, ok := c.metaString("partition-spec"); ok {
		if err := json.Unmarshal([]byte(ps), &meta.Spec.Fields); err != nil {
			return nil, fmt.Errorf("header partition-spec: %w", err)
		}
		for i := range meta.Spec.Fields {
			if meta.Spec.Fields[i].FieldID < 0 { // v1 specs without ids
				meta.Spec.Fields[i].FieldID = 1000 + i
			}
		}
	} else if partSchema != nil {
		meta.Spec.Fields = specFromAvro(partSchema)
	}
	if v, ok := c.metaString("content"); ok && v == "deletes" {
		meta.Content = ManifestContentDeletes
	}
	var err error
	if meta.FormatVersion, err = headerVersion(meta.Metadata); err != nil {
		return nil, err
	}
	types := make([]spec.Type, len(meta.Spec.Fields))
	if meta.Schema != nil {
		for i, f := range meta.Spec.PartitionType(meta.Schema).Fields {
			types[i] = f.Type
		}
	}
	specID := int32(meta.Spec.ID)
	var dfSeen map[int]bool
	decode, seen, err := compileRecord(root, "manifest_entry", entryFieldNames, func(id int, f *avro.Field) (recordField[Entry], error) {
		t := f.Type()
		switch id {
		case 0:
			rd, err := nullable(t, intBase)
			return setVal(rd, func(e *Entry, v int32) { e.Status = EntryStatus(v) }), err
		case 1:
			rd, err := nullable(t, longBase)
			return setPtr(rd, func(e *Entry, v *int64) { e.SnapshotID = v }), err
		case 3:
			rd, err := nullable(t, longBase)
			return setPtr(rd, func(e *Entry, v *int64) { e.SequenceNumber = v }), err
		case 4:
			rd, err := nullable(t, longBase)
			return setPtr(rd, func(e *Entry, v *int64) { e.FileSequenceNumber = v }), err
		case 2:
			inner, present, err := unionPrefix(t)
			if err != nil {
				return nil, err
			}
			rec, ok := inner.(*avro.RecordSchema)
			if !ok {
				return nil, typeErr(inner, "data_file record")
			}
			dec, s, err := compileRecord(rec, "data_file", dataFileFieldNames, func(id int, f *avro.Field) (recordField[DataFile], error) {
				return dataFileField(id, f, meta.Spec.Fields, types, o)
			})
			if err != nil {
				return nil, err
			}
			dfSeen = s
			return func(r *avro.Reader, e *Entry) {
				if !present(r) {
					if r.Error == nil {
						r.ReportError("data_file", "data_file is null")
					}
					return
				}
				dec(r, &e.DataFile)
				e.DataFile.SpecID = specID
			}, nil
		}
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	if !seen[0] || !seen[2] {
		return nil, errors.New("schema lacks status (0) or data_file (2)")
	}
	for _, id := range []int{100, 101, 102, 103, 104} {
		if !dfSeen[id] {
			return nil, fmt.Errorf("data_file schema lacks required field id %d", id)
		}
	}
	if meta.FormatVersion == 0 {
		switch {
		case dfSeen[142] || dfSeen[144] || dfSeen[145]:
			meta.FormatVersion = 3
		case dfSeen[134] || seen[3]:
			meta.FormatVersion = 2
		default:
			meta.FormatVersion = 1
		}
	}
	return &compiledManifest{meta: meta, decode: decode}, nil
}

// findPartitionSchema returns the partition record (102) of data_file (2).
func findPartitionSchema(root *avro.RecordSchema) *avro.RecordSchema {
	for _, f := range root.Fields() {
		if id, ok := fieldID(f); (ok && id == 2) || (!ok && f.Name() == "data_file") {
			inner, _, _, err := optional(f.Type())
			df, ok := inner.(*avro.RecordSchema)
			if err != nil || !ok {
				return nil
			}
			for _, pf := range df.Fields() {
				if id, ok := fieldID(pf); (ok && id == 102) || (!ok && pf.Name() == "partition") {
					inner, _, _, err := optional(pf.Type())
					if err != nil {
						return nil
					}
					p, _ := inner.(*avro.RecordSchema)
					return p
				}
			}
			return nil
		}
	}
	return nil
}

// specFromAvro stands in for a missing partition-spec header: the fields of
// the partition record, in order, with unknown transforms.
func specFromAvro(rec *avro.RecordSchema) []spec.PartitionField {
	var out []spec.PartitionField
	for i, f := range rec.Fields() {
		id, ok := fieldID(f)
		if !ok {
			id = 1000 + i
		}
		out = append(out, spec.PartitionField{FieldID: id, Name: f.Name(), Transform: spec.Transform{Kind: spec.TransformUnknown, Raw: "unknown"}})
	}
	return out
}

func dataFileField(id int, f *avro.Field, fields []spec.PartitionField, types []spec.Type, o readOptions) (recordField[DataFile], error) {
	t := f.Type()
	if o.skipMetrics {
		switch id {
		case 108, 109, 110, 137, 132:
			return nil, nil // skipped by compileRecord
		case 125, 128:
			rd, err := nullable(t, func(s avro.Schema) (func(*avro.Reader) map[int][]byte, error) {
				return oneBoundBase(s, spec.FieldIDFilePath)
			})
			if id == 125 {
				return setVal(rd, func(d *DataFile, m map[int][]byte) { d.LowerBounds = m }), err
			}
			return setVal(rd, func(d *DataFile, m map[int][]byte) { d.UpperBounds = m }), err
		}
	}
	switch id {
	case 134:
		rd, err := nullable(t, intBase)
		return setVal(rd, func(d *DataFile, v int32) { d.Content = FileContent(v) }), err
	case 100:
		rd, err := nullable(t, stringBase)
		return setVal(rd, func(d *DataFile, v string) { d.FilePath = v }), err
	case 101:
		rd, err := nullable(t, formatBase)
		return setVal(rd, func(d *DataFile, v string) { d.FileFormat = v }), err
	case 102:
		inner, present, err := unionPrefix(t)
		if err != nil {
			return nil, err
		}
		dec, err := partitionDecoder(inner, fields, types)
		if err != nil {
			return nil, err
		}
		return func(r *avro.Reader, d *DataFile) {
			if present(r) {
				dec(r, d)
			} else {
				d.Partition = make([]any, len(fields))
			}
		}, nil
	case 103:
		rd, err := nullable(t, longBase)
		return setVal(rd, func(d *DataFile, v int64) { d.RecordCount = v }), err
	case 104:
		rd, err := nullable(t, longBase)
		return setVal(rd, func(d *DataFile, v int64) { d.FileSizeInBytes = v }), err
	case 108, 109, 110, 137:
		rd, err := nullable(t, func(s avro.Schema) (func(*avro.Reader) map[int]int64, error) {
			return intMapBase(s, longBase)
		})
		assign := map[int]func(*DataFile, map[int]int64){
			108: func(d *DataFile, m map[int]int64) { d.ColumnSizes = m },
			109: func(d *DataFile, m map[int]int64) { d.ValueCounts = m },
			110: func(d *DataFile, m map[int]int64) { d.NullValueCounts = m },
			137: func(d *DataFile, m map[int]int64) { d.NaNValueCounts = m },
		}[id]
		return setVal(rd, assign), err
	case 125, 128:
		rd, err := nullable(t, func(s avro.Schema) (func(*avro.Reader) map[int][]byte, error) {
			return intMapBase(s, bytesBase)
		})
		if id == 125 {
			return setVal(rd, func(d *DataFile, m map[int][]byte) { d.LowerBounds = m }), err
		}
		return setVal(rd, func(d *DataFile, m map[int][]byte) { d.UpperBounds = m }), err
	case 131:
		rd, err := nullable(t, bytesBase)
		return setVal(rd, func(d *DataFile, v []byte) { d.KeyMetadata = v }), err
	case 132:
		rd, err := nullable(t, func(s avro.Schema) (func(*avro.Reader) []int64, error) { return listBase(s, longBase) })
		return setVal(rd, func(d *DataFile, v []int64) { d.SplitOffsets = v }), err
	case 135:
		rd, err := nullable(t, func(s avro.Schema) (func(*avro.Reader) []int32, error) { return listBase(s, intBase) })
		return setVal(rd, func(d *DataFile, v []int32) {
			d.EqualityIDs = make([]int, len(v))
			for i, x := range v {
				d.EqualityIDs[i] = int(x)
			}
		}), err
	case 140:
		rd, err := nullable(t, intBase)
		return setPtr(rd, func(d *DataFile, v *int32) { d.SortOrderID = v }), err
	case 142:
		rd, err := nullable(t, longBase)
		return setPtr(rd, func(d *DataFile, v *int64) { d.FirstRowID = v }), err
	case 143:
		rd, err := nullable(t, stringBase)
		return setPtr(rd, func(d *DataFile, v *string) { d.ReferencedDataFile = v }), err
	case 144:
		rd, err := nullable(t, longBase)
		return setPtr(rd, func(d *DataFile, v *int64) { d.ContentOffset = v }), err
	case 145:
		rd, err := nullable(t, longBase)
		return setPtr(rd, func(d *DataFile, v *int64) { d.ContentSizeInBytes = v }), err
	}
	return nil, nil
}

// Meta returns the manifest's key/value metadata, interpreted. Its maps
// and pointers are shared by every manifest with the same header read
// through the same SchemaCache: do not modify them.
func (r *Reader) Meta() ManifestMeta { return r.meta }

// InheritFrom makes Next fill in what entries inherit from the manifest-list
// entry mf: a null snapshot id, null sequence numbers of ADDED entries (of
// every entry when mf's sequence number is 0, as for v1), and first_row_id of
// live data files. Call it before the first Next.
func (r *Reader) InheritFrom(mf ManifestFile) {
	r.inherit = true
	r.mf = mf
	if mf.FirstRowID != nil {
		r.hasRowID = true
		r.nextRow = *mf.FirstRowID
	}
}

// Close releases what the reader holds (its share of a Budget); reading
// to the end closes it too.
func (r *Reader) Close() { r.in.close() }

// Next returns the next entry, or io.EOF after the last.
func (r *Reader) Next() (Entry, error) {
	var e Entry
	block, err := r.in.next()
	if errors.Is(err, io.EOF) {
		return e, io.EOF
	}
	if err != nil {
		return e, fmt.Errorf("read manifest entry %d: %w", r.n, err)
	}
	// Decoding into the Reader's scratch entry keeps e off the heap: the
	// compiled decoder is a func value, so a pointer passed to it escapes.
	r.scratch = Entry{}
	r.decode(block, &r.scratch)
	e = r.scratch
	if err := block.Error; err != nil {
		return Entry{}, fmt.Errorf("decode manifest entry %d: %w", r.n, truncated(err))
	}
	if err := checkPath("file_path", e.DataFile.FilePath); err != nil {
		return Entry{}, fmt.Errorf("manifest entry %d: %w", r.n, err)
	}
	r.n++
	if r.inherit {
		r.applyInheritance(&e)
	}
	return e, nil
}

func (r *Reader) applyInheritance(e *Entry) {
	mf := &r.mf
	// The inherited values share one allocation: most entries of a
	// manifest inherit all of them.
	var blk *[4]int64
	slot := func(i int, v int64) *int64 {
		if blk == nil {
			blk = new([4]int64)
		}
		blk[i] = v
		return &blk[i]
	}
	if e.SnapshotID == nil {
		e.SnapshotID = slot(0, mf.AddedSnapshotID)
	}
	if e.Status == StatusAdded || mf.SequenceNumber == 0 {
		if e.SequenceNumber == nil {
			e.SequenceNumber = slot(1, mf.SequenceNumber)
		}
		if e.FileSequenceNumber == nil {
			e.FileSequenceNumber = slot(2, mf.SequenceNumber)
		}
	}
	df := &e.DataFile
	if df.Content != ContentData {
		df.FirstRowID = nil
		return
	}
	if !r.hasRowID {
		df.FirstRowID = nil
		return
	}
	if df.FirstRowID == nil && e.Status != StatusDeleted {
		df.FirstRowID = slot(3, r.nextRow)
		r.nextRow += df.RecordCount
	}
}
