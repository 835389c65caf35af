package compact

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// Fields used by the cases.
var (
	fID = spec.NestedField{ID: 1, Name: "id", Type: spec.LongType{}, Required: true}
	fA  = spec.NestedField{ID: 2, Name: "a", Type: spec.StringType{}}
)

func field(id int, name string, t spec.Type) spec.NestedField {
	return spec.NestedField{ID: id, Name: name, Type: t}
}

func schemaOf(fields ...spec.NestedField) spec.Schema { return spec.Schema{Fields: fields} }

var unpartitioned = spec.PartitionSpec{ID: 0}

func evoCases() []evoCase {
	var cases []evoCase
	cases = append(cases, schemaCases()...)
	cases = append(cases, partitionCases()...)
	cases = append(cases, sortCase(), sortEvolvedCase(), mappedCase())
	cases = append(cases, v3TypeCases()...)
	cases = append(cases, equalityCases()...)
	return cases
}

// schemaCases evolve the schema of an unpartitioned table: files written
// before the change and after it, deletes on both.
// typeDefault is an initial-default of type typ as the schema JSON holds
// it, and as a scan renders the value (scan.EncodeRows).
type typeDefault struct {
	typ        spec.Type
	json, read string
}

// everyTypeDefaults are initial-defaults of every flat type, as the
// schema JSON holds them, and as a scan renders the value (scan.EncodeRows).
var everyTypeDefaults = []typeDefault{
	{spec.BooleanType{}, `true`, `true`},
	{spec.IntType{}, `-5`, `-5`},
	{spec.LongType{}, `9999999999`, `9999999999`},
	{spec.FloatType{}, `1.5`, `1.5`},
	{spec.DoubleType{}, `-0.25`, `-0.25`},
	{spec.DateType{}, `"2024-02-29"`, `"2024-02-29"`},
	{spec.TimeType{}, `"22:31:08.123456"`, `"22:31:08.123456"`},
	{spec.TimestampType{}, `"2017-11-16T22:31:08.123456"`, `"2017-11-16T22:31:08.123456"`},
	{spec.TimestampTzType{}, `"2017-11-16T22:31:08.123456+00:00"`, `"2017-11-16T22:31:08.123456Z"`},
	{spec.TimestampNsType{}, `"2017-11-16T22:31:08.123456789"`, `"2017-11-16T22:31:08.123456789"`},
	{spec.TimestampTzNsType{}, `"2017-11-16T22:31:08.123456789+00:00"`, `"2017-11-16T22:31:08.123456789Z"`},
	{spec.StringType{}, `"dflt"`, `"dflt"`},
	{spec.UUIDType{}, `"f79c3e09-677c-4bbd-a479-3f349cb785e7"`, `"95w+CWd8S72keT80nLeF5w=="`}, // its 16 bytes
	{spec.FixedType{Length: 3}, `"0102ff"`, `"AQL/"`},
	{spec.BinaryType{}, `"00ff"`, `"AP8="`},
	{spec.DecimalType{Precision: 9, Scale: 2}, `"-12.34"`, `"-12.34"`},
	{spec.DecimalType{Precision: 18, Scale: 2}, `"123456789012.34"`, `"123456789012.34"`},
	{spec.DecimalType{Precision: 38, Scale: 10}, `"1234567890123456789012345678.0123456789"`, `"1234567890123456789012345678.0123456789"`},
}

// beforeAfter builds an unpartitioned table with schema s0, writes the
// files before (one JSON array of rows each, at least two) under s0,
// changes the schema to s1 and writes the file after under s1. The deletes
// remove the second row of the first file (before the change), the first
// row of the second and the second of the last (after it).
func beforeAfter(s0, s1 spec.Schema, before []string, after string) func(t *testing.T, v int) *evo {
	return func(t *testing.T, v int) *evo {
		b := newEvo(t, v, s0, unpartitioned, spec.SortOrder{})
		var old []manifest.DataFile
		for _, rows := range before {
			old = append(old, b.write(s0, nil, rows))
		}
		b.del(old[0], 1)
		b.schema(s1.Fields...)
		f := b.write(s1, nil, after)
		b.del(old[1], 0)
		b.del(f, 1)
		return b
	}
}

