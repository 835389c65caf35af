package icebergread

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/apache/iceberg-go"
)

// Manifest is a manifest file as iceberg-go reads it.
type Manifest struct {
	FormatVersion   int               `json:"format_version"`
	Content         int32             `json:"content"`
	PartitionSpecID int               `json:"partition_spec_id"`
	PartitionFields []PartitionField  `json:"partition_fields"`
	Metadata        map[string]string `json:"metadata"`
	Entries         []Entry           `json:"entries"`
}

// PartitionField is a field of the manifest's partition spec.
type PartitionField struct {
	FieldID   int    `json:"field_id"`
	SourceID  int    `json:"source_id"`
	Name      string `json:"name"`
	Transform string `json:"transform"`
}

// Entry is a manifest entry. Stored holds the values as written in the
// file; Inherited, present only when the manifest-list entry that lists the
// manifest is known, holds them after iceberg-go applied inheritance from it.
type Entry struct {
	Status    int32         `json:"status"`
	Stored    EntryNumbers  `json:"stored"`
	Inherited *EntryNumbers `json:"inherited,omitempty"`
	DataFile  DataFile      `json:"data_file"`
}

// EntryNumbers are an entry's snapshot id and sequence numbers, and the
// data file's first_row_id; nil is null.
type EntryNumbers struct {
	SnapshotID         *int64 `json:"snapshot_id"`
	SequenceNumber     *int64 `json:"sequence_number"`
	FileSequenceNumber *int64 `json:"file_sequence_number"`
	FirstRowID         *int64 `json:"first_row_id"`
}

// DataFile is the data_file struct of an entry; bounds are hex.
type DataFile struct {
	Content            int32            `json:"content"`
	FilePath           string           `json:"file_path"`
	FileFormat         string           `json:"file_format"`
	SpecID             int32            `json:"spec_id"`
	Partition          []PartitionValue `json:"partition"`
	RecordCount        int64            `json:"record_count"`
	FileSizeInBytes    int64            `json:"file_size_in_bytes"`
	ColumnSizes        map[int]int64    `json:"column_sizes"`
	ValueCounts        map[int]int64    `json:"value_counts"`
	NullValueCounts    map[int]int64    `json:"null_value_counts"`
	NaNValueCounts     map[int]int64    `json:"nan_value_counts"`
	LowerBounds        map[int]string   `json:"lower_bounds"`
	UpperBounds        map[int]string   `json:"upper_bounds"`
	KeyMetadata        *string          `json:"key_metadata"`
	SplitOffsets       []int64          `json:"split_offsets"`
	EqualityIDs        []int            `json:"equality_ids"`
	SortOrderID        *int             `json:"sort_order_id"`
	FirstRowID         *int64           `json:"first_row_id"`
	ReferencedDataFile *string          `json:"referenced_data_file"`
	ContentOffset      *int64           `json:"content_offset"`
	ContentSizeInBytes *int64           `json:"content_size_in_bytes"`
}

// noSnapshot stands in for the manifest-list snapshot id while reading the
// stored values: iceberg-go always applies inheritance, so an entry whose
// snapshot id comes back as this value had none in the file.
const noSnapshot = math.MinInt64

