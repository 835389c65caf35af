package icebergread

import (
	"bytes"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/twmb/avro/ocf"
)

// ManifestList is a manifest list as iceberg-go reads it.
type ManifestList struct {
	// Header is the Avro file's key/value metadata except the Avro schema
	// and codec; iceberg-go's reader does not expose it, so it is read with
	// the Avro library iceberg-go itself uses.
	Header    map[string]string `json:"header"`
	Manifests []ManifestFile    `json:"manifests"`
}

// ManifestFile is one manifest-list entry.
type ManifestFile struct {
	Version            int            `json:"version"`
	Path               string         `json:"manifest_path"`
	Length             int64          `json:"manifest_length"`
	SpecID             int32          `json:"partition_spec_id"`
	Content            int32          `json:"content"`
	SequenceNumber     int64          `json:"sequence_number"`
	MinSequenceNumber  int64          `json:"min_sequence_number"`
	AddedSnapshotID    int64          `json:"added_snapshot_id"`
	AddedFilesCount    int32          `json:"added_files_count"`
	ExistingFilesCount int32          `json:"existing_files_count"`
	DeletedFilesCount  int32          `json:"deleted_files_count"`
	AddedRowsCount     int64          `json:"added_rows_count"`
	ExistingRowsCount  int64          `json:"existing_rows_count"`
	DeletedRowsCount   int64          `json:"deleted_rows_count"`
	Partitions         []FieldSummary `json:"partitions"`
	KeyMetadata        *string        `json:"key_metadata"`
	FirstRowID         *int64         `json:"first_row_id"`

	file iceberg.ManifestFile
}

// FieldSummary is a partition field summary; bounds are hex.
type FieldSummary struct {
	ContainsNull bool    `json:"contains_null"`
	ContainsNaN  *bool   `json:"contains_nan"`
	LowerBound   *string `json:"lower_bound"`
	UpperBound   *string `json:"upper_bound"`
}

// ReadManifestList decodes a manifest list with iceberg.ReadManifestList.
func ReadManifestList(data []byte) (*ManifestList, error) {
	header, err := avroHeader(data)
	if err != nil {
		return nil, fmt.Errorf("read manifest list header: %w", err)
	}
	files, err := iceberg.ReadManifestList(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("read manifest list: %w", err)
	}
	out := &ManifestList{Header: header, Manifests: make([]ManifestFile, 0, len(files))}
	for _, f := range files {
		out.Manifests = append(out.Manifests, manifestFileOf(f))
	}
	return out, nil
}

func manifestFileOf(f iceberg.ManifestFile) ManifestFile {
	mf := ManifestFile{
		Version:            f.Version(),
		Path:               f.FilePath(),
		Length:             f.Length(),
		SpecID:             f.PartitionSpecID(),
		Content:            int32(f.ManifestContent()),
		SequenceNumber:     f.SequenceNum(),
		MinSequenceNumber:  f.MinSequenceNum(),
		AddedSnapshotID:    f.SnapshotID(),
		AddedFilesCount:    f.AddedDataFiles(),
		ExistingFilesCount: f.ExistingDataFiles(),
		DeletedFilesCount:  f.DeletedDataFiles(),
		AddedRowsCount:     f.AddedRows(),
		ExistingRowsCount:  f.ExistingRows(),
		DeletedRowsCount:   f.DeletedRows(),
		KeyMetadata:        hexOrNil(f.KeyMetadata()),
		FirstRowID:         f.FirstRowID(),
		file:               f,
	}
	if parts := f.Partitions(); parts != nil {
		mf.Partitions = make([]FieldSummary, 0, len(parts))
		for _, p := range parts {
			mf.Partitions = append(mf.Partitions, FieldSummary{
				ContainsNull: p.ContainsNull,
				ContainsNaN:  p.ContainsNaN,
				LowerBound:   hexPtr(p.LowerBound),
				UpperBound:   hexPtr(p.UpperBound),
			})
		}
	}
	return mf
}

// avroHeader returns an Avro container file's metadata, minus the entries
// that describe the container itself.
func avroHeader(data []byte) (map[string]string, error) {
	rd, err := ocf.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	out := map[string]string{}
	for k, v := range rd.Metadata() {
		if k == "avro.schema" || k == "avro.codec" {
			continue
		}
		out[k] = string(v)
	}
	return out, nil
}
