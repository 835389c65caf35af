package manifest

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/hamba/avro/v2"
)

// listFieldNames resolves manifest_file fields written without a field-id,
// including the names Java used before 1.5.
var listFieldNames = map[string]int{
	"manifest_path": 500, "manifest_length": 501, "partition_spec_id": 502,
	"added_snapshot_id": 503, "added_files_count": 504, "added_data_files_count": 504,
	"existing_files_count": 505, "existing_data_files_count": 505,
	"deleted_files_count": 506, "deleted_data_files_count": 506, "partitions": 507,
	"added_rows_count": 512, "existing_rows_count": 513, "deleted_rows_count": 514,
	"sequence_number": 515, "min_sequence_number": 516, "content": 517,
	"key_metadata": 519, "first_row_id": 520,
}

var summaryFieldNames = map[string]int{
	"contains_null": 509, "lower_bound": 510, "upper_bound": 511, "contains_nan": 518,
}

// ListReader streams the entries of a manifest list.
type ListReader struct {
	in     lease // the container, until the end of the file or Close
	header ListHeader
	decode func(*avro.Reader, *ManifestFile)
	n      int
}

// OpenManifestList reads a manifest list's header and schema; entries are
// then read one at a time with Next.
func OpenManifestList(r io.Reader, opts ...ReadOption) (*ListReader, error) {
	o := collectOptions(opts)
	c, err := openContainer(r, o)
	if err != nil {
		return nil, fmt.Errorf("open manifest list: %w", err)
	}
	cl, err := o.schemas.listDecoder(c)
	if err != nil {
		c.close()
		return nil, fmt.Errorf("open manifest list: %w", err)
	}
	h, err := listHeader(c, cl.seen)
	if err != nil {
		c.close()
		return nil, fmt.Errorf("open manifest list: %w", err)
	}
	return &ListReader{in: lease{c: c}, header: h, decode: cl.decode}, nil
}

// compiledList is the decoder of a manifest list's entries, shared by the
// lists with the same Avro schema.
type compiledList struct {
	decode func(*avro.Reader, *ManifestFile)
	seen   map[int]bool // the field ids the schema has
}

func compileList(c *header) (*compiledList, error) {
	rec, ok := c.schema.(*avro.RecordSchema)
	if !ok {
		return nil, fmt.Errorf("root schema is %s, want a record", c.schema.Type())
	}
	decode, seen, err := compileRecord(rec, "manifest_file", listFieldNames, manifestFileField)
	if err != nil {
		return nil, err
	}
	for _, id := range []int{500, 501, 502, 503} {
		if !seen[id] {
			return nil, fmt.Errorf("schema lacks required field id %d", id)
		}
	}
	return &compiledList{decode: decode, seen: seen}, nil
}

// listHeader interprets a manifest list's header; seen are the field ids
// of its schema.
func listHeader(c *container, seen map[int]bool) (ListHeader, error) {
	h := ListHeader{Metadata: make(map[string]string, len(c.fields))}
	for _, f := range c.fields {
		h.Metadata[string(f.key)] = string(f.val)
	}
	var err error
	if h.FormatVersion, err = headerVersion(h.Metadata); err != nil {
		return ListHeader{}, err
	}
	if h.FormatVersion == 0 {
		switch {
		case seen[520]:
			h.FormatVersion = 3
		case seen[517] || seen[515]:
			h.FormatVersion = 2
		default:
			h.FormatVersion = 1
		}
	}
	for key, dst := range map[string]**int64{
		"snapshot-id": &h.SnapshotID, "parent-snapshot-id": &h.ParentSnapshotID,
		"sequence-number": &h.SequenceNumber, "first-row-id": &h.FirstRowID,
	} {
		v, ok := h.Metadata[key]
		if !ok || v == "null" || v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return ListHeader{}, fmt.Errorf("header %s=%s is not a number", key, clip(strconv.Quote(v)))
		}
		*dst = &n
	}
	return h, nil
}

func headerVersion(meta map[string]string) (int, error) {
	v, ok := meta["format-version"]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("header format-version=%s is not a valid version", clip(strconv.Quote(v)))
	}
	if n > 3 {
		return 0, fmt.Errorf("format-version %d is newer than this reader supports (3)", n)
	}
	return n, nil
}

// Header returns the list's key/value metadata.
func (l *ListReader) Header() ListHeader { return l.header }

// Close releases what the reader holds (its share of a Budget); reading
// to the end closes it too.
func (l *ListReader) Close() { l.in.close() }