func schemaCases() []evoCase {
	st := func(fields ...spec.NestedField) *spec.StructType { return &spec.StructType{Fields: fields} }
	withDefaults := field(3, "b", spec.LongType{})
	withDefaults.InitialDefault, withDefaults.WriteDefault = json.RawMessage(`7`), json.RawMessage(`9`)
	return []evoCase{
		{
			name: "add-column", transcoded: true, versions: []int{2, 3},
			build: beforeAfter(schemaOf(fID, fA), schemaOf(fID, fA, field(3, "b", spec.LongType{})),
				[]string{`[{"id":1,"a":"x1"},{"id":2,"a":"x2"},{"id":3,"a":null}]`, `[{"id":4,"a":"x4"},{"id":5,"a":"x5"}]`},
				`[{"id":6,"a":"x6","b":60},{"id":7,"a":"x7","b":70},{"id":8,"a":"x8","b":null}]`),
			want: []string{
				`{"a":"x1","b":null,"id":1}`,
				`{"a":"x5","b":null,"id":5}`,
				`{"a":"x6","b":60,"id":6}`,
				`{"a":"x8","b":null,"id":8}`,
				`{"a":null,"b":null,"id":3}`,
			},
		},
		{
			// Old rows read the initial-default; the write-default is for
			// writers that omit the column, which compaction is not.
			name: "add-column-defaults", transcoded: true, versions: []int{3},
			build: beforeAfter(schemaOf(fID, fA), schemaOf(fID, fA, withDefaults),
				[]string{`[{"id":1,"a":"x1"},{"id":2,"a":"x2"},{"id":3,"a":null}]`, `[{"id":4,"a":"x4"},{"id":5,"a":"x5"}]`},
				`[{"id":6,"a":"x6","b":60},{"id":7,"a":"x7","b":70},{"id":8,"a":"x8","b":null}]`),
			want: []string{
				`{"a":"x1","b":7,"id":1}`,
				`{"a":"x5","b":7,"id":5}`,
				`{"a":"x6","b":60,"id":6}`,
				`{"a":"x8","b":null,"id":8}`,
				`{"a":null,"b":7,"id":3}`,
			},
		},
		defaultsCase(false),
		defaultsCase(true),
		{
			name: "add-struct-field", versions: []int{2, 3},
			build: beforeAfter(schemaOf(fID, field(2, "st", st(field(3, "x", spec.IntType{})))),
				schemaOf(fID, field(2, "st", st(field(3, "x", spec.IntType{}), field(4, "y", spec.StringType{})))),
				[]string{`[{"id":1,"st":{"x":1}},{"id":2,"st":{"x":2}},{"id":3,"st":null}]`, `[{"id":4,"st":{"x":null}},{"id":5,"st":{"x":5}}]`},
				`[{"id":6,"st":{"x":6,"y":"y6"}},{"id":7,"st":{"x":7,"y":null}},{"id":8,"st":{"x":null,"y":"y8"}}]`),
			want: []string{
				`{"id":1,"st":{"x":1,"y":null}}`,
				`{"id":3,"st":null}`,
				`{"id":5,"st":{"x":5,"y":null}}`,
				`{"id":6,"st":{"x":6,"y":"y6"}}`,
				`{"id":8,"st":{"x":null,"y":"y8"}}`,
			},
		},
		{
			// Inside a list of structs and a map's struct values: a field
			// added, one renamed, one promoted, the fields reordered.
			name: "nested-evolution", versions: []int{2, 3},
			build: beforeAfter(
				schemaOf(fID,
					field(2, "ls", &spec.ListType{ElementID: 3, Element: st(field(4, "k", spec.IntType{}), field(5, "v", spec.StringType{}))}),
					field(6, "m", &spec.MapType{KeyID: 7, Key: spec.StringType{}, ValueID: 8, Value: st(field(9, "x", spec.IntType{}))})),
				schemaOf(fID,
					field(2, "ls", &spec.ListType{ElementID: 3, Element: st(field(10, "n", spec.StringType{}), field(5, "w", spec.StringType{}), field(4, "k", spec.LongType{}))}),
					field(6, "m", &spec.MapType{KeyID: 7, Key: spec.StringType{}, ValueID: 8, Value: st(field(11, "y", spec.BooleanType{}), field(9, "x", spec.IntType{}))})),
				[]string{`[{"id":1,"ls":[{"k":1,"v":"a"},{"k":null,"v":null}],"m":[{"key":"p","value":{"x":1}}]},{"id":2,"ls":[],"m":[]},{"id":3,"ls":null,"m":[{"key":"q","value":null}]}]`,
					`[{"id":4,"ls":[{"k":4,"v":"d"}],"m":null},{"id":5,"ls":[{"k":-2147483648,"v":"e"}],"m":[{"key":"r","value":{"x":null}}]}]`},
				`[{"id":6,"ls":[{"n":"n6","w":"f","k":9999999999}],"m":[{"key":"s","value":{"y":true,"x":6}}]},{"id":7,"ls":null,"m":null},{"id":8,"ls":[{"n":null,"w":null,"k":null}],"m":[{"key":"t","value":{"y":null,"x":8}}]}]`),
			want: []string{
				`{"id":1,"ls":[{"k":1,"n":null,"w":"a"},{"k":null,"n":null,"w":null}],"m":[{"key":"p","value":{"x":1,"y":null}}]}`,
				`{"id":3,"ls":null,"m":[{"key":"q","value":null}]}`,
				`{"id":5,"ls":[{"k":-2147483648,"n":null,"w":"e"}],"m":[{"key":"r","value":{"x":null,"y":null}}]}`,
				`{"id":6,"ls":[{"k":9999999999,"n":"n6","w":"f"}],"m":[{"key":"s","value":{"x":6,"y":true}}]}`,
				`{"id":8,"ls":[{"k":null,"n":null,"w":null}],"m":[{"key":"t","value":{"x":8,"y":null}}]}`,
			},
		},
		{
			name: "rename", transcoded: true, versions: []int{2, 3},
			build: beforeAfter(schemaOf(fID, fA), schemaOf(fID, field(2, "renamed", spec.StringType{})),
				[]string{`[{"id":1,"a":"x1"},{"id":2,"a":"x2"},{"id":3,"a":null}]`, `[{"id":4,"a":"x4"},{"id":5,"a":"x5"}]`},
				`[{"id":6,"renamed":"x6"},{"id":7,"renamed":"x7"},{"id":8,"renamed":null}]`),
			want: []string{
				`{"id":1,"renamed":"x1"}`,
				`{"id":3,"renamed":null}`,
				`{"id":5,"renamed":"x5"}`,
				`{"id":6,"renamed":"x6"}`,
				`{"id":8,"renamed":null}`,
			},
		},
		{
			// The old files still hold the dropped column; it must not
			// come back, nor shift the others.
			name: "drop-column", transcoded: true, versions: []int{2, 3},
			build: beforeAfter(schemaOf(fID, field(3, "gone", spec.LongType{}), fA), schemaOf(fID, fA),
				[]string{`[{"id":1,"gone":10,"a":"x1"},{"id":2,"gone":20,"a":"x2"},{"id":3,"gone":null,"a":null}]`, `[{"id":4,"gone":40,"a":"x4"},{"id":5,"gone":50,"a":"x5"}]`},
				`[{"id":6,"a":"x6"},{"id":7,"a":"x7"},{"id":8,"a":null}]`),
			want: []string{
				`{"a":"x1","id":1}`,
				`{"a":"x5","id":5}`,
				`{"a":"x6","id":6}`,
				`{"a":null,"id":3}`,
				`{"a":null,"id":8}`,
			},
		},
		{
			name: "reorder", transcoded: true, versions: []int{2, 3},
			build: beforeAfter(schemaOf(fID, fA, field(3, "b", spec.LongType{})), schemaOf(field(3, "b", spec.LongType{}), fA, fID),
				[]string{`[{"id":1,"a":"x1","b":10},{"id":2,"a":"x2","b":20},{"id":3,"a":null,"b":null}]`, `[{"id":4,"a":"x4","b":40},{"id":5,"a":"x5","b":50}]`},
				`[{"id":6,"a":"x6","b":60},{"id":7,"a":"x7","b":70},{"id":8,"a":null,"b":80}]`),
			want: []string{
				`{"a":"x1","b":10,"id":1}`,
				`{"a":"x5","b":50,"id":5}`,
				`{"a":"x6","b":60,"id":6}`,
				`{"a":null,"b":80,"id":8}`,
				`{"a":null,"b":null,"id":3}`,
			},
		},
		{
			// int to long, float to double, decimal(9,2) (INT32 in
			// Parquet) to decimal(18,2) (INT64); the new files hold values
			// only the wider types can.
			name: "promote-numeric", transcoded: true, versions: []int{2, 3},
			build: beforeAfter(
				schemaOf(fID, field(2, "i", spec.IntType{}), field(3, "f", spec.FloatType{}), field(4, "d", spec.DecimalType{Precision: 9, Scale: 2})),
				schemaOf(fID, field(2, "i", spec.LongType{}), field(3, "f", spec.DoubleType{}), field(4, "d", spec.DecimalType{Precision: 18, Scale: 2})),
				[]string{
					`[{"id":1,"i":2147483647,"f":1.5,"d":"1234567.89"},{"id":2,"i":2,"f":2.5,"d":"2.00"},{"id":3,"i":-2147483648,"f":-0.25,"d":"-9999999.99"}]`,
					`[{"id":4,"i":4,"f":4.5,"d":"4.00"},{"id":5,"i":null,"f":null,"d":null}]`,
				},
				`[{"id":6,"i":9999999999,"f":1e300,"d":"1234567890123456.78"},{"id":7,"i":7,"f":7.5,"d":"7.00"},{"id":8,"i":-9999999999,"f":-0.1,"d":"-0.01"}]`),
			want: []string{
				`{"d":"-0.01","f":-0.1,"i":-9999999999,"id":8}`,
				`{"d":"-9999999.99","f":-0.25,"i":-2147483648,"id":3}`,
				`{"d":"1234567.89","f":1.5,"i":2147483647,"id":1}`,
				`{"d":"1234567890123456.78","f":1e+300,"i":9999999999,"id":6}`,
				`{"d":null,"f":null,"i":null,"id":5}`,
			},
		},
		{
			// decimal(9,2) (INT32) and decimal(18,2) (INT64) widened to
			// decimal(38,2), a 16-byte FIXED in Parquet.
			name: "promote-decimal-to-fixed", versions: []int{2, 3}, transcoded: true,
			build: beforeAfter(
				schemaOf(fID, field(2, "d9", spec.DecimalType{Precision: 9, Scale: 2}), field(3, "d18", spec.DecimalType{Precision: 18, Scale: 2})),
				schemaOf(fID, field(2, "d9", spec.DecimalType{Precision: 38, Scale: 2}), field(3, "d18", spec.DecimalType{Precision: 38, Scale: 2})),
				[]string{`[{"id":1,"d9":"9999999.99","d18":"9999999999999999.99"},{"id":2,"d9":"0.01","d18":"0.01"},{"id":3,"d9":"-9999999.99","d18":"-9999999999999999.99"}]`, `[{"id":4,"d9":null,"d18":null},{"id":5,"d9":"-0.01","d18":"-1.00"}]`},
				`[{"id":6,"d9":"123456789012345678901234567890123456.78","d18":"-0.01"},{"id":7,"d9":"1.00","d18":"2.00"},{"id":8,"d9":null,"d18":"99999999999999999999999999999999999.99"}]`),
			want: []string{
				`{"d18":"-0.01","d9":"123456789012345678901234567890123456.78","id":6}`,
				`{"d18":"-1","d9":"-0.01","id":5}`, // Arrow's JSON drops trailing zeros
				`{"d18":"-9999999999999999.99","d9":"-9999999.99","id":3}`,
				`{"d18":"9999999999999999.99","d9":"9999999.99","id":1}`,
				`{"d18":"99999999999999999999999999999999999.99","d9":null,"id":8}`,
			},
		},
		{
			// Promotions inside a struct, a list and a map.
			name: "promote-nested", versions: []int{2, 3}, transcoded: true,
			build: beforeAfter(
				schemaOf(fID, field(2, "st", st(field(3, "x", spec.IntType{}))),
					field(4, "ls", &spec.ListType{ElementID: 5, Element: spec.IntType{}}),
					field(6, "m", &spec.MapType{KeyID: 7, Key: spec.StringType{}, ValueID: 8, Value: spec.FloatType{}})),
				schemaOf(fID, field(2, "st", st(field(3, "x", spec.LongType{}))),
					field(4, "ls", &spec.ListType{ElementID: 5, Element: spec.LongType{}}),
					field(6, "m", &spec.MapType{KeyID: 7, Key: spec.StringType{}, ValueID: 8, Value: spec.DoubleType{}})),
				[]string{`[{"id":1,"st":{"x":2147483647},"ls":[1,null,-2147483648],"m":[{"key":"a","value":1.5}]},{"id":2,"st":null,"ls":null,"m":null},{"id":3,"st":{"x":null},"ls":[],"m":[{"key":"b","value":null},{"key":"c","value":-0.25}]}]`,
					`[{"id":4,"st":{"x":4},"ls":[4],"m":[]},{"id":5,"st":{"x":-5},"ls":[5,5],"m":[{"key":"e","value":2.5}]}]`},
				`[{"id":6,"st":{"x":9999999999},"ls":[9999999999,null],"m":[{"key":"f","value":1e300}]},{"id":7,"st":null,"ls":[7],"m":null},{"id":8,"st":{"x":null},"ls":null,"m":[{"key":"h","value":0.1}]}]`),
			want: []string{
				`{"id":1,"ls":[1,null,-2147483648],"m":[{"key":"a","value":1.5}],"st":{"x":2147483647}}`,
				`{"id":3,"ls":[],"m":[{"key":"b","value":null},{"key":"c","value":-0.25}],"st":{"x":null}}`,
				`{"id":5,"ls":[5,5],"m":[{"key":"e","value":2.5}],"st":{"x":-5}}`,
				`{"id":6,"ls":[9999999999,null],"m":[{"key":"f","value":1e+300}],"st":{"x":9999999999}}`,
				`{"id":8,"ls":null,"m":[{"key":"h","value":0.1}],"st":{"x":null}}`,
			},
		},
		{
			// A struct field added with an initial-default: old rows read
			// it inside their (non-null) structs.
			name: "add-struct-field-default", versions: []int{3},
			build: beforeAfter(schemaOf(fID, field(2, "st", st(field(3, "x", spec.IntType{})))),
				schemaOf(fID, field(2, "st", st(field(3, "x", spec.IntType{}), spec.NestedField{ID: 4, Name: "y", Type: spec.StringType{}, InitialDefault: json.RawMessage(`"dflt"`), WriteDefault: json.RawMessage(`"w"`)}))),
				[]string{`[{"id":1,"st":{"x":1}},{"id":2,"st":{"x":2}},{"id":3,"st":null}]`, `[{"id":4,"st":{"x":null}},{"id":5,"st":{"x":5}}]`},
				`[{"id":6,"st":{"x":6,"y":"y6"}},{"id":7,"st":{"x":7,"y":null}},{"id":8,"st":{"x":null,"y":"y8"}}]`),
			want: []string{
				`{"id":1,"st":{"x":1,"y":"dflt"}}`,
				`{"id":3,"st":null}`,
				`{"id":5,"st":{"x":5,"y":"dflt"}}`,
				`{"id":6,"st":{"x":6,"y":"y6"}}`,
				`{"id":8,"st":{"x":null,"y":"y8"}}`,
			},
		},
		{
			// a dropped, then a new column named a added (another id): the
			// old files' a must not come back as the new column.
			name: "drop-then-readd-same-name", versions: []int{2, 3}, transcoded: true,
			build: beforeAfter(schemaOf(fID, fA), schemaOf(fID, field(3, "a", spec.StringType{})),
				[]string{`[{"id":1,"a":"old1"},{"id":2,"a":"old2"},{"id":3,"a":null}]`, `[{"id":4,"a":"old4"},{"id":5,"a":"old5"}]`},
				`[{"id":6,"a":"new6"},{"id":7,"a":"new7"},{"id":8,"a":null}]`),
			want: []string{
				`{"a":"new6","id":6}`,
				`{"a":null,"id":1}`,
				`{"a":null,"id":3}`,
				`{"a":null,"id":5}`,
				`{"a":null,"id":8}`,
			},
		},
		{
			// A required column added with an initial-default, as v3
			// allows: old rows read the default.
			name: "add-required-column-default", versions: []int{3}, transcoded: true,
			build: beforeAfter(schemaOf(fID, fA), schemaOf(fID, fA, spec.NestedField{ID: 3, Name: "r", Type: spec.IntType{}, Required: true, InitialDefault: json.RawMessage(`-1`), WriteDefault: json.RawMessage(`0`)}),
				[]string{`[{"id":1,"a":"x1"},{"id":2,"a":"x2"},{"id":3,"a":null}]`, `[{"id":4,"a":"x4"},{"id":5,"a":"x5"}]`},
				`[{"id":6,"a":"x6","r":6},{"id":7,"a":"x7","r":7},{"id":8,"a":null,"r":8}]`),
			want: []string{
				`{"a":"x1","id":1,"r":-1}`,
				`{"a":"x5","id":5,"r":-1}`,
				`{"a":"x6","id":6,"r":6}`,
				`{"a":null,"id":3,"r":-1}`,
				`{"a":null,"id":8,"r":8}`,
			},
		},
		{
			// v3 allows date to timestamp and timestamp_ns: a date reads
			// as its midnight.
			name: "promote-date-timestamp", versions: []int{3},
			noGo: "iceberg-go refuses the promotion (cannot promote date to timestamp)",
			build: beforeAfter(
				schemaOf(fID, field(2, "d", spec.DateType{}), field(3, "dn", spec.DateType{})),
				schemaOf(fID, field(2, "d", spec.TimestampType{}), field(3, "dn", spec.TimestampNsType{})),
				[]string{`[{"id":1,"d":"2024-02-29","dn":"1970-01-01"},{"id":2,"d":"2024-03-01","dn":"1970-01-02"},{"id":3,"d":"1969-12-31","dn":null}]`, `[{"id":4,"d":null,"dn":"2000-01-01"},{"id":5,"d":"2262-04-11","dn":"1677-09-22"}]`},
				`[{"id":6,"d":"2024-05-06T07:08:09.123456","dn":"2024-05-06T07:08:09.123456789"},{"id":7,"d":null,"dn":null},{"id":8,"d":"1900-01-01T00:00:00","dn":"1900-01-01T00:00:00.000000001"}]`),
			want: []string{
				`{"d":"1900-01-01T00:00:00","dn":"1900-01-01T00:00:00.000000001","id":8}`,
				`{"d":"1969-12-31T00:00:00","dn":null,"id":3}`,
				`{"d":"2024-02-29T00:00:00","dn":"1970-01-01T00:00:00","id":1}`,
				`{"d":"2024-05-06T07:08:09.123456","dn":"2024-05-06T07:08:09.123456789","id":6}`,
				`{"d":"2262-04-11T00:00:00","dn":"1677-09-22T00:00:00","id":5}`,
			},
		},
		{
			// A date after 2262-04-11 has no timestamp_ns: the spec wants
			// the read to fail, and compaction must not write the wrapped
			// product of an overflow as the row's value.
			name: "promote-date-timestamp-ns-out-of-range", versions: []int{3},
			modes: []string{modeDefault, modeArrow, modeRewriteAll},
			build: beforeAfter(schemaOf(fID, field(3, "dn", spec.DateType{})), schemaOf(fID, field(3, "dn", spec.TimestampNsType{})),
				[]string{`[{"id":1,"dn":"2300-01-01"},{"id":2,"dn":"2000-01-01"}]`, `[{"id":4,"dn":"1000-01-01"},{"id":5,"dn":null}]`},
				`[{"id":6,"dn":"2024-05-06T07:08:09.123456789"},{"id":7,"dn":null}]`),
			unreadable: true, refuse: "is out of the range of timestamp[ns]",
		},
	}
}

