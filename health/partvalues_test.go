package health

import (
	"math/big"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/plan/where"
)

// TestRepairWhere: the repair's --where spells each damaged partition by
// the identity columns of its own spec, as literals --where reads back
// (quotes doubled, dates, decimals, NULL, nested columns, names that need
// quoting); a partition it cannot spell gives "" (the whole table is
// rewritten).
func TestRepairWhere(t *testing.T) {
	id := func(source, field int, name string) spec.PartitionField {
		return spec.PartitionField{SourceID: source, FieldID: field, Name: name, Transform: spec.Transform{Kind: spec.TransformIdentity}}
	}
	schema := spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "a", Type: spec.IntType{}},
		{ID: 2, Name: "s", Type: spec.StringType{}},
		{ID: 3, Name: "d", Type: spec.DateType{}},
		{ID: 4, Name: "m", Type: spec.DecimalType{Precision: 9, Scale: 2}},
		{ID: 5, Name: "st", Type: &spec.StructType{Fields: []spec.NestedField{{ID: 6, Name: "q", Type: spec.LongType{}}}}},
		{ID: 7, Name: "bin", Type: spec.BinaryType{}},
		{ID: 8, Name: "my col", Type: spec.IntType{}},
		{ID: 9, Name: "ts", Type: spec.TimestampType{}},
	}}
	md := func(specs ...spec.PartitionSpec) *spec.TableMetadata {
		return &spec.TableMetadata{FormatVersion: 2, Schemas: []spec.Schema{schema}, PartitionSpecs: specs}
	}
	all := spec.PartitionSpec{ID: 0, Fields: []spec.PartitionField{id(1, 1000, "a"), id(2, 1001, "s"), id(3, 1002, "d"), id(4, 1003, "m"), id(6, 1004, "st_q"), id(8, 1005, "my_col")}}
	all1 := all
	all1.ID = 1
	dec := spec.Decimal{Unscaled: big.NewInt(-250), Scale: 2}
	part := func(specID int, tuple ...any) DamagedPartition { return DamagedPartition{SpecID: specID, tuple: tuple} }
	cases := []struct {
		name  string
		md    *spec.TableMetadata
		parts []DamagedPartition
		want  string
	}{
		{"one partition", md(all), []DamagedPartition{part(0, int32(2), "it's", int32(19001), dec, int64(6), int32(3))},
			"a = 2 AND s = 'it''s' AND d = DATE '2022-01-09' AND m = -2.50 AND st.q = 6 AND `my col` = 3"},
		{"two partitions, a null", md(all), []DamagedPartition{part(0, int32(2), "x", int32(0), dec, int64(6), int32(3)), part(0, nil, "y", int32(0), dec, int64(6), int32(3))},
			"(a = 2 AND s = 'x' AND d = DATE '1970-01-01' AND m = -2.50 AND st.q = 6 AND `my col` = 3) OR (a IS NULL AND s = 'y' AND d = DATE '1970-01-01' AND m = -2.50 AND st.q = 6 AND `my col` = 3)"},
		{"each partition by its own spec", md(spec.PartitionSpec{ID: 0, Fields: []spec.PartitionField{id(2, 1001, "s")}}, all1),
			[]DamagedPartition{part(1, int32(2), "eu", int32(1), dec, int64(6), int32(3)), part(0, "us")},
			"(a = 2 AND s = 'eu' AND d = DATE '1970-01-02' AND m = -2.50 AND st.q = 6 AND `my col` = 3) OR s = 'us'"},
		{"no identity column shared with the other spec", md(spec.PartitionSpec{ID: 0}, all1), []DamagedPartition{part(1, int32(2), "eu", int32(1), dec, int64(6), int32(3))},
			"a = 2 AND s = 'eu' AND d = DATE '1970-01-02' AND m = -2.50 AND st.q = 6 AND `my col` = 3"},
		{"no literal for binary", md(spec.PartitionSpec{ID: 0, Fields: []spec.PartitionField{id(7, 1000, "bin")}}), []DamagedPartition{part(0, []byte{1})}, ""},
		{"no literal for timestamps", md(spec.PartitionSpec{ID: 0, Fields: []spec.PartitionField{id(9, 1000, "ts"), id(1, 1001, "a")}}),
			[]DamagedPartition{part(0, int64(5), int32(1))}, "a = 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := RepairWhere(c.md, c.parts); got != c.want {
				t.Errorf("RepairWhere = %q, want %q", got, c.want)
			}
		})
	}
}

// TestRepairWhereSelectsExactly: on a table whose older spec partitions
// by s only, the repair's --where keeps a damaged file of the newer spec
// (its metrics say a is all null) by its partition, and leaves out an
// undamaged file of that spec in another partition (a = 3), as a
// compaction's file selection (where.PartitionFilter.MatchFile) judges
// them: it selects the damaged partitions, not every partition sharing
// s's value.
func TestRepairWhereSelectsExactly(t *testing.T) {
	schema := spec.Schema{Fields: []spec.NestedField{{ID: 1, Name: "a", Type: spec.IntType{}}, {ID: 2, Name: "s", Type: spec.StringType{}}}}
	ident := func(source, field int, name string) spec.PartitionField {
		return spec.PartitionField{SourceID: source, FieldID: field, Name: name, Transform: spec.Transform{Kind: spec.TransformIdentity}}
	}
	old := spec.PartitionSpec{ID: 0, Fields: []spec.PartitionField{ident(2, 1000, "s")}}
	cur := spec.PartitionSpec{ID: 1, Fields: []spec.PartitionField{ident(1, 1001, "a"), ident(2, 1000, "s")}}
	md := &spec.TableMetadata{FormatVersion: 2, Schemas: []spec.Schema{schema}, PartitionSpecs: []spec.PartitionSpec{old, cur}}
	expr := RepairWhere(md, []DamagedPartition{{SpecID: 1, tuple: []any{int32(2), "eu"}}})
	if expr != "a = 2 AND s = 'eu'" {
		t.Fatalf("RepairWhere = %q", expr)
	}
	f, err := where.Compile(expr, &schema)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := f.ForSpec(&cur, &schema)
	if err != nil {
		t.Fatal(err)
	}
	file := func(a int32, nullA bool) *manifest.DataFile {
		df := &manifest.DataFile{SpecID: 1, Partition: []any{a, "eu"}, RecordCount: 10,
			ValueCounts: map[int]int64{1: 10, 2: 10}, NullValueCounts: map[int]int64{1: 0, 2: 0}}
		if nullA {
			df.NullValueCounts[1] = 10
		}
		return df
	}
	for _, c := range []struct {
		name string
		df   *manifest.DataFile
		want bool
	}{{"damaged file, a all null", file(2, true), true}, {"undamaged partition a = 3", file(3, false), false}} {
		if got, err := pf.MatchFile(c.df); err != nil || got != c.want {
			t.Errorf("%s: MatchFile = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}
