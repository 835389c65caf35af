package icebergread

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// ShapeRequest says which benchmark table GenerateShape writes: Appends
// commits of Rows rows each, every one a fast append with its own
// manifest, as a streaming writer leaves a table.
type ShapeRequest struct {
	Target        ScanRequest // where; Table is created
	Shape         string      // flat, wide, nested, strings or numeric
	Appends       int
	Rows          int  // rows per append
	Partitioned   bool // identity-partitioned by part (8 values)
	Deletes       bool // two merge-on-read deletes of about 5% of rows each
	FormatVersion int  // 2 or 3
}

// Shapes are the table shapes GenerateShape knows.
var Shapes = []string{"flat", "wide", "nested", "strings", "numeric"}

// ShapeSchema returns the Iceberg schema of shape. Every shape has a
// required id (unique, ascending) and k (uniform random, what deletes
// select on); partitioned ones add part.
func ShapeSchema(shape string, partitioned bool) (*iceberg.Schema, error) {
	id := 0
	field := func(name string, t iceberg.Type, required bool) iceberg.NestedField {
		id++
		return iceberg.NestedField{ID: id, Name: name, Type: t, Required: required}
	}
	fs := []iceberg.NestedField{field("id", iceberg.PrimitiveTypes.Int64, true), field("k", iceberg.PrimitiveTypes.Int64, true)}
	if partitioned {
		fs = append(fs, field("part", iceberg.PrimitiveTypes.Int32, true))
	}
	p := iceberg.PrimitiveTypes
	switch shape {
	case "flat":
		fs = append(fs, field("name", p.String, false), field("amount", p.Float64, false), field("ts", p.TimestampTz, false))
	case "wide":
		// 59 more columns: 8 of each of 7 types, and 3 others.
		types := []struct {
			prefix string
			t      iceberg.Type
		}{{"dec", iceberg.DecimalTypeOf(18, 4)}, {"d", p.Date}, {"b", p.Bool}, {"u", p.String},
			{"l", p.Int64}, {"f", p.Float64}, {"s", p.String}}
		for i := range 8 {
			for _, t := range types {
				fs = append(fs, field(t.prefix+"_"+strconv.Itoa(i), t.t, false))
			}
		}
		fs = append(fs, field("ts", p.Timestamp, false), field("i", p.Int32, false), field("name", p.String, false))
	case "nested":
		// Nested ids are assigned after the top-level ones by
		// iceberg-go's AssignFreshSchemaIDs when the table is created;
		// here they only need to be distinct.
		inner := &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 100, Name: "x", Type: p.Float64}, {ID: 101, Name: "y", Type: p.String}}}
		st := &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 102, Name: "a", Type: p.Int64, Required: true},
			{ID: 103, Name: "inner", Type: inner},
			{ID: 104, Name: "tags", Type: &iceberg.ListType{ElementID: 105, Element: p.Int32, ElementRequired: true}}}}
		opt := &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 106, Name: "p", Type: p.String}, {ID: 107, Name: "q", Type: p.Int64}}}
		fs = append(fs, field("st", st, true),
			field("names", &iceberg.ListType{ElementID: 108, Element: p.String}, false),
			field("attrs", &iceberg.MapType{KeyID: 109, KeyType: p.String, ValueID: 110, ValueType: p.Int64}, false),
			field("opt", opt, false))
	case "strings":
		fs = append(fs, field("uuid", p.String, false), field("text", p.String, false),
			field("level", p.String, false), field("url", p.String, false))
	case "numeric":
		fs = append(fs, field("hc", p.Int64, false), field("x", p.Float64, false), field("y", p.Float64, false),
			field("at", p.Timestamp, false), field("at2", p.TimestampTz, false))
	default:
		return nil, fmt.Errorf("unknown shape %q (want one of %s)", shape, strings.Join(Shapes, ", "))
	}
	return iceberg.NewSchema(0, fs...), nil
}

// GenerateShape creates req.Target.Table with iceberg-go and fills it.
func GenerateShape(ctx context.Context, req ShapeRequest) error {
	if req.FormatVersion != 2 && req.FormatVersion != 3 {
		return fmt.Errorf("format version %d: want 2 or 3", req.FormatVersion)
	}
	if req.Appends <= 0 || req.Rows <= 0 {
		return errors.New("--appends and --rows must be positive")
	}
	sc, err := ShapeSchema(req.Shape, req.Partitioned)
	if err != nil {
		return err
	}
	ns, name, err := splitTable(req.Target.Table)
	if err != nil {
		return err
	}
	cat, closeCat, err := openCatalog(ctx, req.Target, true)
	if err != nil {
		return err
	}
	defer closeCat()
	if err := cat.CreateNamespace(ctx, catalog.ToIdentifier(ns...), nil); err != nil &&
		!errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		return fmt.Errorf("create namespace %s: %w", strings.Join(ns, "."), err)
	}
	props := iceberg.Properties{"format-version": strconv.Itoa(req.FormatVersion), "write.delete.mode": "merge-on-read"}
	opts := []catalog.CreateTableOpt{catalog.WithProperties(props)}
	if req.Partitioned {
		ps := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "part",
			Transform: iceberg.IdentityTransform{}})
		opts = append(opts, catalog.WithPartitionSpec(&ps))
	}
	tbl, err := cat.CreateTable(ctx, catalog.ToIdentifier(append(ns, name)...), sc, opts...)
	if err != nil {
		return fmt.Errorf("create table %s: %w", req.Target.Table, err)
	}
	as, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	if err != nil {
		return fmt.Errorf("arrow schema of %s: %w", req.Target.Table, err)
	}
	for a := range req.Appends {
		lo := int64(a) * int64(req.Rows)
		rec := shapeRecord(as, uint64(a), lo, req.Rows)
		at := array.NewTableFromRecords(as, []arrow.RecordBatch{rec})
		tbl, err = tbl.AppendTable(ctx, at, int64(req.Rows), nil)
		at.Release()
		rec.Release()
		if err != nil {
			return fmt.Errorf("append %d: %w", a, err)
		}
	}
	if req.Deletes {
		// k is uniform over [0, 1e9): each delete hits about 5% of the
		// rows of every file, so it writes position deletes, not drops.
		for _, r := range [][2]int64{{0, 5e7}, {5e8, 5.5e8}} {
			f := iceberg.NewAnd(iceberg.GreaterThanEqual(iceberg.Reference("k"), r[0]), iceberg.LessThan(iceberg.Reference("k"), r[1]))
			if tbl, err = tbl.Delete(ctx, f, nil); err != nil {
				return fmt.Errorf("delete k in [%d, %d): %w", r[0], r[1], err)
			}
		}
	}
	return nil
}

