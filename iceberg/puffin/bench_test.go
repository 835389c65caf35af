package puffin

import (
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

// benchDVs are realistic DVs: 10% of a 1,000,000-row file deleted at
// random, and a run-heavy one (deletes in contiguous ranges, e.g. a
// partition-wide delete).
func benchDVs() map[string]*roaring64.Bitmap {
	rng := rand.New(rand.NewPCG(7, 8))
	random := roaring64.New()
	for random.GetCardinality() < 100_000 {
		random.Add(rng.Uint64N(1_000_000))
	}
	runs := roaring64.New()
	for range 200 {
		start := rng.Uint64N(1_000_000)
		runs.AddRange(start, min(start+1+rng.Uint64N(2000), 1_000_000))
	}
	return map[string]*roaring64.Bitmap{"random10pct": random, "runHeavy": runs}
}

func BenchmarkEncodeDV(b *testing.B) {
	for name, bm := range benchDVs() {
		b.Run(name, func(b *testing.B) {
			blob, err := EncodeDV(bm)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(blob)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := EncodeDV(bm); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(bm.GetCardinality())*float64(b.N)/b.Elapsed().Seconds(), "positions/s")
		})
	}
}

func BenchmarkDecodeDV(b *testing.B) {
	for name, bm := range benchDVs() {
		b.Run(name, func(b *testing.B) {
			blob, err := EncodeDV(bm)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(blob)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := DecodeDVWithCardinality(blob, int64(bm.GetCardinality())); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(bm.GetCardinality())*float64(b.N)/b.Elapsed().Seconds(), "positions/s")
		})
	}
}
