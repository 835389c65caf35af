package spec

import (
	"encoding/base64"
	"encoding/json"
)

// StatisticsFile is a table statistics (Puffin) file registered for a
// snapshot.
type StatisticsFile struct {
	SnapshotID      int64
	StatisticsPath  string
	FileSizeInBytes int64
	// FileFooterSizeInBytes is the whole Puffin footer, magic included.
	FileFooterSizeInBytes int64
	KeyMetadata           []byte // written as base64; nil when absent
	BlobMetadata          []BlobMetadata
	Extra                 map[string]json.RawMessage
}

// BlobMetadata describes one blob of a statistics file.
type BlobMetadata struct {
	Type           string
	SnapshotID     int64
	SequenceNumber int64
	Fields         []int
	Properties     map[string]string // nil when absent
	Extra          map[string]json.RawMessage
}

// PartitionStatisticsFile is a partition statistics file registered for a
// snapshot.
type PartitionStatisticsFile struct {
	SnapshotID      int64
	StatisticsPath  string
	FileSizeInBytes int64
	Extra           map[string]json.RawMessage
}

var statisticsKnownKeys = []string{
	"snapshot-id", "statistics-path", "file-size-in-bytes", "file-footer-size-in-bytes", "key-metadata", "blob-metadata",
}

func (s *StatisticsFile) UnmarshalJSON(data []byte) error {
	o, err := decodeObject(data, "statistics file")
	if err != nil {
		return err
	}
	var out StatisticsFile
	if out.SnapshotID, err = o.reqInt64("snapshot-id"); err != nil {
		return err
	}
	if out.StatisticsPath, err = o.reqString("statistics-path"); err != nil {
		return err
	}
	if out.FileSizeInBytes, err = o.reqInt64("file-size-in-bytes"); err != nil {
		return err
	}
	if out.FileFooterSizeInBytes, err = o.reqInt64("file-footer-size-in-bytes"); err != nil {
		return err
	}
	if out.KeyMetadata, err = o.optBase64("key-metadata"); err != nil {
		return err
	}
	blobs, ok, err := o.optArray("blob-metadata")
	if err != nil {
		return err
	}
	if !ok {
		return o.missing("list", "blob-metadata")
	}
	out.BlobMetadata = make([]BlobMetadata, len(blobs))
	for i, b := range blobs {
		if err := json.Unmarshal(b, &out.BlobMetadata[i]); err != nil {
			return err
		}
	}
	out.Extra = o.extra(statisticsKnownKeys...)
	*s = out
	return nil
}

func (s StatisticsFile) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.field("snapshot-id", s.SnapshotID)
	w.field("statistics-path", s.StatisticsPath)
	w.field("file-size-in-bytes", s.FileSizeInBytes)
	w.field("file-footer-size-in-bytes", s.FileFooterSizeInBytes)
	if s.KeyMetadata != nil {
		w.field("key-metadata", base64.StdEncoding.EncodeToString(s.KeyMetadata))
	}
	blobs := s.BlobMetadata
	if blobs == nil {
		blobs = []BlobMetadata{}
	}
	w.field("blob-metadata", blobs)
	w.extra(s.Extra)
	return w.bytes()
}

var blobKnownKeys = []string{"type", "snapshot-id", "sequence-number", "fields", "properties"}

func (b *BlobMetadata) UnmarshalJSON(data []byte) error {
	o, err := decodeObject(data, "blob metadata")
	if err != nil {
		return err
	}
	var out BlobMetadata
	if out.Type, err = o.reqString("type"); err != nil {
		return err
	}
	if out.SnapshotID, err = o.reqInt64("snapshot-id"); err != nil {
		return err
	}
	if out.SequenceNumber, err = o.reqInt64("sequence-number"); err != nil {
		return err
	}
	if out.Fields, err = o.optIntList("fields"); err != nil {
		return err
	}
	if out.Fields == nil {
		return o.missing("list", "fields")
	}
	if out.Properties, err = o.optStringMap("properties"); err != nil {
		return err
	}
	out.Extra = o.extra(blobKnownKeys...)
	*b = out
	return nil
}

func (b BlobMetadata) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.field("type", b.Type)
	w.field("snapshot-id", b.SnapshotID)
	w.field("sequence-number", b.SequenceNumber)
	fields := b.Fields
	if fields == nil {
		fields = []int{}
	}
	w.field("fields", fields)
	if b.Properties != nil {
		w.stringMap("properties", b.Properties, "")
	}
	w.extra(b.Extra)
	return w.bytes()
}

var partitionStatisticsKnownKeys = []string{"snapshot-id", "statistics-path", "file-size-in-bytes"}

func (p *PartitionStatisticsFile) UnmarshalJSON(data []byte) error {
	o, err := decodeObject(data, "partition statistics file")
	if err != nil {
		return err
	}
	var out PartitionStatisticsFile
	if out.SnapshotID, err = o.reqInt64("snapshot-id"); err != nil {
		return err
	}
	if out.StatisticsPath, err = o.reqString("statistics-path"); err != nil {
		return err
	}
	if out.FileSizeInBytes, err = o.reqInt64("file-size-in-bytes"); err != nil {
		return err
	}
	out.Extra = o.extra(partitionStatisticsKnownKeys...)
	*p = out
	return nil
}

func (p PartitionStatisticsFile) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.field("snapshot-id", p.SnapshotID)
	w.field("statistics-path", p.StatisticsPath)
	w.field("file-size-in-bytes", p.FileSizeInBytes)
	w.extra(p.Extra)
	return w.bytes()
}

// EncryptedKey is an entry of the v3 "encryption-keys" list.
type EncryptedKey struct {
	KeyID                string
	EncryptedKeyMetadata []byte // written as base64
	EncryptedByID        *string
	Properties           map[string]string // nil when absent
	Extra                map[string]json.RawMessage
}

var encryptedKeyKnownKeys = []string{"key-id", "encrypted-key-metadata", "encrypted-by-id", "properties"}

func (k *EncryptedKey) UnmarshalJSON(data []byte) error {
	o, err := decodeObject(data, "encryption key")
	if err != nil {
		return err
	}
	var out EncryptedKey
	if out.KeyID, err = o.reqString("key-id"); err != nil {
		return err
	}
	if !o.has("encrypted-key-metadata") {
		return o.missing("string", "encrypted-key-metadata")
	}
	if out.EncryptedKeyMetadata, err = o.optBase64("encrypted-key-metadata"); err != nil {
		return err
	}
	if out.EncryptedByID, err = o.optString("encrypted-by-id"); err != nil {
		return err
	}
	if out.Properties, err = o.optStringMap("properties"); err != nil {
		return err
	}
	out.Extra = o.extra(encryptedKeyKnownKeys...)
	*k = out
	return nil
}

func (k EncryptedKey) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.field("key-id", k.KeyID)
	w.field("encrypted-key-metadata", base64.StdEncoding.EncodeToString(k.EncryptedKeyMetadata))
	if k.EncryptedByID != nil {
		w.field("encrypted-by-id", *k.EncryptedByID)
	}
	if k.Properties != nil {
		w.stringMap("properties", k.Properties, "")
	}
	w.extra(k.Extra)
	return w.bytes()
}