func pf(source int, name, transform string) spec.PartitionField {
	return spec.PartitionField{SourceID: source, Name: name, Transform: spec.ParseTransform(transform)}
}

// rowsJSON renders rows id, cat, k for ids as a JSON array, k = id*10
// (null when id is a multiple of 5).
func rowsJSON(cat string, ids ...int64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		k := strconv.FormatInt(id*10, 10)
		if id%5 == 0 {
			k = "null"
		}
		fmt.Fprintf(&b, `{"id":%d,"cat":%q,"k":%s}`, id, cat, k)
	}
	b.WriteByte(']')
	return b.String()
}

// wantRows is what rowsJSON wrote for ids, less the deleted ones, as the
// scan encodes it.
func wantRows(cat func(id int64) string, from, to int64, deleted ...int64) []string {
	var out []string
	for id := from; id <= to; id++ {
		if slices.Contains(deleted, id) {
			continue
		}
		k := strconv.FormatInt(id*10, 10)
		if id%5 == 0 {
			k = "null"
		}
		out = append(out, fmt.Sprintf(`{"cat":%q,"id":%d,"k":%s}`, cat(id), id, k))
	}
	slices.Sort(out)
	return out
}

// bucketFile is the ids of one file of bucket bucket; first marks the
// first of the bucket's two files.
type bucketFile struct {
	bucket int32
	ids    []int64
	first  bool
}

