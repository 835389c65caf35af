package datafile

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// The sample plainColumns looks at: the first dictSample values of a
// column, and it decides only from at least dictSampleMin non-null ones.
const (
	dictSample    = 32 << 10
	dictSampleMin = 1 << 10
)

// plainColumns names the top-level columns of first to write PLAIN from
// the start: those whose sampled values are nearly all distinct (nine in
// ten or more). For such a column arrow-go's writer would hash every value
// into a dictionary until the dictionary outgrows its page-size limit and
// then fall back to PLAIN anyway (as parquet-mr does); in a file smaller
// than that limit's worth of values (a sorted rewrite's 8 MiB files) it
// hashes every value, for a dictionary as large as the values. Numbers,
// strings and binary are sampled; nested columns, booleans and decimals
// keep the default. Which encoding is chosen changes no value. The
// transcoder decides the same question from its inputs' own encodings
// (Transcoder.dictionaryFor).
func plainColumns(first arrow.RecordBatch) []string {
	if first == nil {
		return nil
	}
	var names []string
	for i, f := range first.Schema().Fields() {
		if nearlyDistinct(first.Column(i)) {
			names = append(names, f.Name)
		}
	}
	return names
}

// nearlyDistinct says whether at least nine in ten of the first
// dictSample non-null values of col differ.
func nearlyDistinct(col arrow.Array) bool {
	if ext, ok := col.(array.ExtensionArray); ok {
		col = ext.Storage()
	}
	n := min(col.Len(), dictSample)
	var values, distinct int
	switch a := col.(type) {
	case *array.String, *array.Binary, *array.LargeString, *array.LargeBinary, *array.FixedSizeBinary:
		seen := make(map[string]struct{}, n)
		for i := range n {
			if a.IsNull(i) {
				continue
			}
			values++
			seen[binaryKey(a, i)] = struct{}{}
		}
		distinct = len(seen)
	default:
		w := fixedWidth(col.DataType())
		if w != 4 && w != 8 {
			return false
		}
		buf := col.Data().Buffers()[1]
		if buf == nil {
			return false
		}
		raw := buf.Bytes()[col.Data().Offset()*w:]
		seen := make(map[uint64]struct{}, n)
		for i := range n {
			if col.IsNull(i) {
				continue
			}
			values++
			var k uint64
			if w == 8 {
				k = binary.LittleEndian.Uint64(raw[i*8:])
			} else {
				k = uint64(binary.LittleEndian.Uint32(raw[i*4:]))
			}
			seen[k] = struct{}{}
		}
		distinct = len(seen)
	}
	return values >= dictSampleMin && 10*distinct >= 9*values
}

// fixedWidth is the byte width of the number types sampled, else 0.
func fixedWidth(t arrow.DataType) int {
	switch t.ID() {
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32, arrow.TIME32:
		return 4
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP:
		return 8
	}
	return 0
}

// binaryKey is value i of a as a map key. A string column's value aliases
// its buffer, alive while the sample is taken.
func binaryKey(a arrow.Array, i int) string {
	switch a := a.(type) {
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.Binary:
		return string(a.Value(i))
	case *array.LargeBinary:
		return string(a.Value(i))
	case *array.FixedSizeBinary:
		return string(a.Value(i))
	}
	return ""
}
