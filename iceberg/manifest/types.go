package manifest

import "github.com/icectl/icectl/iceberg/spec"

// FileContent is what a file listed in a manifest holds (data_file.content).
type FileContent int32

const (
	ContentData            FileContent = 0
	ContentPositionDeletes FileContent = 1 // position-delete files and deletion vectors
	ContentEqualityDeletes FileContent = 2
)

// ManifestContent is what a manifest lists (manifest_file.content).
type ManifestContent int32

const (
	ManifestContentData    ManifestContent = 0
	ManifestContentDeletes ManifestContent = 1
)

// EntryStatus is a manifest entry's status.
type EntryStatus int32

const (
	StatusExisting EntryStatus = 0
	StatusAdded    EntryStatus = 1
	StatusDeleted  EntryStatus = 2
)

// UnassignedSequenceNumber marks a sequence number the manifest-list writer
// fills in with the snapshot's own, as Java's UNASSIGNED_SEQ does.
const UnassignedSequenceNumber int64 = -1

// FieldSummary summarises one partition field over a manifest's files.
type FieldSummary struct {
	ContainsNull bool
	ContainsNaN  *bool
	LowerBound   []byte // single-value serialization; nil when absent
	UpperBound   []byte
}

// ManifestFile is one entry of a manifest list.
type ManifestFile struct {
	Path               string
	Length             int64
	SpecID             int32
	Content            ManifestContent
	SequenceNumber     int64
	MinSequenceNumber  int64
	AddedSnapshotID    int64
	AddedFilesCount    *int32
	ExistingFilesCount *int32
	DeletedFilesCount  *int32
	AddedRowsCount     *int64
	ExistingRowsCount  *int64
	DeletedRowsCount   *int64
	Partitions         []FieldSummary
	KeyMetadata        []byte
	FirstRowID         *int64
}

// Entry is one manifest entry.
type Entry struct {
	Status             EntryStatus
	SnapshotID         *int64
	SequenceNumber     *int64 // data sequence number
	FileSequenceNumber *int64
	DataFile           DataFile
}

// DataFile describes a data or delete file (the data_file struct).
type DataFile struct {
	Content    FileContent
	FilePath   string
	FileFormat string
	// SpecID is the spec of the manifest the file was read from; it is never
	// written to a manifest.
	SpecID int32
	// Partition holds one value per spec field, in spec order, using the Go
	// value conventions of spec/values.go; nil is null.
	Partition          []any
	RecordCount        int64
	FileSizeInBytes    int64
	ColumnSizes        map[int]int64
	ValueCounts        map[int]int64
	NullValueCounts    map[int]int64
	NaNValueCounts     map[int]int64
	LowerBounds        map[int][]byte
	UpperBounds        map[int][]byte
	KeyMetadata        []byte
	SplitOffsets       []int64
	EqualityIDs        []int
	SortOrderID        *int32
	FirstRowID         *int64
	ReferencedDataFile *string
	ContentOffset      *int64
	ContentSizeInBytes *int64
}

// ListHeader is a manifest list's key/value metadata, interpreted.
type ListHeader struct {
	FormatVersion    int
	SnapshotID       *int64
	ParentSnapshotID *int64
	SequenceNumber   *int64
	FirstRowID       *int64
	Metadata         map[string]string
}

// ManifestMeta is a manifest's key/value metadata, interpreted.
type ManifestMeta struct {
	FormatVersion int
	Content       ManifestContent
	Schema        *spec.Schema // nil when the manifest does not carry one
	SchemaJSON    string
	Spec          spec.PartitionSpec
	Metadata      map[string]string
}

// StoredColumns reports the field ids df has metrics for: columns the
// file is known to store, which a reader must find rather than read as
// nulls. It is nil when df has no metrics.
func (df *DataFile) StoredColumns() func(id int) bool {
	if len(df.ValueCounts) == 0 && len(df.ColumnSizes) == 0 && len(df.NullValueCounts) == 0 {
		return nil
	}
	return func(id int) bool {
		_, v := df.ValueCounts[id]
		_, s := df.ColumnSizes[id]
		_, n := df.NullValueCounts[id]
		return v || s || n
	}
}
