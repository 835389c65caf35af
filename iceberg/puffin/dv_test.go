package puffin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

func randomPositions(rng *rand.Rand, n int, span uint64) *roaring64.Bitmap {
	bm := roaring64.New()
	for range n {
		bm.Add(rng.Uint64N(span))
	}
	return bm
}

func runHeavyPositions(rng *rand.Rand, runs int, span uint64) *roaring64.Bitmap {
	bm := roaring64.New()
	for range runs {
		start := rng.Uint64N(span)
		bm.AddRange(start, start+1+rng.Uint64N(5000))
	}
	return bm
}

func TestDVRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := map[string]*roaring64.Bitmap{
		"empty":          roaring64.New(),
		"single":         roaring64.BitmapOf(42),
		"dense 1M":       randomPositions(rng, 100_000, 1_000_000),
		"sparse":         randomPositions(rng, 1000, 1<<40),
		"above 2^32":     randomPositions(rng, 5000, 1<<34),
		"run heavy":      runHeavyPositions(rng, 500, 1<<33),
		"full container": func() *roaring64.Bitmap { b := roaring64.New(); b.AddRange(0, 1<<16); return b }(),
		"high key":       roaring64.BitmapOf(0, 1000<<32|0xFFFFFFFF),
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			before := want.Clone()
			blob, err := EncodeDV(want)
			if err != nil {
				t.Fatal(err)
			}
			if !want.Equals(before) || want.HasRunCompression() != before.HasRunCompression() {
				t.Error("EncodeDV modified its input")
			}
			got, err := DecodeDVWithCardinality(blob, int64(want.GetCardinality()))
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equals(want) {
				t.Errorf("round trip lost positions: got %d, want %d", got.GetCardinality(), want.GetCardinality())
			}
			again, err := EncodeDV(got)
			if err != nil || !bytes.Equal(again, blob) {
				t.Errorf("re-encoding is not stable (err %v)", err)
			}
		})
	}
}

func TestDVRunOptimized(t *testing.T) {
	bm := roaring64.New()
	bm.AddRange(1000, 200_000)
	blob, err := EncodeDV(bm)
	if err != nil {
		t.Fatal(err)
	}
	// 8 (len+magic) + 8 (count) + 4 (key) + roaring with 4 run containers + CRC;
	// without run compression it would be tens of kilobytes.
	if len(blob) > 100 {
		t.Errorf("run-heavy DV is %d bytes; expected run containers", len(blob))
	}
}

// Java's RoaringPositionBitmap writes every bucket from key 0 to the largest,
// including empty ones.
func TestDVEncodeWritesGapBuckets(t *testing.T) {
	blob, err := EncodeDV(roaring64.BitmapOf(5<<32 | 7))
	if err != nil {
		t.Fatal(err)
	}
	vector := blob[8 : len(blob)-4]
	if n := binary.LittleEndian.Uint64(vector); n != 6 {
		t.Fatalf("bucket count %d, want 6", n)
	}
	for key := uint32(0); key < 5; key++ {
		at := 8 + 12*int(key)
		if k := binary.LittleEndian.Uint32(vector[at:]); k != key {
			t.Errorf("bucket %d has key %d", key, k)
		}
		if c, n := binary.LittleEndian.Uint32(vector[at+4:]), binary.LittleEndian.Uint32(vector[at+8:]); c != cookieNoRuns || n != 0 {
			t.Errorf("bucket %d is not an empty bitmap: cookie %d containers %d", key, c, n)
		}
	}
	bm, err := DecodeDV(blob)
	if err != nil || bm.GetCardinality() != 1 || !bm.Contains(5<<32|7) {
		t.Errorf("decode = %v, %v", bm, err)
	}
}

func TestDVEncodeRejects(t *testing.T) {
	if _, err := EncodeDV(roaring64.BitmapOf(maxPosition + 1)); !errors.Is(err, ErrDVKeyTooLarge) {
		t.Errorf("position above Java's maximum: %v", err)
	}
	if _, err := EncodeDV(roaring64.BitmapOf(1 << 63)); !errors.Is(err, ErrDVKeyTooLarge) {
		t.Errorf("position 2^63: %v", err)
	}
	// Java's format needs a bucket for every key below the largest, so the
	// largest position Java accepts cannot be serialized in 2 GiB: refuse it
	// up front instead of allocating.
	if _, err := EncodeDV(roaring64.BitmapOf(maxPosition)); err == nil {
		t.Error("DV needing 2^31 buckets accepted")
	}
	if _, err := EncodeDV(nil); err == nil {
		t.Error("nil bitmap accepted")
	}
}

// dvBlob frames a raw vector as a DV blob with a valid length and CRC, so
// tests reach the vector checks.
func dvBlob(vector []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(4+len(vector)))
	b = append(b, dvMagic[:]...)
	b = append(b, vector...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[4:]))
}

// vec builds a portable 64-bit vector from (key, 32-bit bitmap bytes) pairs.
func vec(count uint64, parts ...any) []byte {
	b := binary.LittleEndian.AppendUint64(nil, count)
	for _, p := range parts {
		switch p := p.(type) {
		case uint32:
			b = binary.LittleEndian.AppendUint32(b, p)
		case []byte:
			b = append(b, p...)
		}
	}
	return b
}

