package datafile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/icectl/icectl/iceberg/spec"
)

// flatTypesSchema is every primitive type as a top-level column, so the
// Writer takes the column-parallel encoder.
func flatTypesSchema() *spec.Schema {
	var fields []spec.NestedField
	for _, f := range allTypesSchema().Fields {
		switch f.Type.(type) {
		case *spec.StructType, *spec.ListType, *spec.MapType:
			continue
		}
		fields = append(fields, f)
	}
	return &spec.Schema{Fields: fields}
}

// writeBothEncoders writes the batches once with the column-parallel
// encoder and once with pqarrow's serial one.
func writeBothEncoders(t *testing.T, s *spec.Schema, props map[string]string, batches []arrow.RecordBatch) (parallel, serial []byte, pm, sm Metrics) {
	t.Helper()
	write := func(serialEncode bool) ([]byte, Metrics) {
		cfg, err := writerConfigFromProperties(props)
		if err != nil {
			t.Fatal(err)
		}
		cfg.serialEncode = serialEncode
		mcfg, err := MetricsConfigFromProperties(s, props)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		w, err := newWriterFromConfig(&buf, s, cfg, mcfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range batches {
			if err := w.Write(b); err != nil {
				t.Fatal(err)
			}
		}
		if _, ok := w.fw.(*parallelEncoder); len(batches) > 0 && ok == serialEncode {
			t.Fatalf("serialEncode=%v: writer uses %T", serialEncode, w.fw)
		}
		m, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		return buf.Bytes(), m
	}
	parallel, pm = write(false)
	serial, sm = write(true)
	return parallel, serial, pm, sm
}

// TestParallelEncoderSameBytes checks that encoding columns concurrently
// writes exactly the file pqarrow's serial encoder writes: every type, with
// nulls, several batches, row groups cut by size, several codecs.
func TestParallelEncoderSameBytes(t *testing.T) {
	s := flatTypesSchema()
	var batches []arrow.RecordBatch
	for k := range 5 {
		batches = append(batches, genBatch(t, s, 3000+k*517, k))
	}
	defer release(batches)
	for _, codec := range []string{"zstd", "snappy", "uncompressed"} {
		t.Run(codec, func(t *testing.T) {
			props := map[string]string{PropRowGroupSizeBytes: "40000", PropCompressionCodec: codec}
			par, ser, pm, sm := writeBothEncoders(t, s, props, batches)
			assertSameParquet(t, par, ser)
			if !reflect.DeepEqual(pm, sm) {
				t.Fatalf("metrics differ:\n%+v\n%+v", pm, sm)
			}
			if len(pm.SplitOffsets) < 2 {
				t.Fatalf("want several row groups, got %d", len(pm.SplitOffsets))
			}
			got := readParquet(t, par, ReadOptions{Schema: s})
			defer release(got)
			compareRows(t, rowKeys(t, got...), rowKeys(t, batches...))
		})
	}
}

// TestParallelEncoderMaxRowGroupLength checks the row-count cut pqarrow
// makes inside WriteBuffered.
func TestParallelEncoderMaxRowGroupLength(t *testing.T) {
	s := &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "s", Type: spec.StringType{}},
	}}
	b := genBatch(t, s, 2500, 1)
	defer b.Release()
	sc, _ := ArrowSchema(s)
	var buf bytes.Buffer
	wsc := arrow.NewSchema(sc.Fields(), nil)
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(1000))
	e, err := newParallelEncoder(wsc, &buf, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	rec := array.NewRecordBatch(wsc, b.Columns(), b.NumRows())
	defer rec.Release()
	if err := e.WriteBuffered(rec); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	md, err := e.FileMetadata()
	if err != nil {
		t.Fatal(err)
	}
	var rows []int64
	for i := range md.NumRowGroups() {
		rows = append(rows, md.RowGroup(i).NumRows())
	}
	if len(rows) != 3 || rows[0] != 1000 || rows[1] != 1000 || rows[2] != 500 {
		t.Fatalf("row groups of %v rows, want [1000 1000 500]", rows)
	}
	if err := e.WriteBuffered(rec); err == nil {
		t.Fatal("write after Close succeeded")
	}
}

// assertSameParquet checks that two files hold the same bytes up to the
// footer and footers that say the same. The footers' bytes may differ:
// arrow-go lists each column chunk's page encoding stats in map order.
func assertSameParquet(t *testing.T, got, want []byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("files of %d and %d bytes", len(got), len(want))
	}
	footer := len(want) - 8 - int(binary.LittleEndian.Uint32(want[len(want)-8:]))
	if footer < 4 || footer > len(want)-8 {
		t.Fatalf("bad footer length in %d-byte file", len(want))
	}
	if i := firstDiff(got[:footer], want[:footer]); i >= 0 {
		t.Fatalf("column chunks differ from byte %d of %d", i, footer)
	}
	gm, wm := footerOf(t, got), footerOf(t, want)
	if gm.NumRowGroups() != wm.NumRowGroups() || gm.NumRows != wm.NumRows || gm.GetCreatedBy() != wm.GetCreatedBy() {
		t.Fatalf("footers differ: %d row groups/%d rows vs %d/%d", gm.NumRowGroups(), gm.NumRows, wm.NumRowGroups(), wm.NumRows)
	}
	if fmt.Sprint(gm.KeyValueMetadata().Keys(), gm.KeyValueMetadata().Values()) != fmt.Sprint(wm.KeyValueMetadata().Keys(), wm.KeyValueMetadata().Values()) || !gm.Schema.Equals(wm.Schema) {
		t.Fatal("footers differ in key-value metadata or schema")
	}
	for i := range wm.NumRowGroups() {
		grg, wrg := gm.RowGroup(i), wm.RowGroup(i)
		if grg.NumRows() != wrg.NumRows() || grg.TotalByteSize() != wrg.TotalByteSize() || grg.FileOffset() != wrg.FileOffset() {
			t.Fatalf("row group %d differs", i)
		}
		for j := range wrg.NumColumns() {
			gc, _ := grg.ColumnChunk(j)
			wc, _ := wrg.ColumnChunk(j)
			if fmt.Sprint(chunkFacts(t, gc)) != fmt.Sprint(chunkFacts(t, wc)) {
				t.Fatalf("row group %d column %d: %v, want %v", i, j, chunkFacts(t, gc), chunkFacts(t, wc))
			}
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

func footerOf(t *testing.T, data []byte) *metadata.FileMetaData {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	return pf.MetaData()
}

// chunkFacts is what a column chunk's footer entry says, with the page
// encoding stats in a fixed order.
func chunkFacts(t *testing.T, c *metadata.ColumnChunkMetaData) []any {
	t.Helper()
	stats := c.EncodingStats()
	sort.Slice(stats, func(i, j int) bool {
		return fmt.Sprint(stats[i]) < fmt.Sprint(stats[j])
	})
	st, err := c.Statistics()
	if err != nil {
		t.Fatal(err)
	}
	var minMax []byte
	if st != nil && st.HasMinMax() {
		minMax = append(st.EncodeMin(), st.EncodeMax()...)
	}
	var nulls int64 = -1
	if st != nil {
		nulls = st.NullCount()
	}
	return []any{c.PathInSchema().String(), c.NumValues(), c.Compression(), c.Encodings(), stats,
		c.DataPageOffset(), c.DictionaryPageOffset(), c.TotalCompressedSize(), c.TotalUncompressedSize(),
		c.FileOffset(), minMax, nulls}
}
