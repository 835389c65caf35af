package puffin

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/icectl/icectl/internal/testing/testenv"
)

func readVector(t testing.TB, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(testenv.ConformanceFile(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func openVector(t *testing.T, rel string, opts ...ReaderOption) (*Reader, []byte) {
	t.Helper()
	data := readVector(t, rel)
	r, err := OpenReader(bytes.NewReader(data), int64(len(data)), opts...)
	if err != nil {
		t.Fatalf("open %s: %v", rel, err)
	}
	return r, data
}

func positions(bm *roaring64.Bitmap) []uint64 { return bm.ToArray() }

func TestConformanceEmptyPuffin(t *testing.T) {
	for _, opts := range [][]ReaderOption{nil, {WithFooterSize(28)}} {
		r, data := openVector(t, "puffin/empty-puffin-uncompressed.bin", opts...)
		m := r.Metadata()
		if len(m.Blobs) != 0 || len(m.Properties) != 0 {
			t.Errorf("metadata = %+v, want no blobs and no properties", m)
		}
		if r.FooterSize() != 28 {
			t.Errorf("footer size = %d, want 28", r.FooterSize())
		}
		var buf bytes.Buffer
		footer, size, err := NewWriter(&buf, nil).Finish()
		if err != nil {
			t.Fatal(err)
		}
		if footer != 28 || size != 32 || !bytes.Equal(buf.Bytes(), data) {
			t.Errorf("empty writer: footer %d size %d bytes %q, want 28, 32, %q", footer, size, buf.Bytes(), data)
		}
	}
}

const (
	samplePayload0 = "abcdefghi"
	samplePayload1 = "some blob \x00 binary data \xF0\x9F\xA4\xAF that is not very very very very very very long, is it?"
)

func checkSampleMetadata(t *testing.T, m FileMetadata, codec string, offsets, lengths [2]int64) {
	t.Helper()
	if len(m.Properties) != 1 || m.Properties["created-by"] != "Test 1234" {
		t.Errorf("properties = %v", m.Properties)
	}
	if len(m.Blobs) != 2 {
		t.Fatalf("%d blobs, want 2", len(m.Blobs))
	}
	types := [2]string{"some-blob", "some-other-blob"}
	for i, b := range m.Blobs {
		if b.Type != types[i] || !slices.Equal(b.Fields, []int32{int32(i + 1)}) || b.SnapshotID != 2 ||
			b.SequenceNumber != 1 || b.Offset != offsets[i] || b.Length != lengths[i] ||
			b.CompressionCodec != codec || len(b.Properties) != 0 {
			t.Errorf("blob %d = %+v", i, b)
		}
	}
}

func TestConformanceSampleUncompressed(t *testing.T) {
	r, data := openVector(t, "puffin/sample-metric-data-uncompressed.bin")
	m := r.Metadata()
	checkSampleMetadata(t, m, "", [2]int64{4, 13}, [2]int64{9, 83})
	if r.FooterSize() != 259 {
		t.Errorf("footer size = %d, want 259", r.FooterSize())
	}
	for i, want := range []string{samplePayload0, samplePayload1} {
		got, err := r.ReadBlob(m.Blobs[i])
		if err != nil || string(got) != want {
			t.Errorf("blob %d = %q, %v; want %q", i, got, err, want)
		}
	}

	var buf bytes.Buffer
	w := NewWriter(&buf, map[string]string{"created-by": "Test 1234"})
	for i, p := range []string{samplePayload0, samplePayload1} {
		b := m.Blobs[i]
		b.Offset, b.Length = 0, 0
		if _, err := w.AddBlob(b, []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	footer, size, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if footer != 259 || size != int64(len(data)) || !bytes.Equal(buf.Bytes(), data) {
		t.Errorf("writer output differs from Java's:\n got %q\nwant %q", buf.Bytes(), data)
	}
}

func TestConformanceSampleZstd(t *testing.T) {
	r, _ := openVector(t, "puffin/sample-metric-data-compressed-zstd.bin")
	m := r.Metadata()
	checkSampleMetadata(t, m, "zstd", [2]int64{4, 26}, [2]int64{22, 77})
	if r.FooterSize() != 314 {
		t.Errorf("footer size = %d, want 314", r.FooterSize())
	}
	for i, want := range []string{samplePayload0, samplePayload1} {
		got, err := r.ReadBlob(m.Blobs[i])
		if err != nil || string(got) != want {
			t.Errorf("blob %d = %q, %v; want %q", i, got, err, want)
		}
	}
}

func TestConformanceFooterSizeHint(t *testing.T) {
	data := readVector(t, "puffin/sample-metric-data-compressed-zstd.bin")
	open := func(hint int64) error {
		_, err := OpenReader(bytes.NewReader(data), int64(len(data)), WithFooterSize(hint))
		return err
	}
	if err := open(314); err != nil {
		t.Fatalf("correct hint: %v", err)
	}
	for _, d := range []int64{-1, 1, -10, 10} {
		if err := open(314 + d); err == nil || !strings.HasPrefix(err.Error(), "Invalid file: expected magic at offset") {
			t.Errorf("hint 314%+d: error %v", d, err)
		}
	}
	for _, d := range []int64{-10000, 10000} {
		if err := open(314 + d); err == nil || !strings.HasPrefix(err.Error(), "Invalid footer size") {
			t.Errorf("hint 314%+d: error %v", d, err)
		}
	}
}

func TestConformanceSingleBlobDV(t *testing.T) {
	r, data := openVector(t, "puffin/single-blob-dv.puffin")
	m := r.Metadata()
	const created = "iceberg-go DV cross-client fixtures (apache/iceberg)"
	const ref = "s3://warehouse/db/table/data/00000-0-abc.parquet"
	if len(m.Properties) != 1 || m.Properties["created-by"] != created {
		t.Errorf("properties = %v", m.Properties)
	}
	if len(m.Blobs) != 1 {
		t.Fatalf("%d blobs, want 1", len(m.Blobs))
	}
	b := m.Blobs[0]
	if b.Type != DVBlobType || !slices.Equal(b.Fields, []int32{2147483645}) || b.SnapshotID != -1 ||
		b.SequenceNumber != -1 || b.Offset != 4 || b.Length != 50 || b.CompressionCodec != "" {
		t.Errorf("blob = %+v", b)
	}
	if !slices.Equal(b.PropertyOrder, []string{"referenced-data-file", "cardinality"}) ||
		b.Properties["referenced-data-file"] != ref || b.Properties["cardinality"] != "5" || len(b.Properties) != 2 {
		t.Errorf("blob properties = %v order %v", b.Properties, b.PropertyOrder)
	}
	raw, err := r.ReadBlob(b)
	if err != nil {
		t.Fatal(err)
	}
	if want := readVector(t, "dv/small-alternating-values-position-index.bin"); !bytes.Equal(raw, want) {
		t.Errorf("blob bytes differ from small-alternating-values-position-index.bin")
	}
	bm, err := r.ReadDV(b)
	if err != nil || !slices.Equal(positions(bm), []uint64{1, 3, 5, 7, 9}) {
		t.Errorf("ReadDV = %v, %v", bm, err)
	}

	// WriteDVs of the same DV reproduces Java's file byte for byte.
	var buf bytes.Buffer
	blobs, size, err := WriteDVs(&buf, []DV{{ReferencedDataFile: ref, Positions: roaring64.BitmapOf(1, 3, 5, 7, 9)}},
		map[string]string{"created-by": created})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), data) || size != int64(len(data)) {
		t.Errorf("WriteDVs output differs from Java's:\n got %q\nwant %q", buf.Bytes(), data)
	}
	if want := []DVBlob{{ReferencedDataFile: ref, Offset: 4, Length: 50, Cardinality: 5}}; !slices.Equal(blobs, want) {
		t.Errorf("blobs = %+v, want %+v", blobs, want)
	}
}

func TestConformanceDVVectors(t *testing.T) {
	tests := []struct {
		file    string
		want    []uint64
		absent  []uint64
		wantCRC uint32
	}{
		{"dv/empty-position-index.bin", nil, []uint64{0, 1}, 0xBF18480C},
		{"dv/small-alternating-values-position-index.bin", []uint64{1, 3, 5, 7, 9}, []uint64{2}, 0xB3FB20BE},
		{"dv/small-and-large-values-position-index.bin", []uint64{100, 101, 2147483747, 2147483748}, []uint64{99, 102}, 0x15EB1C7C},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data := readVector(t, tt.file)
			bm, err := DecodeDVWithCardinality(data, int64(len(tt.want)))
			if err != nil {
				t.Fatal(err)
			}
			if got := positions(bm); !slices.Equal(got, tt.want) && len(got)+len(tt.want) > 0 {
				t.Errorf("positions = %v, want %v", got, tt.want)
			}
			for _, p := range tt.absent {
				if bm.Contains(p) {
					t.Errorf("contains %d", p)
				}
			}
			if crc := uint32(data[len(data)-4])<<24 | uint32(data[len(data)-3])<<16 | uint32(data[len(data)-2])<<8 | uint32(data[len(data)-1]); crc != tt.wantCRC {
				t.Errorf("CRC 0x%08X, want 0x%08X", crc, tt.wantCRC)
			}
			enc, err := EncodeDV(roaring64.BitmapOf(tt.want...))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(enc, data) {
				t.Errorf("EncodeDV = % x\nwant       % x", enc, data)
			}
		})
	}
}

func TestConformanceDVCorruption(t *testing.T) {
	data := readVector(t, "dv/small-alternating-values-position-index.bin")
	bad := slices.Clone(data)
	bad[len(bad)-1] ^= 0xFF
	if _, err := DecodeDV(bad); !errors.Is(err, ErrDVBadCRC) {
		t.Errorf("corrupt CRC: %v, want ErrDVBadCRC", err)
	}
	if _, err := DecodeDVWithCardinality(data, 999); !errors.Is(err, ErrDVCardinality) {
		t.Errorf("cardinality 999: %v, want ErrDVCardinality", err)
	}
	bad = slices.Clone(data)
	bad[4] = 0xD2
	if _, err := DecodeDV(bad); !errors.Is(err, ErrDVBadMagic) {
		t.Errorf("bad magic: %v, want ErrDVBadMagic", err)
	}
	for n := 0; n < len(data); n++ {
		if _, err := DecodeDV(data[:n]); !errors.Is(err, ErrDVTruncated) {
			t.Errorf("truncated to %d bytes: %v, want ErrDVTruncated", n, err)
		}
	}
	if _, err := DecodeDV(append(slices.Clone(data), 0)); !errors.Is(err, ErrDVTrailingData) {
		t.Errorf("trailing byte: %v, want ErrDVTrailingData", err)
	}
}

func TestConformanceRoaring64(t *testing.T) {
	spread := make([]uint64, 0, 100)
	for h := uint64(0); h < 10; h++ {
		for l := uint64(0); l < 10; l++ {
			spread = append(spread, h<<32|l)
		}
	}
	tests := []struct {
		file            string
		want            []uint64
		present, absent []uint64
	}{
		{"roaring64/64map32bitvals.bin", []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, nil, []uint64{10}},
		{"roaring64/64mapempty.bin", nil, nil, []uint64{0}},
		{"roaring64/64mapspreadvals.bin", spread, []uint64{0, 3<<32 | 7, 9<<32 | 9}, []uint64{10 << 32}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data := readVector(t, tt.file)
			bm, err := decodePortable64(data)
			if err != nil {
				t.Fatal(err)
			}
			if got := positions(bm); !slices.Equal(got, tt.want) && len(got)+len(tt.want) > 0 {
				t.Errorf("positions = %v, want %v", got, tt.want)
			}
			if bm.GetCardinality() != uint64(len(tt.want)) {
				t.Errorf("cardinality %d, want %d", bm.GetCardinality(), len(tt.want))
			}
			for _, p := range tt.present {
				if !bm.Contains(p) {
					t.Errorf("does not contain %d", p)
				}
			}
			for _, p := range tt.absent {
				if bm.Contains(p) {
					t.Errorf("contains %d", p)
				}
			}
			out, err := appendPortable64(nil, bm)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, data) {
				t.Errorf("re-serialized = % x\nwant            % x", out, data)
			}
		})
	}
	for _, file := range []string{
		"roaring64/invalid-64mapemptyinput.bin",
		"roaring64/invalid-64mapinvalidsize.bin",
		"roaring64/invalid-64mapkeytoosmall.bin",
		"roaring64/invalid-64mapsizetoosmall.bin",
	} {
		if bm, err := decodePortable64(readVector(t, file)); err == nil {
			t.Errorf("%s: decoded %v, want an error", file, bm)
		} else if !errors.Is(err, ErrDVTruncated) {
			t.Errorf("%s: %v, want ErrDVTruncated", file, err)
		}
	}
}
