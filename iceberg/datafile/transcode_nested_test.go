package datafile

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/icectl/icectl/iceberg/spec"
)

// nestedShapes are the nested shapes the Transcoder copies, each a
// top-level column beside a required id: a struct holding a struct and a
// list, list<string>, map<string,long>, a nullable struct with a required
// field, list<struct>, and a required list of required longs (empty lists,
// no null list). genBatch makes every optional level null in some rows,
// and one list or map in four empty.
func nestedShapes() []spec.NestedField {
	return []spec.NestedField{
		{ID: 2, Name: "st", Type: &spec.StructType{Fields: []spec.NestedField{
			{ID: 20, Name: "a", Type: spec.IntType{}},
			{ID: 21, Name: "inner", Type: &spec.StructType{Fields: []spec.NestedField{
				{ID: 22, Name: "x", Type: spec.StringType{}},
				{ID: 23, Name: "y", Type: spec.DoubleType{}},
			}}},
			{ID: 24, Name: "tags", Type: &spec.ListType{ElementID: 25, Element: spec.IntType{}}},
		}}},
		{ID: 3, Name: "ls", Type: &spec.ListType{ElementID: 30, Element: spec.StringType{}}},
		{ID: 4, Name: "m", Type: &spec.MapType{KeyID: 40, Key: spec.StringType{}, ValueID: 41, Value: spec.LongType{}}},
		{ID: 5, Name: "ns", Type: &spec.StructType{Fields: []spec.NestedField{
			{ID: 50, Name: "p", Type: spec.LongType{}, Required: true},
			{ID: 51, Name: "q", Type: spec.DecimalType{Precision: 18, Scale: 3}},
			{ID: 52, Name: "r", Type: spec.FloatType{}},
		}}},
		{ID: 6, Name: "lst", Type: &spec.ListType{ElementID: 60, Element: &spec.StructType{Fields: []spec.NestedField{
			{ID: 61, Name: "k", Type: spec.IntType{}, Required: true},
			{ID: 62, Name: "v", Type: spec.StringType{}},
		}}}},
		{ID: 7, Name: "req", Required: true, Type: &spec.ListType{ElementID: 70, Element: spec.LongType{}, ElementRequired: true}},
	}
}

func nestedSchema() *spec.Schema {
	return &spec.Schema{Fields: append([]spec.NestedField{{ID: 1, Name: "id", Type: spec.LongType{}, Required: true}}, nestedShapes()...)}
}

// TestTranscodeNestedMatchesArrowPath: every nested shape, alone and all
// together, transcodes to the rows and metrics (value, null and NaN
// counts, bounds of struct leaves, none of repeated ones) the Arrow path
// writes: without and with deletes (some rows, every row of a file), with
// lineage stored, inherited and absent, sources of several row groups
// and small pages, in row groups of one and of several sources.
func TestTranscodeNestedMatchesArrowPath(t *testing.T) {
	props := map[string]string{PropRowGroupSizeBytes: "65536", PropPageSizeBytes: "8192",
		"write.metadata.metrics.column.ls.element": "truncate(4)", "write.metadata.metrics.column.st.inner.x": "truncate(3)",
		"write.metadata.metrics.column.ns.q": "counts"}
	schemas := map[string]*spec.Schema{"all": nestedSchema()}
	for _, f := range nestedShapes() {
		schemas[f.Name] = &spec.Schema{Fields: []spec.NestedField{{ID: 1, Name: "id", Type: spec.LongType{}, Required: true}, f}}
	}
	for name, data := range schemas {
		for _, lineage := range []bool{false, true} {
			for _, deletes := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/lineage=%v/deletes=%v", name, lineage, deletes), func(t *testing.T) {
					r := rand.New(rand.NewPCG(5, 6))
					writeSchema := data
					if lineage {
						writeSchema = SchemaWithLineage(data)
					}
					var srcs []tcSource
					for k := range 4 {
						rows := 3000 + 700*k
						stored := lineage && k%2 == 1
						s := data
						if stored {
							s = SchemaWithLineage(data)
						}
						b := genBatch(t, s, rows, 13*k)
						if stored {
							b = withLineageValues(t, b, r)
						}
						fileData, _ := writeParquet(t, s, map[string]string{PropRowGroupSizeBytes: "16384", PropPageSizeBytes: "1024"}, b)
						b.Release()
						src := tcSource{data: fileData, dataSeq: int64(20 + k)}
						if deletes {
							switch k {
							case 1:
								src.deleted = roaring64.New()
								src.deleted.AddRange(0, uint64(rows))
							default:
								src.deleted = randomDeletes(r, rows, 0.2)
							}
						}
						if !lineage || k != 2 {
							src.firstRowID = ptr(int64(5000 * (k + 1)))
						}
						if pf := openTc(t, fileData); pf.NumRowGroups() < 2 {
							t.Fatalf("source %d has %d row groups; the test wants several", k, pf.NumRowGroups())
						}
						srcs = append(srcs, src)
					}
					want, wantM := arrowPath(t, data, writeSchema, props, srcs)
					wantRows := storedRowKeys(t, want)
					for _, chunk := range []int{1, 3} {
						got, gotM := transcodePath(t, writeSchema, props, srcs, chunk)
						compareRows(t, storedRowKeys(t, got), wantRows)
						compareMetrics(t, gotM, wantM)
					}
				})
			}
		}
	}
}

