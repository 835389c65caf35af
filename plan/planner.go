package plan

import (
	"time"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// New computes the compaction plan of in with options r at time now. It is
// deterministic: the order of in.Data and in.Deletes does not matter. It
// keeps everything in memory and does no IO; a table's files are planned
// with a Collector instead, which New runs on in.Data.
func New(in *Input, r Resolved, now time.Time) (*Plan, error) {
	c := NewCollector(in.Metadata, table.NewPartitions(), CollectorOptions{MemoryLimit: -1})
	defer c.Close()
	res, err := c.Plan(in, r, now)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	return res.Plan()
}

// FileScoped returns the one data file a position-delete file or DV
// references, or "" when it may reference several: Java's
// ContentFileUtil.referencedDataFile (referenced_data_file, else equal
// lower and upper bounds of the file_path column).
func FileScoped(df *manifest.DataFile) string {
	if df.Content != manifest.ContentPositionDeletes {
		return ""
	}
	if df.ReferencedDataFile != nil {
		return *df.ReferencedDataFile
	}
	lo, okLo := df.LowerBounds[spec.FieldIDFilePath]
	hi, okHi := df.UpperBounds[spec.FieldIDFilePath]
	if okLo && okHi && string(lo) == string(hi) {
		return string(lo)
	}
	return ""
}

func deleteRef(e *table.FileEntry) DeleteRef {
	df := &e.Entry.DataFile
	ref := DeleteRef{
		Path:               df.FilePath,
		ContentOffset:      df.ContentOffset,
		ContentSizeBytes:   df.ContentSizeInBytes,
		SizeBytes:          df.FileSizeInBytes,
		RecordCount:        df.RecordCount,
		DataSequenceNumber: e.DataSequenceNumber(),
		SpecID:             int(df.SpecID),
		ReferencedDataFile: df.ReferencedDataFile,
		EqualityIDs:        df.EqualityIDs,
	}
	switch {
	case table.IsDV(df):
		ref.Content, ref.FileScoped = ContentDV, true
	case df.Content == manifest.ContentEqualityDeletes:
		ref.Content = ContentEquality
	default:
		ref.Content = ContentPosition
		ref.FileScoped = FileScoped(df) != ""
	}
	return ref
}

// expectedOutputFiles is Java's SizeBasedFileRewritePlanner rule: keep a
// remainder file when it exceeds the min size, otherwise spread it over the
// other files if their average stays under min(1.1 x target, write max).
func expectedOutputFiles(inputSize int64, r Resolved) int {
	target := r.TargetFileSize
	if inputSize < target {
		return 1
	}
	withRemainder := (inputSize + target - 1) / target
	if inputSize%target == 0 {
		withRemainder = inputSize / target
	}
	withoutRemainder := inputSize / target
	avgWithout := inputSize / withoutRemainder
	switch {
	case inputSize%target > r.MinFileSize:
		return int(withRemainder)
	case float64(avgWithout) < min(1.1*float64(target), float64(r.WriteMaxFileSize)):
		return int(withoutRemainder)
	}
	return int(withRemainder)
}

// splitOverhead is Java's SPLIT_OVERHEAD.
const splitOverhead = 5 * 1024

// inputSplitSize is Java's inputSplitSize: the input divided by the
// expected outputs, at least the target and at most the write max size.
func inputSplitSize(inputSize int64, r Resolved) int64 {
	est := inputSize/int64(expectedOutputFiles(inputSize, r)) + splitOverhead
	if est < r.TargetFileSize {
		return r.TargetFileSize
	}
	return min(est, r.WriteMaxFileSize)
}