// bucketFiles splits ids by bucket[n] into two files per bucket.
func bucketFiles(n int, ids []int64) []bucketFile {
	buckets := map[int32][]int64{}
	for _, id := range ids {
		buckets[bucketLong(id, n)] = append(buckets[bucketLong(id, n)], id)
	}
	var out []bucketFile
	for bk := range int32(n) {
		got := buckets[bk]
		for half := range 2 {
			if part := got[half*len(got)/2 : (half+1)*len(got)/2]; len(part) > 0 {
				out = append(out, bucketFile{bucket: bk, ids: part, first: half == 0})
			}
		}
	}
	return out
}

// partitionCases evolve the partition spec: files under each spec, two
// per partition (so that each partition is a group), deletes on both.
func partitionCases() []evoCase {
	s := schemaOf(fID, field(2, "cat", spec.StringType{}), field(3, "k", spec.LongType{}))
	catOf := func(id int64) string { return []string{"a", "b"}[id%2] }
	byCat := func(ids ...int64) map[string][]int64 {
		m := map[string][]int64{}
		for _, id := range ids {
			m[catOf(id)] = append(m[catOf(id)], id)
		}
		return m
	}
	return []evoCase{
		{
			// Unpartitioned files, then identity(cat): the old files stay
			// in spec 0, the new ones in one partition per cat.
			name: "partition-added", transcoded: true, versions: []int{2, 3},
			build: func(t *testing.T, v int) *evo {
				b := newEvo(t, v, s, unpartitioned, spec.SortOrder{})
				f1 := b.write(s, nil, rowsJSON("b", 1, 3, 5))
				b.write(s, nil, rowsJSON("a", 2, 4, 6))
				b.del(f1, 1) // 3
				b.partitionBy(pf(2, "cat", "identity"))
				for _, ids := range [][]int64{{7, 9}, {11, 13}, {8, 10}, {12, 14}} {
					f := b.write(s, []any{catOf(ids[0])}, rowsJSON(catOf(ids[0]), ids...))
					if ids[0] == 11 || ids[0] == 8 {
						b.del(f, 0) // 11, 8
					}
				}
				return b
			},
			want: wantRows(catOf, 1, 14, 3, 8, 11),
		},
		{
			// identity(cat), identity(k % ...): the second field dropped,
			// as v1 drops one (void, the field kept) in v2 and by removing
			// it in v3.
			name: "partition-field-dropped", transcoded: true, versions: []int{2, 3},
			build: func(t *testing.T, v int) *evo {
				s := schemaOf(fID, field(2, "cat", spec.StringType{}), field(3, "k", spec.LongType{}), field(4, "g", spec.IntType{}))
				ps := spec.PartitionSpec{Fields: []spec.PartitionField{
					{SourceID: 2, FieldID: 1000, Name: "cat", Transform: spec.ParseTransform("identity")},
					{SourceID: 4, FieldID: 1001, Name: "g", Transform: spec.ParseTransform("identity")},
				}}
				b := newEvo(t, v, s, ps, spec.SortOrder{})
				row := func(id int64, g int) string {
					return fmt.Sprintf(`{"id":%d,"cat":%q,"k":%d,"g":%d}`, id, catOf(id), id*10, g)
				}
				f1 := b.write(s, []any{"a", int32(1)}, "["+row(2, 1)+","+row(4, 1)+"]")
				b.write(s, []any{"a", int32(1)}, "["+row(6, 1)+"]")
				b.write(s, []any{"a", int32(2)}, "["+row(8, 2)+"]")
				f4 := b.write(s, []any{"b", int32(2)}, "["+row(1, 2)+","+row(3, 2)+"]")
				b.del(f1, 0)
				b.del(f4, 1)
				var part func(cat string) []any
				if v == 2 {
					b.partitionBy(spec.PartitionField{SourceID: 2, FieldID: 1000, Name: "cat", Transform: spec.ParseTransform("identity")},
						spec.PartitionField{SourceID: 4, FieldID: 1001, Name: "g", Transform: spec.ParseTransform("void")})
					part = func(cat string) []any { return []any{cat, nil} }
				} else {
					b.partitionBy(spec.PartitionField{SourceID: 2, FieldID: 1000, Name: "cat", Transform: spec.ParseTransform("identity")})
					part = func(cat string) []any { return []any{cat} }
				}
				f5 := b.write(s, part("a"), "["+row(10, 3)+","+row(12, 4)+"]")
				b.write(s, part("a"), "["+row(14, 5)+"]")
				b.write(s, part("b"), "["+row(5, 1)+"]")
				b.write(s, part("b"), "["+row(7, 9)+"]")
				b.del(f5, 1)
				return b
			},
			want: []string{
				`{"cat":"a","g":1,"id":4,"k":40}`,
				`{"cat":"a","g":1,"id":6,"k":60}`,
				`{"cat":"a","g":2,"id":8,"k":80}`,
				`{"cat":"a","g":3,"id":10,"k":100}`,
				`{"cat":"a","g":5,"id":14,"k":140}`,
				`{"cat":"b","g":1,"id":5,"k":50}`,
				`{"cat":"b","g":2,"id":1,"k":10}`,
				`{"cat":"b","g":9,"id":7,"k":70}`,
			},
		},
		{
			// identity(k) on an int column promoted to long: the old
			// files' partition values are ints in their manifests, the
			// new ones longs; compaction writes the old ones' outputs.
			name: "partition-source-promoted", versions: []int{2, 3},
			build: func(t *testing.T, v int) *evo {
				s0 := schemaOf(fID, field(2, "cat", spec.StringType{}), field(3, "k", spec.IntType{}))
				s1 := schemaOf(fID, field(2, "cat", spec.StringType{}), field(3, "k", spec.LongType{}))
				b := newEvo(t, v, s0, spec.PartitionSpec{Fields: []spec.PartitionField{{SourceID: 3, FieldID: 1000, Name: "k", Transform: spec.ParseTransform("identity")}}}, spec.SortOrder{})
				f1 := b.write(s0, []any{int32(7)}, `[{"id":1,"cat":"a","k":7},{"id":2,"cat":"b","k":7}]`)
				b.write(s0, []any{int32(7)}, `[{"id":3,"cat":"a","k":7}]`)
				b.write(s0, []any{int32(8)}, `[{"id":4,"cat":"a","k":8}]`)
				b.del(f1, 0)
				b.schema(s1.Fields...)
				f4 := b.write(s1, []any{int64(8)}, `[{"id":5,"cat":"a","k":8},{"id":6,"cat":"b","k":8}]`)
				b.write(s1, []any{int64(9999999999)}, `[{"id":7,"cat":"a","k":9999999999}]`)
				b.write(s1, []any{int64(9999999999)}, `[{"id":8,"cat":"b","k":9999999999}]`)
				b.del(f4, 1)
				return b
			},
			want: []string{
				`{"cat":"a","id":3,"k":7}`,
				`{"cat":"a","id":4,"k":8}`,
				`{"cat":"a","id":5,"k":8}`,
				`{"cat":"a","id":7,"k":9999999999}`,
				`{"cat":"b","id":2,"k":7}`,
				`{"cat":"b","id":8,"k":9999999999}`,
			},
		},
		{
			// The partition source column renamed.
			name: "partition-source-renamed", versions: []int{2, 3}, transcoded: true,
			build: func(t *testing.T, v int) *evo {
				b := newEvo(t, v, s, spec.PartitionSpec{Fields: []spec.PartitionField{{SourceID: 2, FieldID: 1000, Name: "cat", Transform: spec.ParseTransform("identity")}}}, spec.SortOrder{})
				f1 := b.write(s, []any{"a"}, rowsJSON("a", 2, 4))
				b.write(s, []any{"b"}, rowsJSON("b", 1, 3))
				b.del(f1, 0)
				b.schema(fID, field(2, "category", spec.StringType{}), field(3, "k", spec.LongType{}))
				s1 := schemaOf(fID, field(2, "category", spec.StringType{}), field(3, "k", spec.LongType{}))
				f3 := b.write(s1, []any{"a"}, `[{"id":6,"category":"a","k":60},{"id":8,"category":"a","k":80}]`)
				b.write(s1, []any{"b"}, `[{"id":5,"category":"b","k":null}]`)
				b.del(f3, 1)
				return b
			},
			want: []string{
				`{"category":"a","id":4,"k":40}`,
				`{"category":"a","id":6,"k":60}`,
				`{"category":"b","id":1,"k":10}`,
				`{"category":"b","id":3,"k":30}`,
				`{"category":"b","id":5,"k":null}`,
			},
		},
		{
			// bucket[2](id), then bucket[4](id): a file per bucket written
			// twice under each spec.
			name: "bucket-count-changed", transcoded: true, versions: []int{2, 3},
			build: func(t *testing.T, v int) *evo {
				b := newEvo(t, v, s, spec.PartitionSpec{Fields: []spec.PartitionField{{SourceID: 1, FieldID: 1000, Name: "id_bucket", Transform: spec.ParseTransform("bucket[2]")}}}, spec.SortOrder{})
				write := func(n int, ids []int64) {
					for _, f := range bucketFiles(n, ids) {
						var rows []string
						for _, id := range f.ids {
							rows = append(rows, strings.TrimSuffix(strings.TrimPrefix(rowsJSON(catOf(id), id), "["), "]"))
						}
						df := b.write(s, []any{f.bucket}, "["+strings.Join(rows, ",")+"]")
						if f.first {
							b.del(df, 0)
						}
					}
				}
				write(2, ids(1, 20))
				b.partitionBy(pf(1, "id_bucket_4", "bucket[4]"))
				write(4, ids(21, 30))
				return b
			},
			want: func() []string {
				var deleted []int64
				for _, f := range append(bucketFiles(2, ids(1, 20)), bucketFiles(4, ids(21, 30))...) {
					if f.first {
						deleted = append(deleted, f.ids[0])
					}
				}
				return wantRows(catOf, 1, 50, deleted...) // ids(21, 30) is 21..50
			}(),
		},
		{
			// Three specs in turn: unpartitioned, identity(cat), then
			// identity(cat) and bucket[2](id); each group holds files of
			// one spec and partition.
			name: "several-specs", transcoded: true, versions: []int{2, 3},
			build: func(t *testing.T, v int) *evo {
				b := newEvo(t, v, s, unpartitioned, spec.SortOrder{})
				f := b.write(s, nil, rowsJSON("b", 1, 3))
				b.write(s, nil, rowsJSON("a", 2, 4))
				b.del(f, 0) // 1
				b.partitionBy(pf(2, "cat", "identity"))
				for cat, ids := range byCat(5, 6, 7, 8, 9, 10, 11, 12) {
					f := b.write(s, []any{cat}, rowsJSON(cat, ids[:2]...))
					b.write(s, []any{cat}, rowsJSON(cat, ids[2:]...))
					b.del(f, 1) // 7, 8
				}
				b.partitionBy(pf(2, "cat", "identity"), pf(1, "id_bucket", "bucket[2]"))
				for _, id := range ids(13, 8) {
					f := b.write(s, []any{catOf(id), bucketLong(id, 2)}, rowsJSON(catOf(id), id))
					if id == 13 {
						b.del(f, 0)
					}
				}
				return b
			},
			want: wantRows(catOf, 1, 20, 1, 7, 8, 13),
		},
	}
}

