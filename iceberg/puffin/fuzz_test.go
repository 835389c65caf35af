package puffin

import (
	"bytes"
	"errors"
	"github.com/icectl/icectl/internal/testing/crafted"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

var conformancePuffins = []string{
	"puffin/empty-puffin-uncompressed.bin",
	"puffin/sample-metric-data-uncompressed.bin",
	"puffin/sample-metric-data-compressed-zstd.bin",
	"puffin/single-blob-dv.puffin",
}

// FuzzReadPuffin opens arbitrary files and reads every blob: no panics, and
// whatever opens must describe blobs inside the file.
func FuzzReadPuffin(f *testing.F) {
	for _, name := range conformancePuffins {
		f.Add(readVector(f, name))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		size := int64(len(data))
		var r *Reader
		var err error
		crafted.CheckAlloc(t, len(data), 16<<20, 64, func() { // LZ4 frames hold 4 MiB blocks
			r, err = OpenReader(bytes.NewReader(data), size, WithMaxFooterSize(1<<20), WithMaxBlobSize(1<<20))
		})
		if err != nil {
			return
		}
		footerStart := size - r.FooterSize()
		for i, b := range r.Metadata().Blobs {
			if b.Offset < 4 || b.Length < 0 || b.Offset+b.Length > footerStart {
				t.Fatalf("blob %d [%d,+%d) accepted outside [4,%d)", i, b.Offset, b.Length, footerStart)
			}
			payload, err := r.ReadBlob(b)
			if err != nil {
				continue
			}
			if len(payload) > 1<<20 {
				t.Fatalf("blob %d decoded to %d bytes, above the limit", i, len(payload))
			}
			if b.Type == DVBlobType {
				_, _ = r.ReadDV(b)
			}
		}
	})
}

// FuzzDecodeDV decodes arbitrary blobs, and raw portable vectors with a
// valid frame around them: no panics, and whatever decodes re-encodes to a
// blob that decodes to the same positions.
func FuzzDecodeDV(f *testing.F) {
	for _, name := range []string{
		"dv/empty-position-index.bin",
		"dv/small-alternating-values-position-index.bin",
		"dv/small-and-large-values-position-index.bin",
	} {
		f.Add(readVector(f, name))
	}
	for _, name := range []string{
		"roaring64/64map32bitvals.bin", "roaring64/64mapempty.bin", "roaring64/64mapspreadvals.bin",
		"roaring64/invalid-64mapemptyinput.bin", "roaring64/invalid-64mapinvalidsize.bin",
		"roaring64/invalid-64mapkeytoosmall.bin", "roaring64/invalid-64mapsizetoosmall.bin",
	} {
		f.Add(dvBlob(readVector(f, name)))
	}
	run := roaring64.New()
	run.AddRange(10, 100_000)
	run.Add(3 << 32)
	if blob, err := EncodeDV(run); err == nil {
		f.Add(blob)
	}
	f.Fuzz(func(t *testing.T, blob []byte) {
		check := func(bm *roaring64.Bitmap) {
			if err := bm.Validate(); err != nil {
				t.Fatalf("decoded an invalid bitmap: %v", err)
			}
			if bm.IsEmpty() || bm.Maximum()>>32 > 64 {
				return // re-encoding would need many gap buckets; not what this checks
			}
			again, err := EncodeDV(bm)
			if err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			back, err := DecodeDV(again)
			if err != nil || !back.Equals(bm) {
				t.Fatalf("re-encoded DV decodes differently: %v", err)
			}
		}
		var bm *roaring64.Bitmap
		var err error
		crafted.CheckAlloc(t, len(blob), 1<<20, 1024, func() { bm, err = DecodeDV(blob) })
		if err == nil {
			check(bm)
		}
		// The same bytes as a raw vector, so the fuzzer need not forge CRCs
		// to reach the Roaring parser.
		if bm, err := DecodeDV(dvBlob(blob)); err == nil {
			check(bm)
		} else if errors.Is(err, ErrDVBadCRC) || errors.Is(err, ErrDVBadMagic) {
			t.Fatalf("valid frame rejected: %v", err)
		}
	})
}