// Next returns the next manifest, or io.EOF after the last.
func (l *ListReader) Next() (ManifestFile, error) {
	var mf ManifestFile
	block, err := l.in.next()
	if errors.Is(err, io.EOF) {
		return mf, io.EOF
	}
	if err != nil {
		return mf, fmt.Errorf("read manifest list entry %d: %w", l.n, err)
	}
	l.decode(block, &mf)
	if err := block.Error; err != nil {
		return ManifestFile{}, fmt.Errorf("decode manifest list entry %d: %w", l.n, truncated(err))
	}
	if err := checkPath("manifest_path", mf.Path); err != nil {
		return ManifestFile{}, fmt.Errorf("manifest list entry %d: %w", l.n, err)
	}
	l.n++
	return mf, nil
}

func manifestFileField(id int, f *avro.Field) (recordField[ManifestFile], error) {
	t := f.Type()
	switch id {
	case 500:
		rd, err := nullable(t, stringBase)
		return setVal(rd, func(m *ManifestFile, v string) { m.Path = v }), err
	case 501:
		rd, err := nullable(t, longBase)
		return setVal(rd, func(m *ManifestFile, v int64) { m.Length = v }), err
	case 502:
		rd, err := nullable(t, intBase)
		return setVal(rd, func(m *ManifestFile, v int32) { m.SpecID = v }), err
	case 517:
		rd, err := nullable(t, intBase)
		return setVal(rd, func(m *ManifestFile, v int32) { m.Content = ManifestContent(v) }), err
	case 515:
		rd, err := nullable(t, longBase)
		return setVal(rd, func(m *ManifestFile, v int64) { m.SequenceNumber = v }), err
	case 516:
		rd, err := nullable(t, longBase)
		return setVal(rd, func(m *ManifestFile, v int64) { m.MinSequenceNumber = v }), err
	case 503:
		rd, err := nullable(t, longBase)
		return setVal(rd, func(m *ManifestFile, v int64) { m.AddedSnapshotID = v }), err
	case 504:
		rd, err := nullable(t, intBase)
		return setPtr(rd, func(m *ManifestFile, v *int32) { m.AddedFilesCount = v }), err
	case 505:
		rd, err := nullable(t, intBase)
		return setPtr(rd, func(m *ManifestFile, v *int32) { m.ExistingFilesCount = v }), err
	case 506:
		rd, err := nullable(t, intBase)
		return setPtr(rd, func(m *ManifestFile, v *int32) { m.DeletedFilesCount = v }), err
	case 512:
		rd, err := nullable(t, longBase)
		return setPtr(rd, func(m *ManifestFile, v *int64) { m.AddedRowsCount = v }), err
	case 513:
		rd, err := nullable(t, longBase)
		return setPtr(rd, func(m *ManifestFile, v *int64) { m.ExistingRowsCount = v }), err
	case 514:
		rd, err := nullable(t, longBase)
		return setPtr(rd, func(m *ManifestFile, v *int64) { m.DeletedRowsCount = v }), err
	case 519:
		rd, err := nullable(t, bytesBase)
		return setVal(rd, func(m *ManifestFile, v []byte) { m.KeyMetadata = v }), err
	case 520:
		rd, err := nullable(t, longBase)
		return setPtr(rd, func(m *ManifestFile, v *int64) { m.FirstRowID = v }), err
	case 507:
		rd, err := nullable(t, func(s avro.Schema) (func(*avro.Reader) []FieldSummary, error) {
			return listBase(s, summaryBase)
		})
		return setVal(rd, func(m *ManifestFile, v []FieldSummary) { m.Partitions = v }), err
	}
	return nil, nil
}

func summaryBase(s avro.Schema) (func(*avro.Reader) FieldSummary, error) {
	rec, ok := s.(*avro.RecordSchema)
	if !ok {
		return nil, typeErr(s, "field_summary record")
	}
	dec, seen, err := compileRecord(rec, "field_summary", summaryFieldNames, func(id int, f *avro.Field) (recordField[FieldSummary], error) {
		t := f.Type()
		switch id {
		case 509:
			rd, err := nullable(t, boolBase)
			return setVal(rd, func(d *FieldSummary, v bool) { d.ContainsNull = v }), err
		case 518:
			rd, err := nullable(t, boolBase)
			return setPtr(rd, func(d *FieldSummary, v *bool) { d.ContainsNaN = v }), err
		case 510:
			rd, err := nullable(t, bytesBase)
			return setVal(rd, func(d *FieldSummary, v []byte) { d.LowerBound = v }), err
		case 511:
			rd, err := nullable(t, bytesBase)
			return setVal(rd, func(d *FieldSummary, v []byte) { d.UpperBound = v }), err
		}
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	if !seen[509] {
		return nil, fmt.Errorf("field_summary lacks contains_null (509)")
	}
	return func(r *avro.Reader) FieldSummary {
		var fs FieldSummary
		dec(r, &fs)
		return fs
	}, nil
}
