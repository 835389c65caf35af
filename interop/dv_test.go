package interop

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/iceberg-go/table/dv"

	"github.com/icectl/icectl/iceberg/puffin"
	"github.com/icectl/icectl/interop/icebergread"
)

// dvCases are position sets chosen to cover every container kind and the
// 64-bit key space: sparse random (array containers), dense random (bitmap
// containers), long runs (run containers), keys above 2^32, and absent keys
// below the highest.
func dvCases() map[string]*roaring64.Bitmap {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := map[string]*roaring64.Bitmap{}

	single := roaring64.New()
	single.Add(0)
	cases["single-zero"] = single

	sparse := roaring64.New()
	for range 500 {
		sparse.Add(rng.Uint64N(1 << 20))
	}
	cases["sparse-random"] = sparse

	dense := roaring64.New()
	for range 20000 {
		dense.Add(rng.Uint64N(1 << 16))
	}
	cases["dense-random"] = dense

	runs := roaring64.New()
	runs.AddRange(10, 70000)
	runs.AddRange(1<<17, 1<<17+5)
	runs.AddRange(1<<20, 1<<21)
	cases["run-heavy"] = runs

	high := roaring64.New()
	high.Add(1<<32 - 1)
	high.Add(1 << 32)
	high.Add(1<<32 + 1)
	high.AddRange(5<<32, 5<<32+1000)
	for range 300 {
		high.Add(rng.Uint64N(1 << 40))
	}
	cases["above-2^32"] = high

	sparseKeys := roaring64.New()
	sparseKeys.Add(3)
	sparseKeys.Add(7<<32 | 9) // keys 1..6 absent: Java's layout still lists them, empty
	cases["sparse-keys"] = sparseKeys
	return cases
}

// TestDVsReadByIcebergGo writes every case into one Puffin file with
// icectl's WriteDVs and reads each blob back with iceberg-go's dv.ReadDV,
// which also validates the blob metadata against the manifest fields.
func TestDVsReadByIcebergGo(t *testing.T) {
	cases := dvCases()
	var dvs []puffin.DV
	want := map[string][]uint64{}
	for name, bm := range cases {
		ref := "s3://bucket/tbl/data/" + name + ".parquet"
		dvs = append(dvs, puffin.DV{ReferencedDataFile: ref, Positions: bm})
		want[ref] = bm.ToArray()
	}
	var buf bytes.Buffer
	blobs, size, err := puffin.WriteDVs(&buf, dvs, map[string]string{"created-by": "icectl interop test"})
	if err != nil {
		t.Fatal(err)
	}
	if size != int64(buf.Len()) {
		t.Fatalf("WriteDVs reported size %d, wrote %d bytes", size, buf.Len())
	}
	path := filepath.Join(t.TempDir(), "dvs.puffin")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	footer, err := icebergread.ReadPuffin(buf.Bytes())
	if err != nil {
		t.Fatalf("iceberg-go cannot read icectl's Puffin file: %v", err)
	}
	if got := footer.Properties["created-by"]; got != "icectl interop test" {
		t.Errorf("file property created-by = %q, want %q", got, "icectl interop test")
	}
	if len(footer.Blobs) != len(blobs) {
		t.Fatalf("iceberg-go sees %d blobs, WriteDVs reported %d", len(footer.Blobs), len(blobs))
	}
	for i, b := range blobs {
		fb := footer.Blobs[i]
		if fb.Type != "deletion-vector-v1" || !slices.Equal(fb.Fields, []int32{2147483645}) ||
			fb.SnapshotID != -1 || fb.SequenceNumber != -1 || fb.CompressionCodec != nil {
			t.Errorf("blob %d metadata: %+v, want type deletion-vector-v1, fields [2147483645], snapshot and sequence -1, no codec", i, fb)
		}
		if fb.Offset != b.Offset || fb.Length != b.Length {
			t.Errorf("blob %d: footer offset/length %d/%d, WriteDVs reported %d/%d", i, fb.Offset, fb.Length, b.Offset, b.Length)
		}
		if fb.Properties["referenced-data-file"] != b.ReferencedDataFile ||
			fb.Properties["cardinality"] != strconv.FormatInt(b.Cardinality, 10) {
			t.Errorf("blob %d properties %v, want referenced-data-file %s, cardinality %d", i, fb.Properties, b.ReferencedDataFile, b.Cardinality)
		}

		got, err := icebergread.ReadDV(icebergread.DVRequest{
			Path: path, Offset: b.Offset, Length: b.Length,
			ReferencedDataFile: b.ReferencedDataFile, RecordCount: b.Cardinality,
		})
		if err != nil {
			t.Errorf("iceberg-go cannot read the DV for %s: %v", b.ReferencedDataFile, err)
			continue
		}
		w := want[b.ReferencedDataFile]
		if got.Cardinality != int64(len(w)) || b.Cardinality != int64(len(w)) {
			t.Errorf("%s: iceberg-go cardinality %d, WriteDVs %d, want %d", b.ReferencedDataFile, got.Cardinality, b.Cardinality, len(w))
		}
		if !slices.Equal(got.Positions, w) {
			t.Errorf("%s: iceberg-go positions differ from the written ones (%d vs %d positions; first difference %s)",
				b.ReferencedDataFile, len(got.Positions), len(w), firstDiff(got.Positions, w))
		}
	}
}