// sortCase changes the default sort order from id to k descending, nulls
// last, and compacts with Sort: every output is in the new order.
func sortCase() evoCase {
	s := schemaOf(fID, field(2, "cat", spec.StringType{}), field(3, "k", spec.LongType{}))
	byID := spec.SortOrder{OrderID: 1, Fields: []spec.SortField{{SourceID: 1, Transform: spec.ParseTransform("identity"), Direction: "asc", NullOrder: "nulls-first"}}}
	byK := spec.SortOrder{Fields: []spec.SortField{{SourceID: 3, Transform: spec.ParseTransform("identity"), Direction: "desc", NullOrder: "nulls-last"}}}
	catOf := func(int64) string { return "c" }
	return evoCase{
		name: "sort-order-changed", versions: []int{2, 3},
		modes: []string{modeDefault, modeArrow, modeRewriteAll, modeUpgrade, modeUpgradeDVLast},
		build: func(t *testing.T, v int) *evo {
			b := newEvo(t, v, s, unpartitioned, byID)
			f1 := b.write(s, nil, rowsJSON("c", 1, 2, 3, 4, 5))
			b.write(s, nil, rowsJSON("c", 6, 7, 8, 9, 10))
			b.del(f1, 1)
			b.evolve(spec.AddSortOrder{SortOrder: byK}, spec.SetDefaultSortOrder{SortOrderID: spec.LastAdded})
			f3 := b.write(s, nil, rowsJSON("c", 15, 11, 14, 12, 13))
			b.del(f3, 0)
			return b
		},
		want: wantRows(catOf, 1, 14, 2),
		sort: sortedDesc("k"),
	}
}

