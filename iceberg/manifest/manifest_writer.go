package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/hamba/avro/v2"
	"github.com/icectl/icectl/iceberg/spec"
)

// WriterOptions describes the manifest a Writer produces.
type WriterOptions struct {
	Version    int // 2 or 3
	Content    ManifestContent
	Schema     *spec.Schema
	Spec       spec.PartitionSpec
	SnapshotID int64 // written for ADDED and DELETED entries without one
	// InheritSnapshotID leaves the snapshot id of ADDED entries without
	// one null, so that they inherit the added_snapshot_id the manifest
	// list gives the manifest: a manifest written before its snapshot's
	// id is final (and reused when a commit retries under a new id).
	// SnapshotID is then ignored for ADDED entries.
	InheritSnapshotID bool
	// Schemas, when set, parses the entry schema once for all the writers
	// (and readers) of a run that share it.
	Schemas *SchemaCache
}

// Writer writes a manifest the way Java's ManifestWriter does.
type Writer struct {
	opts    WriterOptions
	types   []spec.Type
	enc     *ocfWriter
	buf     bytes.Buffer
	aw      *avro.Writer
	stats   manifestStats
	summary []*fieldStats
	closed  bool
}

type manifestStats struct {
	added, existing, deleted         int32
	addedRows, existingRows, delRows int64
	minSeq                           *int64
}

// NewWriter starts a manifest on w.
func NewWriter(w io.Writer, opts WriterOptions) (*Writer, error) {
	if opts.Version != 2 && opts.Version != 3 {
		return nil, fmt.Errorf("new manifest writer: format version %d cannot be written (want 2 or 3)", opts.Version)
	}
	if opts.Schema == nil {
		return nil, errors.New("new manifest writer: no table schema")
	}
	pt := opts.Spec.PartitionType(opts.Schema)
	types := make([]spec.Type, len(pt.Fields))
	for i, f := range pt.Fields {
		if f.Type == nil {
			return nil, fmt.Errorf("new manifest writer: partition field %q has an unknown transform or a missing source column", f.Name)
		}
		types[i] = f.Type
	}
	fields := manifestEntryFields(opts.Version, pt)
	schemaJSON, err := avroSchemaJSON("manifest_entry", fields)
	if err != nil {
		return nil, fmt.Errorf("new manifest writer: %w", err)
	}
	tableSchema, err := json.Marshal(opts.Schema)
	if err != nil {
		return nil, fmt.Errorf("new manifest writer: schema: %w", err)
	}
	specFields := opts.Spec.Fields
	if specFields == nil {
		specFields = []spec.PartitionField{}
	}
	specJSON, err := json.Marshal(specFields)
	if err != nil {
		return nil, fmt.Errorf("new manifest writer: partition spec: %w", err)
	}
	icebergSchema, err := json.Marshal(spec.Schema{Fields: fields})
	if err != nil {
		return nil, fmt.Errorf("new manifest writer: entry schema: %w", err)
	}
	content := "data"
	if opts.Content == ManifestContentDeletes {
		content = "deletes"
	}
	enc, err := newOCF(w, schemaJSON, map[string][]byte{
		"schema":            tableSchema,
		"partition-spec":    specJSON,
		"partition-spec-id": []byte(strconv.Itoa(opts.Spec.ID)),
		"format-version":    []byte(strconv.Itoa(opts.Version)),
		"content":           []byte(content),
		"iceberg.schema":    icebergSchema,
	}, opts.Schemas)
	if err != nil {
		return nil, fmt.Errorf("new manifest writer: %w", err)
	}
	mw := &Writer{opts: opts, types: types, enc: enc}
	mw.aw = avro.NewWriter(&mw.buf, 1024)
	for _, t := range types {
		mw.summary = append(mw.summary, &fieldStats{typ: t})
	}
	return mw, nil
}