// arrayBitmap is a 32-bit portable bitmap with one array container.
func arrayBitmap(values ...uint16) []byte {
	b := binary.LittleEndian.AppendUint32(nil, cookieNoRuns)
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(values)-1))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(b)+4))
	for _, v := range values {
		b = binary.LittleEndian.AppendUint16(b, v)
	}
	return b
}

func TestDVDecodeRejects(t *testing.T) {
	empty := vec(0)
	one := arrayBitmap(1, 2)
	runBitmap := func(start, lenm1 uint16, card uint16) []byte {
		b := binary.LittleEndian.AppendUint32(nil, cookieRuns) // 1 container
		b = append(b, 1)                                       // run flag
		b = binary.LittleEndian.AppendUint16(b, 0)
		b = binary.LittleEndian.AppendUint16(b, card-1)
		b = binary.LittleEndian.AppendUint16(b, 1)
		b = binary.LittleEndian.AppendUint16(b, start)
		return binary.LittleEndian.AppendUint16(b, lenm1)
	}
	badOffset := arrayBitmap(1)
	badOffset[12] = 99
	tests := []struct {
		name string
		blob []byte
		want error
	}{
		{"length too small", append(binary.BigEndian.AppendUint32(nil, 4), dvMagic[:]...), ErrDVLength},
		{"key above int32", dvBlob(vec(1, uint32(1<<31), one)), ErrDVKeyTooLarge},
		{"key MaxInt32", dvBlob(vec(1, uint32(1<<31-1), one)), ErrDVKeyTooLarge},
		{"key max uint32", dvBlob(vec(1, uint32(1<<32-1), one)), ErrDVKeyTooLarge},
		{"keys descending", dvBlob(vec(2, uint32(2), one, uint32(1), one)), ErrDVKeyOrder},
		{"keys equal", dvBlob(vec(2, uint32(1), one, uint32(1), one)), ErrDVKeyOrder},
		{"count too large", dvBlob(vec(2, uint32(0), one)), ErrDVTruncated},
		{"trailing after buckets", dvBlob(append(vec(0), 0)), ErrDVTrailingData},
		{"unknown cookie", dvBlob(vec(1, uint32(0), []byte{1, 2, 3, 4, 0, 0, 0, 0})), ErrDVCorrupt},
		{"array unsorted", dvBlob(vec(1, uint32(0), arrayBitmap(5, 3))), ErrDVCorrupt},
		{"array duplicate", dvBlob(vec(1, uint32(0), arrayBitmap(5, 5))), ErrDVCorrupt},
		{"bad offset", dvBlob(vec(1, uint32(0), badOffset)), ErrDVCorrupt},
		{"run past container end", dvBlob(vec(1, uint32(0), runBitmap(65535, 1, 2))), ErrDVCorrupt},
		{"run cardinality mismatch", dvBlob(vec(1, uint32(0), runBitmap(10, 4, 3))), ErrDVCorrupt},
		{"too many containers", dvBlob(vec(1, uint32(0), binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, cookieNoRuns), 1<<16+1))), ErrDVCorrupt},
	}
	_ = empty
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if bm, err := DecodeDV(tt.blob); !errors.Is(err, tt.want) {
				t.Errorf("DecodeDV = %v, %v; want %v", bm, err, tt.want)
			}
		})
	}
	// The valid forms of the helpers decode, so the cases above fail for the
	// reason they name.
	if bm, err := DecodeDV(dvBlob(vec(1, uint32(maxBucketKey), one))); err != nil || !bm.Contains(uint64(maxBucketKey)<<32|2) {
		t.Errorf("largest valid key: %v, %v", bm, err)
	}
	if bm, err := DecodeDV(dvBlob(vec(1, uint32(0), runBitmap(10, 4, 5)))); err != nil || bm.GetCardinality() != 5 {
		t.Errorf("valid run container: %v, %v", bm, err)
	}
}

// A vector may carry an empty bucket (Java writes them for gaps); it decodes
// to nothing.
func TestDVDecodeAcceptsEmptyBuckets(t *testing.T) {
	emptyBitmap := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, cookieNoRuns), 0)
	bm, err := DecodeDV(dvBlob(vec(2, uint32(0), emptyBitmap, uint32(1), arrayBitmap(3))))
	if err != nil || bm.GetCardinality() != 1 || !bm.Contains(1<<32|3) {
		t.Errorf("decode = %v, %v", bm, err)
	}
}

func TestDVDecodeEveryTruncation(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	bm := randomPositions(rng, 3000, 1<<33)
	bm.Or(runHeavyPositions(rng, 20, 1<<33))
	blob, err := EncodeDV(bm)
	if err != nil {
		t.Fatal(err)
	}
	vector := blob[8 : len(blob)-4]
	for n := 0; n < len(vector); n++ {
		if _, err := decodePortable64(vector[:n]); !errors.Is(err, ErrDVTruncated) {
			t.Fatalf("vector truncated to %d of %d bytes: %v, want ErrDVTruncated", n, len(vector), err)
		}
	}
	for n := 0; n < len(blob); n++ {
		if _, err := DecodeDV(blob[:n]); !errors.Is(err, ErrDVTruncated) {
			t.Fatalf("blob truncated to %d of %d bytes: %v, want ErrDVTruncated", n, len(blob), err)
		}
	}
}
