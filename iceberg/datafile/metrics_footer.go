package datafile

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// footerMetrics fills the metrics only the written file knows: compressed
// column sizes and row-group offsets. The footer's row count must match the
// rows the collector saw, or the metrics would describe another file.
func (c *MetricsCollector) footerMetrics(md *metadata.FileMetaData, m *Metrics) error {
	if md.FileMetaData == nil || md.Schema == nil {
		return fmt.Errorf("metrics: Parquet footer has no schema")
	}
	if md.NumRows != c.rows {
		return fmt.Errorf("metrics: Parquet footer has %d rows but %d were added", md.NumRows, c.rows)
	}
	sized := make(map[int]bool, len(c.leaves))
	for _, l := range c.leaves {
		if l.mode.Kind != MetricsNone && l.rows > 0 {
			sized[l.id] = true
		}
	}
	ids := make([]int, md.Schema.NumColumns())
	for j := range ids {
		ids[j] = int(md.Schema.Column(j).SchemaNode().FieldID())
	}
	m.SplitOffsets = make([]int64, 0, md.NumRowGroups())
	for i := 0; i < md.NumRowGroups(); i++ {
		rg := md.RowGroup(i)
		if rg.NumColumns() != len(ids) {
			return fmt.Errorf("metrics: Parquet row group %d has %d columns, the schema %d", i, rg.NumColumns(), len(ids))
		}
		for j := 0; j < rg.NumColumns(); j++ {
			cc, err := rg.ColumnChunk(j)
			if err != nil {
				return fmt.Errorf("metrics: Parquet row group %d column %d: %w", i, j, err)
			}
			if j == 0 {
				m.SplitOffsets = append(m.SplitOffsets, metricsChunkStart(cc))
			}
			if sized[ids[j]] {
				m.ColumnSizes[ids[j]] += cc.TotalCompressedSize()
			}
		}
	}
	slices.Sort(m.SplitOffsets)
	return nil
}

// metricsChunkStart is where a column chunk's first page begins, as parquet-java's
// ColumnChunkMetaData.getStartingPos computes it: the dictionary page when
// there is one before the data pages.
func metricsChunkStart(cc *metadata.ColumnChunkMetaData) int64 {
	start := cc.DataPageOffset()
	if cc.HasDictionaryPage() {
		if d := cc.DictionaryPageOffset(); d > 0 && d < start {
			start = d
		}
	}
	return start
}
