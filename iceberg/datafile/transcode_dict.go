package datafile

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// Parquet page types, as PageEncodingStats numbers them.
const (
	pageData   = 0
	pageDataV2 = 3
)

// start creates the file writer, deciding each column's encoding from how
// first (the first input of the first row group; nil for a file without
// rows) stored it. A dictionary pays only when values repeat: for a
// column of nearly distinct values, arrow-go hashes every value, grows the
// dictionary to its size limit and then falls back to PLAIN anyway, so
// such a column is written PLAIN from the start, as parquet-mr's fallback
// effectively does. Which encoding is chosen changes no value.
func (t *Transcoder) start(first *tcInput) error {
	opts := slices.Clone(t.opts)
	for _, c := range t.cols {
		if !t.dictionaryFor(c, first) {
			opts = append(opts, parquet.WithDictionaryPath(c.desc.ColumnPath(), false))
		}
		if c.kind == tcRowID && t.deltaRowIDs {
			opts = append(opts, parquet.WithEncodingPath(c.desc.ColumnPath(), parquet.Encodings.DeltaBinaryPacked))
		}
	}
	wr, err := file.NewParquetWriterWithError(t.out, t.pq.Root(), file.WithWriterProps(parquet.NewWriterProperties(opts...)),
		file.WithWriteMetadata(metadata.KeyValueMetadata{}))
	if err != nil {
		return fmt.Errorf("transcode: %w", err)
	}
	if err := wr.AppendKeyValueMetadata("iceberg.schema", t.schema); err != nil {
		return fmt.Errorf("transcode: %w", err)
	}
	t.wr = wr
	return nil
}

// dictionaryFor says whether column c keeps dictionary encoding.
func (t *Transcoder) dictionaryFor(c *tcColumn, in *tcInput) bool {
	switch {
	case t.keepDict || c.desc.PhysicalType() == parquet.Types.Boolean:
		return true // never dictionary-encoded; the property is moot
	case c.kind == tcRowID:
		return false // unique per row by definition
	case in == nil:
		return true
	}
	j := in.src[c.idx]
	if j < 0 {
		return true // nulls or a default: one value
	}
	return !plainInput(in.File, j)
}

// plainInput says whether column j of f was stored PLAIN (no dictionary,
// or a dictionary that overflowed and fell back to PLAIN pages), or with a
// dictionary of at least half as many entries as the first row group has
// values.
func plainInput(f *file.Reader, j int) bool {
	md := f.MetaData()
	if md.NumRowGroups() == 0 {
		return false
	}
	for g := range md.NumRowGroups() {
		cc, err := md.RowGroup(g).ColumnChunk(j)
		if err != nil {
			return false
		}
		if cc.NumValues() == 0 {
			continue
		}
		if !slices.ContainsFunc(cc.Encodings(), func(e parquet.Encoding) bool {
			return e == parquet.Encodings.RLEDict || e == parquet.Encodings.PlainDict
		}) {
			return true
		}
		for _, s := range cc.EncodingStats() {
			if pt := int32(s.PageType); (pt == pageData || pt == pageDataV2) && s.Encoding == parquet.Encodings.Plain {
				return true // the dictionary fell back
			}
		}
	}
	cc, err := md.RowGroup(0).ColumnChunk(j)
	if err != nil {
		return false
	}
	values := cc.NumValues()
	if st, err := cc.Statistics(); err == nil && st != nil && st.HasNullCount() {
		values -= st.NullCount()
	}
	if values < 64 {
		return false // too few to tell
	}
	entries, ok := dictionaryEntries(f, j)
	return ok && 2*entries >= values
}

// dictionaryEntries is the size of the dictionary of column j in f's first
// row group, read from its dictionary page header.
func dictionaryEntries(f *file.Reader, j int) (n int64, ok bool) {
	defer func() {
		if recover() != nil {
			n, ok = 0, false // a damaged page: the transcode reports it
		}
	}()
	pr, err := f.RowGroup(0).GetColumnPageReader(j)
	if err != nil || !pr.Next() {
		return 0, false
	}
	if p, isDict := pr.Page().(*file.DictionaryPage); isDict {
		return int64(p.NumValues()), true
	}
	return 0, false
}