// sortedDesc checks that every live data file of tbl records the default
// sort order and holds column col (a long) descending, nulls last.
func sortedDesc(col string) func(t *testing.T, tbl *catalog.Table) {
	return func(t *testing.T, tbl *catalog.Table) {
		for _, fe := range liveFiles(t, tbl).Data {
			df := fe.Entry.DataFile
			if df.SortOrderID == nil || int(*df.SortOrderID) != tbl.Metadata.DefaultSortOrderID {
				t.Errorf("%s: sort order id %v, want %d", df.FilePath, df.SortOrderID, tbl.Metadata.DefaultSortOrderID)
			}
			var ks []*int64
			err := scan.ReadFile(t.Context(), tbl.IO, tbl.Metadata, fe, table.Applicable{}, scan.Options{}, func(rec arrow.RecordBatch) error {
				c := rec.Column(rec.Schema().FieldIndices(col)[0]).(*array.Int64)
				for i := range c.Len() {
					if c.IsNull(i) {
						ks = append(ks, nil)
					} else {
						ks = append(ks, ptr(c.Value(i)))
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			sorted := slices.IsSortedFunc(ks, func(a, b *int64) int {
				switch {
				case a == nil && b == nil:
					return 0
				case a == nil:
					return 1 // nulls last
				case b == nil:
					return -1
				}
				return cmp.Compare(*b, *a) // descending
			})
			if !sorted {
				var vals []string
				for _, k := range ks {
					if k == nil {
						vals = append(vals, "null")
					} else {
						vals = append(vals, strconv.FormatInt(*k, 10))
					}
				}
				t.Errorf("%s: %s is %s, not descending with nulls last", df.FilePath, col, strings.Join(vals, " "))
			}
		}
	}
}

// sortEvolvedCase sorts (v3) by a column added with an initial-default
// after some files were written: their rows sort as the default, among
// the values of the files written after.
func sortEvolvedCase() evoCase {
	s0 := schemaOf(fID, field(2, "k", spec.IntType{}))
	b := spec.NestedField{ID: 3, Name: "b", Type: spec.LongType{}, InitialDefault: json.RawMessage(`7`)}
	s1 := schemaOf(fID, field(2, "k", spec.LongType{}), b)
	byB := spec.SortOrder{Fields: []spec.SortField{{SourceID: 3, Transform: spec.ParseTransform("identity"), Direction: "desc", NullOrder: "nulls-last"}}}
	return evoCase{
		name: "sort-by-defaulted-column", versions: []int{3},
		build: func(t *testing.T, v int) *evo {
			e := newEvo(t, v, s0, unpartitioned, spec.SortOrder{})
			f1 := e.write(s0, nil, `[{"id":1,"k":1},{"id":2,"k":2},{"id":3,"k":null}]`)
			e.del(f1, 1)
			e.schema(s1.Fields...)
			e.evolve(spec.AddSortOrder{SortOrder: byB}, spec.SetDefaultSortOrder{SortOrderID: spec.LastAdded})
			f2 := e.write(s1, nil, `[{"id":4,"k":4,"b":9},{"id":5,"k":5,"b":null},{"id":6,"k":6,"b":5},{"id":7,"k":7,"b":8}]`)
			e.del(f2, 3)
			e.write(s1, nil, `[{"id":8,"k":8,"b":6},{"id":9,"k":9,"b":7}]`)
			return e
		},
		want: []string{
			`{"b":5,"id":6,"k":6}`,
			`{"b":6,"id":8,"k":8}`,
			`{"b":7,"id":1,"k":1}`,
			`{"b":7,"id":3,"k":null}`,
			`{"b":7,"id":9,"k":9}`,
			`{"b":9,"id":4,"k":4}`,
			`{"b":null,"id":5,"k":5}`,
		},
		sort: sortedDesc("b"),
	}
}

// mappedCase: files without field ids, added as PyIceberg's add_files
// does and read through the name mapping, beside files with ids; then the
// schema evolves (age renamed, a column added, which the name mapping
// does not name) and more files are written.
func mappedCase() evoCase {
	return evoCase{
		name: "name-mapped-then-evolved", transcoded: true, versions: []int{2, 3},
		build: func(t *testing.T, v int) *evo {
			e, mapped := newMappedTable(t, v, 2, true)
			b := &evo{t: t, e: e, v: v, tbl: e.Load(t)}
			s0 := *b.tbl.Metadata.CurrentSchema()
			f := b.write(s0, nil, `[{"id":10,"name":"Dora","age":40,"attributes":[{"key":"k","value":"v"}],"scores":[1,2],"profile":{"email":"d@x","verified":true}},`+
				`{"id":11,"name":"Eve","age":null,"attributes":[],"scores":null,"profile":null}]`)
			b.del(mapped[0], 1) // Bob, in the first copy
			b.del(f, 1)         // Eve
			s1 := slices.Clone(s0.Fields)
			s1[2].Name = "years"
			s1 = append(s1, field(12, "nick", spec.StringType{}))
			b.schema(s1...)
			f2 := b.write(schemaOf(s1...), nil, `[{"id":20,"name":"Finn","years":20,"attributes":null,"scores":[],"profile":{"email":null,"verified":false},"nick":"F"},`+
				`{"id":21,"name":"Gus","years":21,"attributes":null,"scores":[3],"profile":null,"nick":null}]`)
			b.del(mapped[1], 0) // Alice, in the second copy
			b.del(f2, 1)        // Gus
			return b
		},
		want: []string{
			`{"attributes":[{"key":"height","value":"5.5"},{"key":"weight","value":"130"}],"id":1,"name":"Alice","nick":null,"profile":{"email":"alice@example.com","verified":true},"scores":[85,90],"years":25}`,
			`{"attributes":[{"key":"height","value":"5.8"},{"key":"weight","value":"160"}],"id":3,"name":"Charlie","nick":null,"profile":{"email":"charlie@example.com","verified":true},"scores":[92],"years":35}`,
			`{"attributes":[{"key":"height","value":"5.8"},{"key":"weight","value":"160"}],"id":3,"name":"Charlie","nick":null,"profile":{"email":"charlie@example.com","verified":true},"scores":[92],"years":35}`,
			`{"attributes":[{"key":"height","value":"6.0"},{"key":"weight","value":"180"}],"id":2,"name":"Bob","nick":null,"profile":{"email":"bob@example.com","verified":false},"scores":[78,82,88],"years":30}`,
			`{"attributes":[{"key":"k","value":"v"}],"id":10,"name":"Dora","nick":null,"profile":{"email":"d@x","verified":true},"scores":[1,2],"years":40}`,
			`{"attributes":null,"id":20,"name":"Finn","nick":"F","profile":{"email":null,"verified":false},"scores":[],"years":20}`,
		},
	}
}

// v3TypeCases: the types format v3 adds, in files written before and
// after a change.
func v3TypeCases() []evoCase {
	return []evoCase{
		{
			name: "timestamp-ns", transcoded: true, versions: []int{3},
			build: beforeAfter(schemaOf(fID, field(2, "tn", spec.TimestampNsType{})),
				schemaOf(fID, field(2, "tn", spec.TimestampNsType{}), field(3, "tzn", spec.TimestampTzNsType{})),
				[]string{`[{"id":1,"tn":"2024-01-02T03:04:05.123456789"},{"id":2,"tn":"1677-09-22T00:00:00.000000001"},{"id":3,"tn":null}]`, `[{"id":4,"tn":"2262-04-11T00:00:00"},{"id":5,"tn":"1969-12-31T23:59:59.999999999"}]`},
				`[{"id":6,"tn":"2000-01-01T00:00:00.000000001","tzn":"2000-01-01T00:00:00.000000001Z"},{"id":7,"tn":null,"tzn":null},{"id":8,"tn":null,"tzn":"1969-12-31T23:59:59.999999999Z"}]`),
			want: []string{
				`{"id":1,"tn":"2024-01-02T03:04:05.123456789","tzn":null}`,
				`{"id":3,"tn":null,"tzn":null}`,
				`{"id":5,"tn":"1969-12-31T23:59:59.999999999","tzn":null}`,
				`{"id":6,"tn":"2000-01-01T00:00:00.000000001","tzn":"2000-01-01T00:00:00.000000001Z"}`,
				`{"id":8,"tn":null,"tzn":"1969-12-31T23:59:59.999999999Z"}`,
			},
		},
		{
			// WKB points, as binary.
			name: "geometry-geography", versions: []int{3},
			build: beforeAfter(schemaOf(fID, field(2, "g", spec.GeometryType{})),
				schemaOf(fID, field(2, "g", spec.GeometryType{}), field(3, "gg", spec.GeographyType{})),
				[]string{`[{"id":1,"g":"AQEAAAAAAAAAAADwPwAAAAAAAABA"},{"id":2,"g":"AQEAAAAAAAAAAAAIQAAAAAAAABBA"},{"id":3,"g":null}]`, `[{"id":4,"g":"AQEAAAAAAAAAAAAUQAAAAAAAABhA"},{"id":5,"g":"AQEAAAAAAAAAAAAcQAAAAAAAACBA"}]`},
				`[{"id":6,"g":"AQEAAAAAAAAAAAAiQAAAAAAAACRA","gg":"AQEAAAAAAAAAAAAmQAAAAAAAAChA"},{"id":7,"g":null,"gg":null},{"id":8,"g":null,"gg":"AQEAAAAAAAAAAAAqQAAAAAAAACxA"}]`),
			want: []string{
				`{"g":"AQEAAAAAAAAAAAAcQAAAAAAAACBA","gg":null,"id":5}`,
				`{"g":"AQEAAAAAAAAAAAAiQAAAAAAAACRA","gg":"AQEAAAAAAAAAAAAmQAAAAAAAAChA","id":6}`,
				`{"g":"AQEAAAAAAAAAAADwPwAAAAAAAABA","gg":null,"id":1}`,
				`{"g":null,"gg":"AQEAAAAAAAAAAAAqQAAAAAAAACxA","id":8}`,
				`{"g":null,"gg":null,"id":3}`,
			},
			noGo:  "iceberg-go reads a GEOMETRY column as binary and refuses it as geometry (cannot promote binary to geometry)",
			after: checkGeoAnnotated,
		},
		{
			// Geometry and geography as another writer stores them, with
			// the Parquet GEOMETRY and GEOGRAPHY logical types: the outputs
			// must keep them, or readers that check the annotation
			// (iceberg-go) can no longer read the column.
			name: "geometry-geography-annotated", versions: []int{3},
			build: func(t *testing.T, v int) *evo {
				s := schemaOf(fID, field(2, "g", spec.GeometryType{}), field(3, "gg", spec.GeographyType{}))
				b := newEvo(t, v, schemaOf(fID, field(2, "g", spec.GeometryType{})), unpartitioned, spec.SortOrder{})
				f1 := b.writeGeo(t, s.Fields[:2], []int64{1, 2, 3}, "AQEAAAAAAAAAAADwPwAAAAAAAABA", "", "AQEAAAAAAAAAAAAIQAAAAAAAABBA")
				b.del(f1, 1)
				b.schema(s.Fields...)
				f2 := b.writeGeo(t, s.Fields, []int64{4, 5}, "AQEAAAAAAAAAAAAUQAAAAAAAABhA", "AQEAAAAAAAAAAAAcQAAAAAAAACBA", "", "AQEAAAAAAAAAAAAiQAAAAAAAACRA")
				b.del(f2, 0)
				return b
			},
			want: []string{
				`{"g":"AQEAAAAAAAAAAAAIQAAAAAAAABBA","gg":null,"id":3}`,
				`{"g":"AQEAAAAAAAAAAADwPwAAAAAAAABA","gg":null,"id":1}`,
				`{"g":null,"gg":"AQEAAAAAAAAAAAAiQAAAAAAAACRA","id":5}`,
			},
			noGo:  "iceberg-go reads a GEOMETRY column as binary and refuses it as geometry (cannot promote binary to geometry)",
			after: checkGeoAnnotated,
		},
		{
			// A variant column added, and a file holding variants as
			// another writer stores them (unshredded): icectl cannot read
			// variants yet, so compaction must fail the group, naming the
			// type, and commit nothing, not drop or null the column.
			name: "variant-added", versions: []int{3},
			modes: []string{modeDefault, modeArrow, modeRewriteAll},
			build: func(t *testing.T, v int) *evo {
				s0 := schemaOf(fID, fA)
				b := newEvo(t, v, s0, unpartitioned, spec.SortOrder{})
				f1 := b.write(s0, nil, `[{"id":1,"a":"x1"},{"id":2,"a":"x2"}]`)
				b.write(s0, nil, `[{"id":3,"a":"x3"}]`)
				b.del(f1, 1)
				b.schema(fID, fA, field(3, "v", spec.VariantType{}))
				b.writeVariant(t, []int64{4, 5, 6})
				return b
			},
			unreadable: true, refuse: "variant",
		},
		{
			// unknown is never stored: an unknown column reads as null,
			// and may later be promoted to any type, which new files hold.
			name: "unknown-then-promoted", transcoded: true, versions: []int{3},
			build: func(t *testing.T, v int) *evo {
				s0 := schemaOf(fID, fA)
				b := newEvo(t, v, s0, unpartitioned, spec.SortOrder{})
				f1 := b.write(s0, nil, `[{"id":1,"a":"x1"},{"id":2,"a":"x2"}]`)
				b.del(f1, 1)
				s1 := schemaOf(fID, fA, field(3, "u", spec.UnknownType{}))
				b.schema(s1.Fields...)
				f2 := b.write(s1, nil, `[{"id":3,"a":"x3"},{"id":4,"a":"x4"}]`)
				b.del(f2, 0)
				s2 := schemaOf(fID, fA, field(3, "u", spec.StringType{}))
				b.schema(s2.Fields...)
				f3 := b.write(s2, nil, `[{"id":5,"a":"x5","u":"u5"},{"id":6,"a":"x6","u":null},{"id":7,"a":"x7","u":"u7"}]`)
				b.del(f3, 2)
				b.write(s2, nil, `[{"id":8,"a":"x8","u":"u8"}]`)
				return b
			},
			want: []string{
				`{"a":"x1","id":1,"u":null}`,
				`{"a":"x4","id":4,"u":null}`,
				`{"a":"x5","id":5,"u":"u5"}`,
				`{"a":"x6","id":6,"u":null}`,
				`{"a":"x8","id":8,"u":"u8"}`,
			},
		},
		{
			name: "unknown", versions: []int{3},
			build: beforeAfter(schemaOf(fID, fA), schemaOf(fID, fA, field(3, "u", spec.UnknownType{})),
				[]string{`[{"id":1,"a":"x1"},{"id":2,"a":"x2"},{"id":3,"a":null}]`, `[{"id":4,"a":"x4"},{"id":5,"a":"x5"}]`},
				`[{"id":6,"a":"x6"},{"id":7,"a":"x7"},{"id":8,"a":null}]`),
			// An unknown column is not part of the rows the scan returns
			// (nor of iceberg-go's): it is always null and stored nowhere.
			want: []string{
				`{"a":"x1","id":1}`,
				`{"a":"x5","id":5}`,
				`{"a":"x6","id":6}`,
				`{"a":null,"id":3}`,
				`{"a":null,"id":8}`,
			},
		},
	}
}

// writeGeo writes rows of fields (id, then geometry or geography columns)
// as a writer that annotates them does, with the Parquet GEOMETRY and
// GEOGRAPHY logical types, and appends the file. vals are the base64 WKB
// values, row by row, column by column; "" is null.
func (b *evo) writeGeo(t *testing.T, fields []spec.NestedField, ids []int64, vals ...string) manifest.DataFile {
	t.Helper()
	nodes := schema.FieldList{schema.NewInt64Node("id", parquet.Repetitions.Required, int32(fields[0].ID))}
	for _, f := range fields[1:] {
		var lt schema.LogicalType = schema.GeometryLogicalType{}
		if _, ok := f.Type.(spec.GeographyType); ok {
			lt = schema.GeographyLogicalType{}
		}
		n, err := schema.NewPrimitiveNodeLogical(f.Name, parquet.Repetitions.Optional, lt, parquet.Types.ByteArray, -1, int32(f.ID))
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, nodes, -1)
	if err != nil {
		t.Fatal(err)
	}
	b.n++
	loc := table.DataLocation(b.tbl.Metadata) + "/geo" + strconv.Itoa(b.n) + ".parquet"
	var buf bytes.Buffer
	w := file.NewParquetWriter(&buf, root)
	rg := w.AppendRowGroup()
	cw, err := rg.NextColumn()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cw.(*file.Int64ColumnChunkWriter).WriteBatch(ids, nil, nil); err != nil {
		t.Fatal(err)
	}
	cw.Close()
	// The same rows, as icectl's writer stores them, for the metrics.
	rows := make([]map[string]any, len(ids))
	for i, id := range ids {
		rows[i] = map[string]any{"id": id}
	}
	for c, f := range fields[1:] {
		var values []parquet.ByteArray
		var defs []int16
		for r := range ids {
			v := vals[r*(len(fields)-1)+c]
			if v == "" {
				defs = append(defs, 0)
				rows[r][f.Name] = nil
				continue
			}
			wkb, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				t.Fatal(err)
			}
			defs = append(defs, 1)
			values = append(values, wkb)
			rows[r][f.Name] = v
		}
		cw, err := rg.NextColumn()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cw.(*file.ByteArrayColumnChunkWriter).WriteBatch(values, defs, nil); err != nil {
			t.Fatal(err)
		}
		cw.Close()
	}
	rg.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	s := schemaOf(fields...)
	as, err := datafile.ArrowSchema(&s)
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, as, bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	df := b.e.WriteRecord(t, b.tbl, "geo-metrics"+strconv.Itoa(b.n), nil, &s, rec)
	if err := os.WriteFile(strings.TrimPrefix(loc, "file://"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	df.FilePath, df.FileSizeInBytes, df.SplitOffsets, df.ColumnSizes = loc, int64(buf.Len()), nil, nil
	df.SpecID = int32(b.tbl.Metadata.DefaultSpecID)
	b.tbl = b.e.Append(t, b.tbl, df)
	return df
}

// checkGeoAnnotated checks that every live data file stores columns g and
// gg with the Parquet GEOMETRY and GEOGRAPHY logical types.
func checkGeoAnnotated(t *testing.T, tbl *catalog.Table) {
	t.Helper()
	for _, fe := range liveFiles(t, tbl).Data {
		path := strings.TrimPrefix(fe.Entry.DataFile.FilePath, "file://")
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		st, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		info, err := datafile.InspectParquet(f, st.Size())
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range info.Schema {
			want := map[string]string{"g": "geometry", "gg": "geography"}[n.Name]
			if want != "" && !strings.Contains(strings.ToLower(n.LogicalType), want) {
				t.Errorf("%s: column %s is %s %q, want the %s logical type", path, n.Name, n.PhysicalType, n.LogicalType, want)
			}
		}
	}
}

// writeVariant writes a file of columns id (field 1) and v (field 3), an
// unshredded VARIANT group as the Parquet variant spec lays it out, with
// the int8 value 42 in every row but the second (null), and appends it.
func (b *evo) writeVariant(t *testing.T, ids []int64) manifest.DataFile {
	t.Helper()
	meta, err := schema.NewPrimitiveNode("metadata", parquet.Repetitions.Required, parquet.Types.ByteArray, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	val, err := schema.NewPrimitiveNode("value", parquet.Repetitions.Required, parquet.Types.ByteArray, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	v, err := schema.NewGroupNodeLogical("v", parquet.Repetitions.Optional, schema.FieldList{meta, val}, schema.VariantLogicalType{}, 3)
	if err != nil {
		t.Fatal(err)
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, schema.FieldList{schema.NewInt64Node("id", parquet.Repetitions.Required, 1), v}, -1)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := file.NewParquetWriter(&buf, root)
	rg := w.AppendRowGroup()
	cw, err := rg.NextColumn()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cw.(*file.Int64ColumnChunkWriter).WriteBatch(ids, nil, nil); err != nil {
		t.Fatal(err)
	}
	cw.Close()
	defs := make([]int16, len(ids))
	for i := range defs {
		defs[i] = 1
	}
	defs[1] = 0
	// Metadata: version 1, an empty dictionary; value: primitive int8 42.
	for _, cell := range [][]byte{{0x01, 0x00, 0x00}, {0x0c, 42}} {
		var vals []parquet.ByteArray
		for range len(ids) - 1 {
			vals = append(vals, cell)
		}
		cw, err := rg.NextColumn()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cw.(*file.ByteArrayColumnChunkWriter).WriteBatch(vals, defs, nil); err != nil {
			t.Fatal(err)
		}
		cw.Close()
	}
	rg.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b.n++
	loc := table.DataLocation(b.tbl.Metadata) + "/variant" + strconv.Itoa(b.n) + ".parquet"
	if err := os.WriteFile(strings.TrimPrefix(loc, "file://"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	df := manifest.DataFile{Content: manifest.ContentData, FilePath: loc, FileFormat: "PARQUET", Partition: []any{},
		RecordCount: int64(len(ids)), FileSizeInBytes: int64(buf.Len()), SpecID: int32(b.tbl.Metadata.DefaultSpecID)}
	b.tbl = b.e.Append(t, b.tbl, df)
	return df
}

// equalityCases: equality deletes written under an older schema, applied
// (by compaction's reads and dv merge --equality) through the evolved one.
func equalityCases() []evoCase {
	idInt := spec.NestedField{ID: 1, Name: "id", Type: spec.IntType{}, Required: true}
	return []evoCase{
		{
			// id promoted from int to long: the older delete file holds
			// ints, the newer longs; both match rows of both kinds of file.
			name: "eq-delete-on-promoted-column", versions: []int{2, 3},
			build: func(t *testing.T, v int) *evo {
				s0 := schemaOf(idInt, fA)
				s1 := schemaOf(fID, fA)
				b := newEvo(t, v, s0, unpartitioned, spec.SortOrder{})
				f1 := b.write(s0, nil, `[{"id":1,"a":"x1"},{"id":2,"a":"x2"},{"id":3,"a":"x3"}]`)
				b.write(s0, nil, `[{"id":4,"a":"x4"},{"id":5,"a":"x5"}]`)
				b.eqDel(schemaOf(idInt), []int{1}, nil, `[{"id":2}]`)
				b.del(f1, 0)
				b.schema(s1.Fields...)
				b.write(s1, nil, `[{"id":6,"a":"x6"},{"id":3000000000,"a":"big"},{"id":8,"a":"x8"}]`)
				b.eqDel(schemaOf(fID), []int{1}, nil, `[{"id":5},{"id":8}]`)
				b.write(s1, nil, `[{"id":5,"a":"x5 again"}]`)
				return b
			},
			goWrongBefore: "iceberg-go does not apply the long equality delete id=5 to the file written when id was an int",
			want: []string{
				`{"a":"big","id":3000000000}`,
				`{"a":"x3","id":3}`,
				`{"a":"x4","id":4}`,
				`{"a":"x5 again","id":5}`,
				`{"a":"x6","id":6}`,
			},
		},
		{
			// The spec: an equality delete column later dropped from the
			// table must still be used when applying the deletes.
			name: "eq-delete-on-dropped-column", versions: []int{2, 3},
			build: func(t *testing.T, v int) *evo {
				gone := field(3, "gone", spec.StringType{})
				s0 := schemaOf(fID, fA, gone)
				b := newEvo(t, v, s0, unpartitioned, spec.SortOrder{})
				f1 := b.write(s0, nil, `[{"id":1,"a":"x1","gone":"g"},{"id":2,"a":"x2","gone":"h"},{"id":3,"a":"x3","gone":null}]`)
				b.write(s0, nil, `[{"id":4,"a":"x4","gone":"g"},{"id":5,"a":"x5","gone":"i"}]`)
				b.eqDel(schemaOf(gone), []int{3}, nil, `[{"gone":"g"},{"gone":null}]`)
				b.del(f1, 1)
				b.schema(fID, fA)
				b.write(schemaOf(fID, fA), nil, `[{"id":6,"a":"x6"},{"id":7,"a":"x7"}]`)
				return b
			},
			want: []string{
				`{"a":"x5","id":5}`,
				`{"a":"x6","id":6}`,
				`{"a":"x7","id":7}`,
			},
		},
		{
			// An equality delete of the unpartitioned spec 0, written after
			// the table was partitioned by cat: it applies to every older
			// data file, those of spec 1 included, and a partition-scoped
			// one only to its partition.
			name: "eq-delete-global-across-specs", versions: []int{2, 3},
			build: func(t *testing.T, v int) *evo {
				s := schemaOf(fID, field(2, "cat", spec.StringType{}), field(3, "k", spec.LongType{}))
				b := newEvo(t, v, s, unpartitioned, spec.SortOrder{})
				b.write(s, nil, rowsJSON("b", 1, 3))
				b.write(s, nil, rowsJSON("a", 2, 4))
				b.partitionBy(pf(2, "cat", "identity"))
				f3 := b.write(s, []any{"a"}, rowsJSON("a", 6, 8))
				b.write(s, []any{"a"}, rowsJSON("a", 10))
				b.write(s, []any{"b"}, rowsJSON("b", 5, 7))
				b.write(s, []any{"b"}, rowsJSON("b", 9))
				b.eqDelIn(0, schemaOf(fID), []int{1}, nil, `[{"id":3},{"id":8},{"id":9}]`)
				b.eqDel(schemaOf(field(3, "k", spec.LongType{})), []int{3}, []any{"a"}, `[{"k":20},{"k":100},{"k":70}]`)
				b.del(f3, 0) // 6
				b.write(s, []any{"b"}, rowsJSON("b", 3, 11))
				return b
			},
			// 3 is deleted and written again after; 2 is in spec 0, out of
			// the scoped delete's reach; 10 has a null k.
			want: wantRows(func(id int64) string { return []string{"a", "b"}[id%2] }, 1, 11, 6, 8, 9),
		},
		{
			// a renamed after an equality delete on it.
			name: "eq-delete-on-renamed-column", versions: []int{2, 3},
			build: func(t *testing.T, v int) *evo {
				s0 := schemaOf(fID, fA)
				b := newEvo(t, v, s0, unpartitioned, spec.SortOrder{})
				b.write(s0, nil, `[{"id":1,"a":"x1"},{"id":2,"a":"x2"}]`)
				b.write(s0, nil, `[{"id":3,"a":"x1"},{"id":4,"a":null}]`)
				b.eqDel(schemaOf(fA), []int{2}, nil, `[{"a":"x1"}]`)
				b.schema(fID, field(2, "b", spec.StringType{}))
				b.write(schemaOf(fID, field(2, "b", spec.StringType{})), nil, `[{"id":5,"b":"x1"},{"id":6,"b":null}]`)
				b.eqDel(schemaOf(field(2, "b", spec.StringType{})), []int{2}, nil, `[{"b":null}]`)
				return b
			},
			want: []string{
				`{"b":"x1","id":5}`,
				`{"b":"x2","id":2}`,
			},
		},
	}
}

// defaultsCase adds columns of every flat type with an initial-default,
// in the spec's JSON forms (Appendix D): old rows read each default, which
// the transcoder writes as a physical value of its own. iceberg-go reads
// defaults of boolean, number and string columns only, so the others are
// a case of their own (goless) that it does not read.
func defaultsCase(goless bool) evoCase {
	var defaults []typeDefault
	for _, d := range everyTypeDefaults {
		switch d.typ.(type) {
		case spec.BooleanType, spec.IntType, spec.LongType, spec.FloatType, spec.DoubleType, spec.StringType:
			if !goless {
				defaults = append(defaults, d)
			}
		default:
			if goless {
				defaults = append(defaults, d)
			}
		}
	}
	c := evoCase{
		name: "add-columns-defaults-bool-number-string", versions: []int{3}, transcoded: true,
		build: func() func(t *testing.T, v int) *evo {
			s0 := schemaOf(fID, fA)
			fields := []spec.NestedField{fID, fA}
			for i, d := range defaults {
				fields = append(fields, spec.NestedField{ID: 10 + i, Name: fmt.Sprintf("c%02d", i), Type: d.typ, InitialDefault: json.RawMessage(d.json)})
			}
			return beforeAfter(s0, schemaOf(fields...),
				[]string{`[{"id":1,"a":"x1"},{"id":2,"a":"x2"},{"id":3,"a":null}]`, `[{"id":4,"a":"x4"},{"id":5,"a":"x5"}]`},
				`[{"id":6,"a":"x6"},{"id":7,"a":"x7"},{"id":8,"a":null}]`)
		}(),
		want: func() []string {
			var out []string
			for _, id := range []int{1, 3, 5, 6, 8} {
				m := map[string]any{"id": id, "a": nil}
				if id != 3 && id != 8 {
					m["a"] = fmt.Sprintf("x%d", id)
				}
				for i, d := range defaults {
					var v any // the rows written after the change hold nulls
					if id <= 5 {
						v = json.RawMessage(d.read)
					}
					m[fmt.Sprintf("c%02d", i)] = v
				}
				b, err := json.Marshal(m)
				if err != nil {
					panic(err)
				}
				out = append(out, string(b))
			}
			slices.Sort(out)
			return out
		}(),
	}
	if goless {
		c.name = "add-columns-defaults-temporal-binary-decimal"
		c.noGo = "iceberg-go refuses these defaults (unsupported write-default value type string for numeric iceberg type)"
	}
	return c
}