// ReadManifest decodes a manifest with iceberg-go's ManifestReader. path is
// the manifest's location as listed in a manifest list; listEntry, when
// not nil, is that manifest-list entry and adds the inherited values.
func ReadManifest(data []byte, path string, listEntry *ManifestFile) (*Manifest, error) {
	header, err := avroHeader(data)
	if err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", path, err)
	}
	version := 1
	if v, ok := header["format-version"]; ok {
		if version, err = strconv.Atoi(v); err != nil {
			return nil, fmt.Errorf("read manifest %s: format-version %q: %w", path, v, err)
		}
	}
	specID := 0
	if v, ok := header["partition-spec-id"]; ok {
		if specID, err = strconv.Atoi(v); err != nil {
			return nil, fmt.Errorf("read manifest %s: partition-spec-id %q: %w", path, v, err)
		}
	}
	content := iceberg.ManifestContentData
	if header["content"] == "deletes" {
		content = iceberg.ManifestContentDeletes
	}
	// Sequence number -1 tells iceberg-go there is nothing to inherit.
	stored := iceberg.NewManifestFile(version, path, int64(len(data)), int32(specID), noSnapshot).
		Content(content).Build()
	m, entries, err := readEntries(data, stored)
	if err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", path, err)
	}
	m.Metadata = header
	m.Entries = make([]Entry, len(entries))
	for i, e := range entries {
		df, err := dataFileOf(e.DataFile(), m.PartitionFields)
		if err != nil {
			return nil, fmt.Errorf("read manifest %s: entry %d: %w", path, i, err)
		}
		m.Entries[i] = Entry{Status: int32(e.Status()), Stored: numbersOf(e), DataFile: df}
		if m.Entries[i].Stored.SnapshotID != nil && *m.Entries[i].Stored.SnapshotID == noSnapshot {
			m.Entries[i].Stored.SnapshotID = nil
		}
	}
	if listEntry != nil {
		if listEntry.file == nil {
			return nil, fmt.Errorf("read manifest %s: the manifest-list entry was not read by ReadManifestList", path)
		}
		_, inherited, err := readEntries(data, listEntry.file)
		if err != nil {
			return nil, fmt.Errorf("read manifest %s with inheritance: %w", path, err)
		}
		if len(inherited) != len(entries) {
			return nil, fmt.Errorf("read manifest %s: %d entries with inheritance, %d without", path, len(inherited), len(entries))
		}
		for i, e := range inherited {
			n := numbersOf(e)
			m.Entries[i].Inherited = &n
		}
	}
	return m, nil
}

func readEntries(data []byte, file iceberg.ManifestFile) (*Manifest, []iceberg.ManifestEntry, error) {
	rd, err := iceberg.NewManifestReader(file, bytes.NewReader(data))
	if err != nil {
		return nil, nil, err
	}
	defer rd.Close()
	m := &Manifest{FormatVersion: rd.Version(), Content: int32(rd.ManifestContent())}
	ps, err := rd.PartitionSpec()
	if err != nil {
		return nil, nil, err
	}
	m.PartitionSpecID = ps.ID()
	m.PartitionFields = []PartitionField{}
	for _, f := range ps.Fields() {
		m.PartitionFields = append(m.PartitionFields, PartitionField{
			FieldID: f.FieldID, SourceID: f.SourceID(), Name: f.Name, Transform: f.Transform.String(),
		})
	}
	var entries []iceberg.ManifestEntry
	for {
		e, err := rd.ReadEntry()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("entry %d: %w", len(entries), err)
		}
		entries = append(entries, e)
	}
	return m, entries, nil
}

func numbersOf(e iceberg.ManifestEntry) EntryNumbers {
	var n EntryNumbers
	// iceberg-go reports a null snapshot id or sequence number as -1.
	if v := e.SnapshotID(); v != -1 {
		n.SnapshotID = &v
	}
	if v := e.SequenceNum(); v != -1 {
		n.SequenceNumber = &v
	}
	n.FileSequenceNumber = e.FileSequenceNum()
	n.FirstRowID = e.DataFile().FirstRowID()
	return n
}

func dataFileOf(d iceberg.DataFile, fields []PartitionField) (DataFile, error) {
	df := DataFile{
		Content:            int32(d.ContentType()),
		FilePath:           d.FilePath(),
		FileFormat:         string(d.FileFormat()),
		SpecID:             d.SpecID(),
		RecordCount:        d.Count(),
		FileSizeInBytes:    d.FileSizeBytes(),
		ColumnSizes:        d.ColumnSizes(),
		ValueCounts:        d.ValueCounts(),
		NullValueCounts:    d.NullValueCounts(),
		NaNValueCounts:     d.NaNValueCounts(),
		LowerBounds:        hexMap(d.LowerBoundValues()),
		UpperBounds:        hexMap(d.UpperBoundValues()),
		SplitOffsets:       d.SplitOffsets(),
		EqualityIDs:        d.EqualityFieldIDs(),
		SortOrderID:        d.SortOrderID(),
		FirstRowID:         d.FirstRowID(),
		ReferencedDataFile: d.ReferencedDataFile(),
		ContentOffset:      d.ContentOffset(),
		ContentSizeInBytes: d.ContentSizeInBytes(),
	}
	if km := d.KeyMetadata(); km != nil {
		s := hex.EncodeToString(km)
		df.KeyMetadata = &s
	}
	values := d.Partition()
	df.Partition = make([]PartitionValue, 0, len(fields))
	for _, f := range fields {
		pv, err := partitionValueOf(f.FieldID, f.Name, values[f.FieldID])
		if err != nil {
			return df, err
		}
		df.Partition = append(df.Partition, pv)
	}
	return df, nil
}