// shapeRecord builds rows lo..lo+n-1 of schema as, deterministic in seed.
func shapeRecord(as *arrow.Schema, seed uint64, lo int64, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
	for i := range n {
		g.row = lo + int64(i)
		for j, f := range as.Fields() {
			g.fill(b.Field(j), f, 0)
		}
	}
	return b.NewRecordBatch()
}

type gen struct {
	r   *rand.Rand
	row int64
}

var levels = []string{"DEBUG", "INFO", "WARN", "ERROR", "TRACE", "NOTICE", "FATAL", "AUDIT"}

const words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua "

func (g *gen) uuid() string {
	a, b := g.r.Uint64(), g.r.Uint64()
	return fmt.Sprintf("%08x-%04x-4%03x-a%03x-%012x", a>>32, a>>16&0xffff, a&0xfff, b>>52, b&0xffffffffffff)
}

// fill appends one value of field f to bld; names decide what kind of
// value (unique, random, low-cardinality), and optional fields are null
// now and then.
func (g *gen) fill(bld array.Builder, f arrow.Field, depth int) {
	if f.Nullable && g.r.IntN(20) == 0 {
		bld.AppendNull()
		return
	}
	name := f.Name
	switch b := bld.(type) {
	case *array.Int64Builder:
		switch {
		case name == "id":
			b.Append(g.row)
		case name == "k":
			b.Append(g.r.Int64N(1e9))
		case strings.HasPrefix(name, "l_"), name == "hc", name == "q", name == "a", name == "value":
			b.Append(g.r.Int64())
		default:
			b.Append(g.r.Int64N(1000))
		}
	case *array.Int32Builder:
		if name == "part" {
			b.Append(int32(g.row % 8))
		} else {
			b.Append(g.r.Int32N(100000))
		}
	case *array.Float64Builder:
		if name == "amount" {
			b.Append(float64(g.row)*1.25 - 3)
		} else {
			b.Append(g.r.NormFloat64() * 1e6)
		}
	case *array.BooleanBuilder:
		b.Append(g.r.IntN(2) == 0)
	case *array.Date32Builder:
		b.Append(arrow.Date32(18000 + g.r.IntN(3000)))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro() + g.r.Int64N(365*86400e6)))
	case *array.Decimal128Builder:
		b.Append(decimal128.FromI64(g.r.Int64N(1e12) - 5e11))
	case *array.StringBuilder:
		b.Append(g.str(name))
	case *array.StructBuilder:
		b.Append(true)
		st := f.Type.(*arrow.StructType)
		for i, cf := range st.Fields() {
			g.fill(b.FieldBuilder(i), cf, depth+1)
		}
	case *array.ListBuilder:
		b.Append(true)
		ef := f.Type.(*arrow.ListType).ElemField()
		for range g.r.IntN(5) {
			g.fill(b.ValueBuilder(), ef, depth+1)
		}
	case *array.MapBuilder:
		b.Append(true)
		mt := f.Type.(*arrow.MapType)
		for i := range g.r.IntN(4) {
			b.KeyBuilder().(*array.StringBuilder).Append("key" + strconv.Itoa(i))
			g.fill(b.ItemBuilder(), mt.ItemField(), depth+1)
		}
	default:
		panic(fmt.Sprintf("shape generator: no values for %s (%s)", name, f.Type))
	}
}

func (g *gen) str(name string) string {
	switch {
	case name == "uuid", strings.HasPrefix(name, "u_"):
		return g.uuid()
	case name == "text":
		n := 20 + g.r.IntN(181)
		off := g.r.IntN(len(words))
		var sb strings.Builder
		for sb.Len() < n {
			sb.WriteString(words[off:])
			off = 0
		}
		return sb.String()[:n]
	case name == "level", strings.HasPrefix(name, "s_"):
		return levels[g.r.IntN(len(levels))]
	case name == "url":
		return fmt.Sprintf("https://example.com/%s/items/%d?ref=%x", levels[g.r.IntN(8)], g.r.IntN(1e6), g.r.Uint32())
	case name == "name":
		return "name-" + strconv.FormatInt(g.row, 10)
	}
	return "v" + strconv.Itoa(g.r.IntN(10000))
}
