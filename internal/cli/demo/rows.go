package demo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/spec"
)

// Field ids of shop.orders.
const (
	fieldOrderID  = 1
	fieldCustomer = 2
	fieldRegion   = 3
	fieldAmount   = 4
	fieldQuantity = 5
	fieldOrderTS  = 6
)

func ordersSchema() spec.Schema {
	return spec.Schema{ID: 0, IdentifierFieldIDs: []int{fieldOrderID}, Fields: []spec.NestedField{
		{ID: fieldOrderID, Name: "order_id", Type: spec.LongType{}, Required: true},
		{ID: fieldCustomer, Name: "customer", Type: spec.StringType{}, Required: true},
		{ID: fieldRegion, Name: "region", Type: spec.StringType{}, Required: true},
		{ID: fieldAmount, Name: "amount", Type: spec.DoubleType{}, Required: true},
		{ID: fieldQuantity, Name: "quantity", Type: spec.IntType{}, Required: true},
		{ID: fieldOrderTS, Name: "order_ts", Type: spec.TimestampTzType{}, Required: true},
	}}
}

// ordersSpec partitions by region, then by day of order_ts.
func ordersSpec() spec.PartitionSpec {
	return spec.PartitionSpec{ID: 0, Fields: []spec.PartitionField{
		{SourceID: fieldRegion, FieldID: 1000, Name: "region", Transform: spec.Transform{Kind: spec.TransformIdentity}},
		{SourceID: fieldOrderTS, FieldID: 1001, Name: "order_ts_day", Transform: spec.Transform{Kind: spec.TransformDay}},
	}}
}

var regions = []string{"eu", "us", "apac"}

// partition is one (region, day) of the table.
type partition struct {
	region string
	day    int32 // days since 1970-01-01
}

func (p partition) values() []any { return []any{p.region, p.day} }

func (p partition) dir() string {
	d := time.Unix(int64(p.day)*86400, 0).UTC().Format("2006-01-02")
	return fmt.Sprintf("region=%s/order_ts_day=%s", p.region, d)
}

type order struct {
	id       int64
	customer string
	amount   float64
	quantity int32
	tsMicros int64
}

// genOrders makes n orders of one partition with ids from next on.
func genOrders(rng *rand.Rand, p partition, next int64, n int) []order {
	out := make([]order, n)
	dayStart := int64(p.day) * 86400 * 1_000_000
	for i := range out {
		out[i] = order{
			id:       next + int64(i),
			customer: fmt.Sprintf("cust-%04d", rng.IntN(500)),
			amount:   math.Round(rng.Float64()*50000) / 100,
			quantity: int32(1 + rng.IntN(9)),
			tsMicros: dayStart + rng.Int64N(86400*1_000_000),
		}
	}
	return out
}

func ordersRecord(s *spec.Schema, p partition, orders []order) (arrow.RecordBatch, error) {
	as, err := datafile.ArrowSchema(s)
	if err != nil {
		return nil, err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	for _, o := range orders {
		b.Field(0).(*array.Int64Builder).Append(o.id)
		b.Field(1).(*array.StringBuilder).Append(o.customer)
		b.Field(2).(*array.StringBuilder).Append(p.region)
		b.Field(3).(*array.Float64Builder).Append(o.amount)
		b.Field(4).(*array.Int32Builder).Append(o.quantity)
		b.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(o.tsMicros))
	}
	return b.NewRecordBatch(), nil
}

// orderIDRecord is the rows of an equality-delete file on order_id.
func orderIDRecord(s *spec.Schema, ids []int64) (arrow.RecordBatch, error) {
	as, err := datafile.ArrowSchema(s)
	if err != nil {
		return nil, err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
	return b.NewRecordBatch(), nil
}