// Add writes one entry. ADDED entries keep null sequence numbers unless the
// caller set them, so they inherit the snapshot's; EXISTING and DELETED
// entries must carry both explicitly.
func (w *Writer) Add(e Entry) error {
	if w.closed {
		return errors.New("manifest writer is closed")
	}
	df := &e.DataFile
	if err := w.check(e); err != nil {
		return fmt.Errorf("add %s to manifest: %w", df.FilePath, err)
	}
	df.Partition = widenPartition(w.types, df.Partition)
	if e.SnapshotID == nil && e.Status != StatusExisting && !(e.Status == StatusAdded && w.opts.InheritSnapshotID) {
		id := w.opts.SnapshotID
		e.SnapshotID = &id
	}
	w.buf.Reset()
	a := w.aw
	a.WriteInt(int32(e.Status))
	writeOptLong(a, e.SnapshotID)
	writeOptLong(a, e.SequenceNumber)
	writeOptLong(a, e.FileSequenceNumber)
	a.WriteInt(int32(df.Content))
	a.WriteString(df.FilePath)
	a.WriteString(df.FileFormat)
	for i, t := range w.types {
		v := df.Partition[i]
		if v == nil {
			a.WriteLong(0)
			continue
		}
		a.WriteLong(1)
		if err := writePartitionValue(a, t, v); err != nil {
			return fmt.Errorf("add %s to manifest: partition field %d: %w", df.FilePath, i, err)
		}
	}
	a.WriteLong(df.RecordCount)
	a.WriteLong(df.FileSizeInBytes)
	writeLongMap(a, df.ColumnSizes)
	writeLongMap(a, df.ValueCounts)
	writeLongMap(a, df.NullValueCounts)
	writeLongMap(a, df.NaNValueCounts)
	writeBytesMap(a, df.LowerBounds)
	writeBytesMap(a, df.UpperBounds)
	writeOptBytes(a, df.KeyMetadata)
	if df.SplitOffsets == nil {
		a.WriteLong(0)
	} else {
		a.WriteLong(1)
		if len(df.SplitOffsets) > 0 {
			a.WriteLong(int64(len(df.SplitOffsets)))
			for _, o := range df.SplitOffsets {
				a.WriteLong(o)
			}
		}
		a.WriteLong(0)
	}
	if df.EqualityIDs == nil {
		a.WriteLong(0)
	} else {
		a.WriteLong(1)
		if len(df.EqualityIDs) > 0 {
			a.WriteLong(int64(len(df.EqualityIDs)))
			for _, id := range df.EqualityIDs {
				a.WriteInt(int32(id))
			}
		}
		a.WriteLong(0)
	}
	writeOptInt(a, df.SortOrderID)
	if w.opts.Version >= 3 {
		writeOptLong(a, df.FirstRowID)
	}
	if df.ReferencedDataFile == nil {
		a.WriteLong(0)
	} else {
		a.WriteLong(1)
		a.WriteString(*df.ReferencedDataFile)
	}
	if w.opts.Version >= 3 {
		writeOptLong(a, df.ContentOffset)
		writeOptLong(a, df.ContentSizeInBytes)
	}
	if err := a.Flush(); err != nil {
		return fmt.Errorf("add %s to manifest: %w", df.FilePath, err)
	}
	if _, err := w.enc.Write(w.buf.Bytes()); err != nil {
		return fmt.Errorf("add %s to manifest: %w", df.FilePath, err)
	}
	w.count(e)
	return nil
}

func (w *Writer) check(e Entry) error {
	df := &e.DataFile
	switch e.Status {
	case StatusAdded:
	case StatusExisting, StatusDeleted:
		if e.SequenceNumber == nil || e.FileSequenceNumber == nil {
			return errors.New("EXISTING and DELETED entries need explicit sequence numbers")
		}
	default:
		return fmt.Errorf("invalid entry status %d", e.Status)
	}
	switch {
	case w.opts.Content == ManifestContentData && df.Content != ContentData:
		return fmt.Errorf("a data manifest cannot hold a file with content %d", df.Content)
	case w.opts.Content == ManifestContentDeletes && df.Content != ContentPositionDeletes && df.Content != ContentEqualityDeletes:
		return fmt.Errorf("a delete manifest cannot hold a file with content %d", df.Content)
	}
	if len(df.Partition) != len(w.types) {
		return fmt.Errorf("partition has %d values, the spec has %d fields", len(df.Partition), len(w.types))
	}
	if df.Content == ContentEqualityDeletes && len(df.EqualityIDs) == 0 {
		return errors.New("an equality delete file needs equality ids")
	}
	if w.opts.Version < 3 && (df.FirstRowID != nil || df.ContentOffset != nil || df.ContentSizeInBytes != nil) {
		return errors.New("first_row_id, content_offset and content_size_in_bytes need format version 3")
	}
	if df.Content != ContentData && df.FirstRowID != nil {
		return errors.New("delete files never carry a first_row_id")
	}
	if (df.ContentOffset == nil) != (df.ContentSizeInBytes == nil) {
		return errors.New("content_offset and content_size_in_bytes go together")
	}
	return nil
}

