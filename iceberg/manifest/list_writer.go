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

// ListWriter writes a manifest list the way Java's ManifestListWriter does.
type ListWriter struct {
	version    int
	snapshotID int64
	seq        int64
	nextRowID  int64
	enc        *ocfWriter
	buf        bytes.Buffer
	aw         *avro.Writer
	closed     bool
}

// NewListWriter starts a manifest list for snapshot snapshotID with sequence
// number seq. firstRowID is the snapshot's first-row-id and is required for
// version 3.
func NewListWriter(w io.Writer, version int, snapshotID int64, parentID *int64, seq int64, firstRowID *int64) (*ListWriter, error) {
	if version != 2 && version != 3 {
		return nil, fmt.Errorf("new manifest list writer: format version %d cannot be written (want 2 or 3)", version)
	}
	if version >= 3 && firstRowID == nil {
		return nil, errors.New("new manifest list writer: a v3 manifest list needs the snapshot's first-row-id")
	}
	fields := manifestListFields(version)
	schemaJSON, err := avroSchemaJSON("manifest_file", fields)
	if err != nil {
		return nil, fmt.Errorf("new manifest list writer: %w", err)
	}
	icebergSchema, err := json.Marshal(spec.Schema{Fields: fields})
	if err != nil {
		return nil, fmt.Errorf("new manifest list writer: %w", err)
	}
	parent := []byte("null")
	if parentID != nil {
		parent = itoa64(*parentID)
	}
	meta := map[string][]byte{
		"snapshot-id":        itoa64(snapshotID),
		"parent-snapshot-id": parent,
		"sequence-number":    itoa64(seq),
		"format-version":     []byte(strconv.Itoa(version)),
		"iceberg.schema":     icebergSchema,
	}
	lw := &ListWriter{version: version, snapshotID: snapshotID, seq: seq}
	if version >= 3 {
		meta["first-row-id"] = itoa64(*firstRowID)
		lw.nextRowID = *firstRowID
	}
	if lw.enc, err = newOCF(w, schemaJSON, meta, nil); err != nil {
		return nil, fmt.Errorf("new manifest list writer: %w", err)
	}
	lw.aw = avro.NewWriter(&lw.buf, 1024)
	return lw, nil
}

// Add writes one manifest. Unassigned sequence numbers become the
// snapshot's; in v3 a data manifest without a first_row_id gets the next
// free row id, and the counter advances by its added and existing rows.
func (l *ListWriter) Add(mf ManifestFile) error {
	if l.closed {
		return errors.New("manifest list writer is closed")
	}
	if mf.SequenceNumber == UnassignedSequenceNumber {
		mf.SequenceNumber = l.seq
	}
	if mf.MinSequenceNumber == UnassignedSequenceNumber {
		mf.MinSequenceNumber = l.seq
	}
	// In field-id order, so the error names the same field every run.
	for _, c := range []struct {
		name    string
		missing bool
	}{
		{"added_files_count", mf.AddedFilesCount == nil}, {"existing_files_count", mf.ExistingFilesCount == nil},
		{"deleted_files_count", mf.DeletedFilesCount == nil}, {"added_rows_count", mf.AddedRowsCount == nil},
		{"existing_rows_count", mf.ExistingRowsCount == nil}, {"deleted_rows_count", mf.DeletedRowsCount == nil},
	} {
		if c.missing {
			return fmt.Errorf("add %s to manifest list: %s is required in format v%d", mf.Path, c.name, l.version)
		}
	}
	if l.version >= 3 {
		if mf.Content != ManifestContentData {
			mf.FirstRowID = nil
		} else if mf.FirstRowID == nil {
			id := l.nextRowID
			mf.FirstRowID = &id
			l.nextRowID += *mf.AddedRowsCount + *mf.ExistingRowsCount
		}
	}
	l.buf.Reset()
	a := l.aw
	a.WriteString(mf.Path)
	a.WriteLong(mf.Length)
	a.WriteInt(mf.SpecID)
	a.WriteInt(int32(mf.Content))
	a.WriteLong(mf.SequenceNumber)
	a.WriteLong(mf.MinSequenceNumber)
	a.WriteLong(mf.AddedSnapshotID)
	a.WriteInt(*mf.AddedFilesCount)
	a.WriteInt(*mf.ExistingFilesCount)
	a.WriteInt(*mf.DeletedFilesCount)
	a.WriteLong(*mf.AddedRowsCount)
	a.WriteLong(*mf.ExistingRowsCount)
	a.WriteLong(*mf.DeletedRowsCount)
	if mf.Partitions == nil {
		a.WriteLong(0)
	} else {
		a.WriteLong(1)
		if len(mf.Partitions) > 0 {
			a.WriteLong(int64(len(mf.Partitions)))
			for _, p := range mf.Partitions {
				a.WriteBool(p.ContainsNull)
				if p.ContainsNaN == nil {
					a.WriteLong(0)
				} else {
					a.WriteLong(1)
					a.WriteBool(*p.ContainsNaN)
				}
				writeOptBytes(a, p.LowerBound)
				writeOptBytes(a, p.UpperBound)
			}
		}
		a.WriteLong(0)
	}
	writeOptBytes(a, mf.KeyMetadata)
	if l.version >= 3 {
		writeOptLong(a, mf.FirstRowID)
	}
	if err := a.Flush(); err != nil {
		return fmt.Errorf("add %s to manifest list: %w", mf.Path, err)
	}
	if _, err := l.enc.Write(l.buf.Bytes()); err != nil {
		return fmt.Errorf("add %s to manifest list: %w", mf.Path, err)
	}
	return nil
}

// NextRowID is the table's next-row-id after the manifests added so far
// (v3), or nil for v2.
func (l *ListWriter) NextRowID() *int64 {
	if l.version < 3 {
		return nil
	}
	v := l.nextRowID
	return &v
}

// Close finishes the file.
func (l *ListWriter) Close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	if err := l.enc.Close(); err != nil {
		return fmt.Errorf("close manifest list: %w", err)
	}
	return nil
}
