package orphan

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/icectl/icectl/internal/shared/extsort"
)

// TestLookupAnyOrder: the Deleter's Keep answers correctly whatever order
// it is asked in (sorted order is only the fast path).
func TestLookupAnyOrder(t *testing.T) {
	rs := &refSet{s: extsort.New(t.TempDir(), 256)}
	rs.s.Unique = true
	defer rs.Close()
	want := map[string]bool{}
	var buf []byte
	for i := range 300 {
		if i%3 == 0 {
			continue
		}
		p := fmt.Sprintf("s3://b/t/data/%04d.parquet", i)
		want[p] = true
		buf = refRecord(buf, p)
		rs.s.Add(buf)
		// The same file under s3a, and a double-slash form.
		buf = refRecord(buf, fmt.Sprintf("s3a://b/t//data/%04d.parquet", i))
		rs.s.Add(buf)
	}
	buf = refRecord(buf, "s3://other/t/data/0000.parquet")
	rs.s.Add(buf)
	l := newLookup(rs, NewMatcher(nil, nil))
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		i := r.IntN(300)
		p := fmt.Sprintf("s3://b/t/data/%04d.parquet", i)
		if got := l.referenced(p); got != want[p] {
			t.Fatalf("referenced(%s) = %v, want %v", p, got, want[p])
		}
	}
	if l.referenced("s3://b/t/data/9999.parquet") || l.referenced("s3://b/t/data/0000.parquet") {
		t.Error("unreferenced paths reported referenced")
	}
	if !l.referenced("s3a://b/t/data/0001.parquet") || !l.referenced("s3://other/t/data/0000.parquet") {
		t.Error("referenced paths reported unreferenced")
	}
}
