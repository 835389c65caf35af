package compact

import (
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// TestRepartitionTuples computes rows' partition tuples under a spec with
// every transform, on values worked out here: strings truncated by code
// point, time transforms before the epoch (floor, not truncation toward
// zero), decimals truncated by their unscaled value, a struct's field,
// nulls (and a null struct) giving null, and the spec's bucket examples.
func TestRepartitionTuples(t *testing.T) {
	s := spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "s", Type: spec.StringType{}},
		{ID: 3, Name: "d", Type: spec.DateType{}},
		{ID: 4, Name: "ts", Type: spec.TimestampType{}},
		{ID: 5, Name: "dec", Type: spec.DecimalType{Precision: 9, Scale: 2}},
		{ID: 6, Name: "st", Type: &spec.StructType{Fields: []spec.NestedField{{ID: 7, Name: "n", Type: spec.IntType{}}}}},
	}}
	pf := func(src int, tr string) spec.PartitionField {
		return spec.PartitionField{SourceID: src, Transform: spec.ParseTransform(tr)}
	}
	ps := &spec.PartitionSpec{ID: 3, Fields: []spec.PartitionField{
		pf(2, "truncate[3]"), pf(3, "month"), pf(4, "year"), pf(4, "hour"), pf(4, "day"),
		pf(5, "truncate[10]"), pf(7, "identity"), pf(1, "void"), pf(1, "bucket[4]"), pf(2, "bucket[16]"),
	}}
	as, err := datafile.ArrowSchema(&s)
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, as, strings.NewReader(`[
		{"id":34,"s":"icebergé","d":"2024-03-15","ts":"2024-03-15T10:30:00","dec":"12.34","st":{"n":7}},
		{"id":-1,"s":null,"d":null,"ts":null,"dec":null,"st":null},
		{"id":34,"s":"éab","d":"1969-12-31","ts":"1969-12-31T23:00:00","dec":"-0.05","st":{"n":null}},
		{"id":34,"s":"icebergx","d":"2024-03-01","ts":"2024-03-15T10:59:59","dec":"12.30","st":{"n":7}}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	f, err := newFanout(nil, &s, ps, rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	keys, byKey, err := f.tuples(rec)
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2024, 3, 15, 10, 30, 0, 0, time.UTC).Unix()
	dec := func(u int64) spec.Decimal { return spec.Decimal{Unscaled: big.NewInt(u), Scale: 2} }
	// bucket[4](34) and bucket[16]("iceberg") from the spec's examples
	// (hashes 2017239379 and 1210000089); "icebergé"[:3] is "ice".
	want := [][]any{
		{"ice", int32(54*12 + 2), int32(54), int32(ts / 3600), int32(ts / 86400), dec(1230), int32(7), nil, int32(2017239379 % 4), bucketString("icebergé", 16)},
		{nil, nil, nil, nil, nil, nil, nil, nil, bucketLong(-1, 4), nil},
		{"éab", int32(-1), int32(-1), int32(-1), int32(-1), dec(-10), nil, nil, int32(2017239379 % 4), bucketString("éab", 16)},
		{"ice", int32(54*12 + 2), int32(54), int32(ts / 3600), int32(ts / 86400), dec(1230), int32(7), nil, int32(2017239379 % 4), bucketString("icebergx", 16)},
	}
	if bucketString("iceberg", math.MaxInt32) != 1210000089 {
		t.Fatal("bucketString does not give the spec's hash of \"iceberg\"")
	}
	for i, w := range want {
		if k := table.PartitionKey(3, w); keys[i] != k {
			t.Errorf("row %d: partition %v, want %v", i, byKey[keys[i]], w)
		}
	}
	if len(byKey) != 4 && bucketString("icebergé", 16) != bucketString("icebergx", 16) {
		t.Errorf("%d partitions, want 4", len(byKey))
	}
}

// bucketString is bucket[n] of a string: Murmur3 x86 32-bit (seed 0) of
// its UTF-8 bytes, sign bit cleared, modulo n; written apart from the
// code under test.
func bucketString(v string, n int) int32 {
	data := []byte(v)
	const c1, c2 = 0xcc9e2d51, 0x1b873593
	var h uint32
	rotl := func(x uint32, r uint) uint32 { return x<<r | x>>(32-r) }
	i := 0
	for ; i+4 <= len(data); i += 4 {
		k := uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
		k *= c1
		k = rotl(k, 15)
		k *= c2
		h ^= k
		h = rotl(h, 13)
		h = h*5 + 0xe6546b64
	}
	var k uint32
	switch len(data) - i {
	case 3:
		k ^= uint32(data[i+2]) << 16
		fallthrough
	case 2:
		k ^= uint32(data[i+1]) << 8
		fallthrough
	case 1:
		k ^= uint32(data[i])
		k *= c1
		k = rotl(k, 15)
		k *= c2
		h ^= k
	}
	h ^= uint32(len(data))
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return int32(int64(h&0x7fffffff) % int64(n))
}