// TestTranscodeNestedHandsOverMidChunk: a nested leaf's chunk handed over
// to arrow-go's reader after a few pages (a row may span the pages) gives
// the same file as without the hand over.
func TestTranscodeNestedHandsOverMidChunk(t *testing.T) {
	s := nestedSchema()
	r := rand.New(rand.NewPCG(1, 9))
	var srcs []tcSource
	for k := range 2 {
		b := genBatch(t, s, 5000, 3*k)
		data, _ := writeParquet(t, s, map[string]string{PropPageSizeBytes: "512", PropRowGroupSizeBytes: "65536"}, b)
		b.Release()
		srcs = append(srcs, tcSource{data: data, dataSeq: int64(k + 1), deleted: randomDeletes(r, 5000, 0.1), firstRowID: ptr(int64(k * 10000))})
	}
	ws := SchemaWithLineage(s)
	want, wantM := arrowPath(t, s, ws, nil, srcs)
	wantSameWithPageLimits(t, ws, srcs, want, wantM)
}

// TestTranscodeNestedEvolved: files written before a nested column was
// added read as nulls in it, as the Arrow path reads them; a file whose
// struct lacks a field added later, or stores a list element optional
// that the output requires, is refused with ErrNotTranscodable before
// anything is written.
func TestTranscodeNestedEvolved(t *testing.T) {
	all := nestedSchema()
	cur := &spec.Schema{Fields: all.Fields[:6]} // no required column: old files lack some
	old := &spec.Schema{Fields: cur.Fields[:3]}
	r := rand.New(rand.NewPCG(2, 3))
	var srcs []tcSource
	for k, s := range []*spec.Schema{old, cur, old} {
		b := genBatch(t, s, 2000, k)
		data, _ := writeParquet(t, s, map[string]string{PropRowGroupSizeBytes: "16384", PropPageSizeBytes: "1024"}, b)
		b.Release()
		srcs = append(srcs, tcSource{data: data, dataSeq: int64(k + 1), deleted: randomDeletes(r, 2000, 0.1)})
	}
	compareWithAndWithoutLineage(t, cur, srcs)

	id := all.Fields[0]
	ns, req := all.Fields[4], all.Fields[6]
	refused := map[string][2]*spec.Schema{ // the file's schema, the output's
		"struct field added": {{Fields: []spec.NestedField{id, {ID: 5, Name: "ns", Type: &spec.StructType{Fields: []spec.NestedField{
			{ID: 50, Name: "p", Type: spec.LongType{}, Required: true}}}}}}, {Fields: []spec.NestedField{id, ns}}},
		"optional element": {{Fields: []spec.NestedField{id,
			{ID: 7, Name: "req", Required: true, Type: &spec.ListType{ElementID: 70, Element: spec.LongType{}}}}}, {Fields: []spec.NestedField{id, req}}},
		"required column missing": {{Fields: []spec.NestedField{id}}, {Fields: []spec.NestedField{id, req}}},
	}
	for name, pair := range refused {
		t.Run(name, func(t *testing.T) { wantRefused(t, pair[0], pair[1]) })
	}
}

// TestTranscodeNestedCorruptLevels: damaged level data of a nested leaf
// fails with an error naming the file, never a panic or
// ErrNotTranscodable.
func TestTranscodeNestedCorruptLevels(t *testing.T) {
	s := nestedSchema()
	b := genBatch(t, s, 3000, 5)
	defer b.Release()
	src, _ := writeParquet(t, s, map[string]string{"write.parquet.compression-codec": "uncompressed"}, b)
	pf := openTc(t, src)
	for j := 1; j < pf.MetaData().Schema.NumColumns(); j++ {
		if pf.MetaData().Schema.Column(j).MaxRepetitionLevel() > 0 {
			wantCorruptFails(t, s, src, j)
		}
	}
}

// TestTranscodeNestedDataPagesV2: nested columns of files written with
// data pages v2 (as iceberg-go writes them), whose repetition and
// definition levels come before the compressed values without a length
// prefix, transcode to what the Arrow path writes, whether their pages
// are read in place or through arrow-go.
func TestTranscodeNestedDataPagesV2(t *testing.T) {
	s := nestedSchema()
	r := rand.New(rand.NewPCG(7, 8))
	var srcs []tcSource
	for k := range 4 {
		rows := 2500 + 500*k
		b := genBatch(t, s, rows, 31*k)
		data := writePqarrow(t, b, parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithCompression(compress.Codecs.Zstd),
			parquet.WithDictionaryDefault(true), parquet.WithDictionaryPageSizeLimit(2048), parquet.WithDataPageSize(1024), parquet.WithMaxRowGroupLength(2000))
		b.Release()
		srcs = append(srcs, tcSource{data: data, dataSeq: int64(k + 1), deleted: randomDeletes(r, rows, 0.1)})
	}
	want, wantM := arrowPath(t, s, s, nil, srcs)
	got, gotM := transcodePath(t, s, nil, srcs, 4)
	compareRows(t, storedRowKeys(t, got), storedRowKeys(t, want))
	compareMetrics(t, gotM, wantM)
}