func (w *Writer) count(e Entry) {
	s := &w.stats
	df := &e.DataFile
	switch e.Status {
	case StatusAdded:
		s.added++
		s.addedRows += df.RecordCount
	case StatusExisting:
		s.existing++
		s.existingRows += df.RecordCount
	case StatusDeleted:
		s.deleted++
		s.delRows += df.RecordCount
	}
	// Like Java, only live entries with an explicit data sequence number
	// count; entries that inherit get the snapshot's own sequence number,
	// which is never below an explicit one, and an all-inherited manifest
	// leaves the minimum unassigned for the list writer to fill in.
	if e.Status != StatusDeleted && e.SequenceNumber != nil && (s.minSeq == nil || *e.SequenceNumber < *s.minSeq) {
		v := *e.SequenceNumber
		s.minSeq = &v
	}
	for i, fs := range w.summary {
		fs.add(df.Partition[i])
	}
}

// widenPartition returns values with the ones of a type Iceberg promotes
// from converted to the writer's partition type: an int where the type is
// long, a float where it is double. A spec's partition type follows the
// current schema, so once the source column of identity(k) or
// truncate[W](k) is promoted, the entries of older manifests still carry
// the narrower value; Java reads those through Avro's promotion and writes
// them back as longs. Without this they could not be carried into a new
// manifest (compaction, dv merge, manifest merges failed on them), and a
// manifest mixing both kinds compared an int32 with an int64 for its
// partition summary. Other types are left for the value check to refuse:
// a date is not widened to a timestamp, whose value would differ. values
// is not modified; a copy is returned when anything changed.
func widenPartition(types []spec.Type, values []any) []any {
	var out []any
	for i, t := range types {
		if i >= len(values) {
			break
		}
		var w any
		switch v := values[i].(type) {
		case int32:
			if _, ok := t.(spec.LongType); ok {
				w = int64(v)
			}
		case float32:
			if _, ok := t.(spec.DoubleType); ok {
				w = float64(v)
			}
		}
		if w == nil {
			continue
		}
		if out == nil {
			out = append([]any(nil), values...)
		}
		out[i] = w
	}
	if out == nil {
		return values
	}
	return out
}

// Close finishes the file.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if err := w.enc.Close(); err != nil {
		return fmt.Errorf("close manifest: %w", err)
	}
	return nil
}

// ManifestFile describes the written manifest for a manifest list. Its
// sequence numbers are UnassignedSequenceNumber where the list writer must
// fill in the snapshot's.
func (w *Writer) ManifestFile(path string, length int64) ManifestFile {
	s := w.stats
	mf := ManifestFile{
		Path: path, Length: length, SpecID: int32(w.opts.Spec.ID), Content: w.opts.Content,
		SequenceNumber: UnassignedSequenceNumber, MinSequenceNumber: UnassignedSequenceNumber,
		AddedSnapshotID: w.opts.SnapshotID,
		AddedFilesCount: &s.added, ExistingFilesCount: &s.existing, DeletedFilesCount: &s.deleted,
		AddedRowsCount: &s.addedRows, ExistingRowsCount: &s.existingRows, DeletedRowsCount: &s.delRows,
		Partitions: make([]FieldSummary, len(w.summary)),
	}
	if s.minSeq != nil {
		mf.MinSequenceNumber = *s.minSeq
	}
	for i, fs := range w.summary {
		mf.Partitions[i] = fs.summary()
	}
	return mf
}
