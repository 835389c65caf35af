package datafile

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icectl/icectl/iceberg/spec"
)

// rowKeys is rowsJSON for comparisons of rows with rows: one string per
// row, equal exactly when the rows' values are (and so their JSON), built
// without encoding/json and arrow's marshalling (big.Float for decimals,
// reflection for lists and structs), which cost half the package's
// CPU-seconds. Each value of a column's type has one spelling of its own:
// integers and temporal types their number, floats Go's shortest exact
// form (-0 apart from 0; every NaN one, as in JSON), decimals their two
// 64-bit halves, strings and binaries quoted bytes, NULL null; lists,
// maps and structs their children in brackets. A type not listed takes
// rowsJSON's spelling.
func rowKeys(t testing.TB, batches ...arrow.RecordBatch) []string {
	t.Helper()
	var out []string
	var b []byte
	for _, rec := range batches {
		for i := range int(rec.NumRows()) {
			b = b[:0]
			for c := range int(rec.NumCols()) {
				if c > 0 {
					b = append(b, ',')
				}
				b = appendKey(t, b, rec.Column(c), i)
			}
			out = append(out, string(b))
		}
	}
	return out
}

// storedRowKeys is storedRows' rows as rowKeys spells them.
func storedRowKeys(t *testing.T, data []byte) []string {
	t.Helper()
	return storedRowsWith(t, data, rowKeys)
}

func appendKey(t testing.TB, b []byte, a arrow.Array, i int) []byte {
	if a.IsNull(i) {
		return append(b, "null"...)
	}
	switch a := a.(type) {
	case *array.Boolean:
		return strconv.AppendBool(b, a.Value(i))
	case *array.Int8:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Int16:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Int32:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Int64:
		return strconv.AppendInt(b, a.Value(i), 10)
	case *array.Uint8:
		return strconv.AppendUint(b, uint64(a.Value(i)), 10)
	case *array.Uint16:
		return strconv.AppendUint(b, uint64(a.Value(i)), 10)
	case *array.Uint32:
		return strconv.AppendUint(b, uint64(a.Value(i)), 10)
	case *array.Uint64:
		return strconv.AppendUint(b, a.Value(i), 10)
	case *array.Float32:
		return appendFloat(b, float64(a.Value(i)), 32)
	case *array.Float64:
		return appendFloat(b, a.Value(i), 64)
	case *array.Date32:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Date64:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Time32:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Time64:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Timestamp:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Duration:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Decimal128:
		v := a.Value(i)
		b = strconv.AppendInt(b, v.HighBits(), 10)
		b = append(b, ':')
		return strconv.AppendUint(b, v.LowBits(), 10)
	case *array.String:
		return strconv.AppendQuote(b, a.Value(i))
	case *array.LargeString:
		return strconv.AppendQuote(b, a.Value(i))
	case *array.Binary:
		return strconv.AppendQuote(b, string(a.Value(i)))
	case *array.LargeBinary:
		return strconv.AppendQuote(b, string(a.Value(i)))
	case *array.FixedSizeBinary:
		return strconv.AppendQuote(b, string(a.Value(i)))
	case *array.Struct:
		b = append(b, '{')
		for f := range a.NumField() {
			if f > 0 {
				b = append(b, ',')
			}
			b = appendKey(t, b, a.Field(f), i)
		}
		return append(b, '}')
	case array.ListLike: // List, LargeList, FixedSizeList, Map
		if _, ok := a.(array.ExtensionArray); ok {
			break
		}
		lo, hi := a.ValueOffsets(i)
		vals := a.ListValues()
		b = append(b, '[')
		for j := lo; j < hi; j++ {
			if j > lo {
				b = append(b, ',')
			}
			b = appendKey(t, b, vals, int(j))
		}
		return append(b, ']')
	}
	js, err := json.Marshal(a.GetOneForMarshal(i))
	if err != nil {
		t.Fatal(err)
	}
	return strconv.AppendQuote(append(b, '~'), string(js))
}

func appendFloat(b []byte, f float64, bits int) []byte {
	if math.IsNaN(f) {
		return append(b, "NaN"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits)
}

// TestRowKeysAgreeWithJSON: over the types and shapes the package's
// comparisons meet (every flat type with NaN, -0 and +0 among the floats,
// every nested shape, lineage columns, NULL at every optional level), as
// written by the Writer and read back by pqarrow (storedRows) and as
// built, two values of a column have equal rowKeys exactly when they have
// equal rowsJSON: a comparison through rowKeys passes and fails where
// one through rowsJSON does.
func TestRowKeysAgreeWithJSON(t *testing.T) {
	for name, s := range map[string]*spec.Schema{"flat": flatTypesSchema(), "nested": nestedSchema()} {
		t.Run(name, func(t *testing.T) {
			s := SchemaWithLineage(s)
			b := withSpecialFloats(t, genBatch(t, s, 300, 3))
			defer b.Release()
			data, _ := writeParquet(t, s, nil, b)
			stored := readBack(t, data)
			defer release(stored)
			for _, batches := range [][]arrow.RecordBatch{{b}, stored} {
				for c, f := range batches[0].Schema().Fields() {
					var cols []arrow.RecordBatch
					for _, rec := range batches {
						col := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{f}, nil), []arrow.Array{rec.Column(c)}, rec.NumRows())
						defer col.Release()
						cols = append(cols, col)
					}
					keys, js := rowKeys(t, cols...), rowsJSON(t, cols...)
					if len(keys) != 300 {
						t.Fatalf("%s: %d rows", f.Name, len(keys))
					}
					distinct := map[string]bool{}
					for i := range keys {
						distinct[js[i]] = true
						for j := range i {
							if (keys[i] == keys[j]) != (js[i] == js[j]) {
								t.Fatalf("column %s (%s), rows %d and %d: rowKeys %s and %s, rowsJSON %s and %s",
									f.Name, f.Type, i, j, keys[i], keys[j], js[i], js[j])
							}
						}
					}
					if len(distinct) < 2 {
						t.Fatalf("column %s: all 300 values alike: the test compares nothing", f.Name)
					}
				}
			}
		})
	}
}

// readBack is data's batches as pqarrow reads them (storedRows' read).
func readBack(t *testing.T, data []byte) []arrow.RecordBatch {
	t.Helper()
	var out []arrow.RecordBatch
	storedRowsWith(t, data, func(_ testing.TB, batches ...arrow.RecordBatch) []string {
		for _, b := range batches {
			b.Retain()
			out = append(out, b)
		}
		return nil
	})
	return out
}