// TestDVBytesMatchIcebergGo checks that icectl and iceberg-go serialize the
// same positions to the same bytes (run-optimized containers, as Java), and
// that each decodes the other's output.
func TestDVBytesMatchIcebergGo(t *testing.T) {
	cases := dvCases()
	cases["empty"] = roaring64.New()
	for name, bm := range cases {
		t.Run(name, func(t *testing.T) {
			ours, err := puffin.EncodeDV(bm)
			if err != nil {
				t.Fatal(err)
			}
			theirBM := dv.NewRoaringPositionBitmap()
			for _, p := range bm.ToArray() {
				theirBM.Set(p)
			}
			theirs, err := dv.SerializeDV(theirBM)
			if err != nil {
				t.Fatal(err)
			}
			// Java (and icectl) write an empty bitmap for every absent key
			// below the highest; iceberg-go writes only the keys present.
			// Both are valid portable encodings, so bytes can only match
			// when no key is absent.
			if keysContiguous(bm) && !bytes.Equal(ours, theirs) {
				t.Errorf("icectl writes %d bytes, iceberg-go %d; first differing byte at %d", len(ours), len(theirs), firstByteDiff(ours, theirs))
			}

			decoded, err := dv.DeserializeDV(ours, int64(bm.GetCardinality()))
			if err != nil {
				t.Fatalf("iceberg-go cannot decode icectl's DV: %v", err)
			}
			var got []uint64
			for p := range decoded.Positions() {
				got = append(got, p)
			}
			if !slices.Equal(got, bm.ToArray()) {
				t.Errorf("iceberg-go decodes icectl's DV to %d positions, want %d (first difference %s)", len(got), bm.GetCardinality(), firstDiff(got, bm.ToArray()))
			}

			back, err := puffin.DecodeDVWithCardinality(theirs, int64(bm.GetCardinality()))
			if err != nil {
				t.Fatalf("icectl cannot decode iceberg-go's DV: %v", err)
			}
			if !back.Equals(bm) {
				t.Errorf("icectl decodes iceberg-go's DV to %d positions, want %d", back.GetCardinality(), bm.GetCardinality())
			}
		})
	}
}

// TestEmptyDVsAreNotWritten: a DV deleting nothing has no manifest entry,
// so WriteDVs refuses one, and a Puffin file with no DVs is still a valid
// file for iceberg-go.
func TestEmptyDVsAreNotWritten(t *testing.T) {
	var buf bytes.Buffer
	_, _, err := puffin.WriteDVs(&buf, []puffin.DV{{ReferencedDataFile: "a.parquet", Positions: roaring64.New()}}, nil)
	if err == nil {
		t.Fatal("WriteDVs accepted an empty deletion vector")
	}
	buf.Reset()
	blobs, _, err := puffin.WriteDVs(&buf, nil, map[string]string{"created-by": "icectl"})
	if err != nil {
		t.Fatal(err)
	}
	footer, err := icebergread.ReadPuffin(buf.Bytes())
	if err != nil {
		t.Fatalf("iceberg-go cannot read a Puffin file without blobs: %v", err)
	}
	if len(blobs) != 0 || len(footer.Blobs) != 0 {
		t.Errorf("blobs: WriteDVs %d, iceberg-go %d; want none", len(blobs), len(footer.Blobs))
	}
}

func firstDiff(a, b []uint64) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("index %d: %d vs %d", i, a[i], b[i])
		}
	}
	return fmt.Sprintf("index %d (one is a prefix of the other)", min(len(a), len(b)))
}

func firstByteDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// keysContiguous reports whether every 32-bit key from 0 to the highest
// holds a position.
func keysContiguous(bm *roaring64.Bitmap) bool {
	if bm.IsEmpty() {
		return true
	}
	keys := map[uint64]bool{}
	it := bm.Iterator()
	for it.HasNext() {
		keys[it.Next()>>32] = true
	}
	return uint64(len(keys)) == bm.Maximum()>>32+1
}
