package scan

import (
	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/icectl/icectl/iceberg/spec"
)

// Names of the metadata columns Options can add.
const (
	FileColumnName = "_file"
	PosColumnName  = "_pos"
)

// Options say what to read.
type Options struct {
	// Schema is the projection: these fields, in this order, matched by
	// field id. Nil means the table's current schema.
	Schema *spec.Schema
	// WithLineage appends _row_id and _last_updated_sequence_number, with
	// inheritance from the data file's first_row_id and data sequence
	// number (null for files committed before a v3 upgrade).
	WithLineage bool
	// WithFile appends _file, the data file's path.
	WithFile bool
	// WithPos appends _pos, the row's position in its data file.
	WithPos bool
	// Skip, when not nil, holds positions of the data file read to leave
	// out as if deleted: a copy-on-write rewrite drops the rows it deletes
	// while it copies the rest. ReadFile and FileReader.Read only.
	Skip *roaring64.Bitmap
	// Concurrency is how many data files are read at once (default 2).
	Concurrency int
	// BatchSize is the number of rows read per batch before deletes are
	// applied (datafile.DefaultBatchSize when 0).
	BatchSize int
	// Unfiltered, when set, is called with each batch as read from a data
	// file, before deletes are applied, in Schema's columns less _file and
	// _pos: a caller can check what the file holds, deleted rows included
	// (compaction compares it with the file's manifest metrics). The batch
	// is released when Unfiltered returns.
	Unfiltered func(rec arrow.RecordBatch) error
}

const defaultConcurrency = 2

func (o Options) concurrency() int {
	if o.Concurrency <= 0 {
		return defaultConcurrency
	}
	return o.Concurrency
}
