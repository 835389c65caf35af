package puffin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/klauspost/compress/zstd"
)

func TestWriteReadRoundTrip(t *testing.T) {
	payloads := [][]byte{[]byte("hello"), bytes.Repeat([]byte("compressible "), 1000), {}, {0, 1, 2}}
	for _, codec := range []string{CodecNone, CodecZstd, CodecLZ4} {
		t.Run("codec="+codec, func(t *testing.T) {
			var buf bytes.Buffer
			w := NewWriter(&buf, map[string]string{"created-by": "icectl test", "a": "line\nbreak \"quoted\" \x01 é"})
			var written []BlobMetadata
			for i, p := range payloads {
				b, err := w.AddBlob(BlobMetadata{
					Type: "t", Fields: []int32{int32(i), 7}, SnapshotID: int64(i) + 100, SequenceNumber: 3,
					CompressionCodec: codec, Properties: map[string]string{"z": "1", "k": "v"}, PropertyOrder: []string{"z"},
				}, p)
				if err != nil {
					t.Fatal(err)
				}
				written = append(written, b)
			}
			footer, size, err := w.Finish()
			if err != nil {
				t.Fatal(err)
			}
			if size != int64(buf.Len()) {
				t.Errorf("file size %d, wrote %d", size, buf.Len())
			}
			r, err := OpenReader(bytes.NewReader(buf.Bytes()), size, WithFooterSize(footer))
			if err != nil {
				t.Fatal(err)
			}
			m := r.Metadata()
			if m.Properties["a"] != "line\nbreak \"quoted\" \x01 é" || m.Properties["created-by"] != "icectl test" {
				t.Errorf("file properties = %v", m.Properties)
			}
			if len(m.Blobs) != len(payloads) {
				t.Fatalf("%d blobs", len(m.Blobs))
			}
			for i, b := range m.Blobs {
				if !slices.Equal(b.PropertyOrder, []string{"z", "k"}) {
					t.Errorf("blob %d property order %v, want [z k]", i, b.PropertyOrder)
				}
				if b.Offset != written[i].Offset || b.Length != written[i].Length || b.CompressionCodec != codec ||
					!slices.Equal(b.Fields, written[i].Fields) || b.SnapshotID != written[i].SnapshotID {
					t.Errorf("blob %d = %+v, wrote %+v", i, b, written[i])
				}
				got, err := r.ReadBlob(b)
				if err != nil || !bytes.Equal(got, payloads[i]) {
					t.Errorf("blob %d = %q, %v", i, got, err)
				}
			}
		})
	}
}

func TestCompressedFramesRecordContentSize(t *testing.T) {
	payload := bytes.Repeat([]byte("x"), 1000)
	z, err := compress(CodecZstd, payload)
	if err != nil {
		t.Fatal(err)
	}
	var h zstd.Header
	if err := h.Decode(z); err != nil || !h.HasFCS || h.FrameContentSize != 1000 {
		t.Errorf("zstd header %+v, %v: want content size 1000", h, err)
	}
	l, err := compress(CodecLZ4, payload)
	if err != nil {
		t.Fatal(err)
	}
	// LZ4 frame: magic (4 bytes), then FLG whose bit 3 is "content size".
	if len(l) < 13 || l[4]&0x08 == 0 || binary.LittleEndian.Uint64(l[6:]) != 1000 {
		t.Errorf("lz4 frame % x: want content size 1000", l[:min(len(l), 16)])
	}
}

// buildPuffin assembles a file by hand so tests can set any footer field.
func buildPuffin(blobs []byte, payload []byte, flags [4]byte) []byte {
	f := append([]byte("PFA1"), blobs...)
	f = append(f, "PFA1"...)
	f = append(f, payload...)
	f = binary.LittleEndian.AppendUint32(f, uint32(len(payload)))
	f = append(f, flags[:]...)
	return append(f, "PFA1"...)
}

func TestReadLZ4Footer(t *testing.T) {
	json := `{"blobs":[{"type":"x","fields":[1],"snapshot-id":1,"sequence-number":2,"offset":4,"length":3}],"properties":{"created-by":"lz4 test"}}`
	payload, err := compress(CodecLZ4, []byte(json))
	if err != nil {
		t.Fatal(err)
	}
	file := buildPuffin([]byte("abc"), payload, [4]byte{1})
	r, err := OpenReader(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	m := r.Metadata()
	if m.Properties["created-by"] != "lz4 test" || len(m.Blobs) != 1 {
		t.Fatalf("metadata = %+v", m)
	}
	if got, err := r.ReadBlob(m.Blobs[0]); err != nil || string(got) != "abc" {
		t.Errorf("blob = %q, %v", got, err)
	}
	if r.FooterSize() != int64(len(payload)+16) {
		t.Errorf("footer size %d, want %d", r.FooterSize(), len(payload)+16)
	}
}

func TestOpenReaderRejects(t *testing.T) {
	blob := func(fields string) string {
		return `{"blobs":[{"type":"x","fields":[1],"snapshot-id":1,"sequence-number":2` + fields + `}]}`
	}
	ok := blob(`,"offset":4,"length":3`)
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"too short", []byte("PFA1PFA1"), "Invalid file: file length"},
		{"unknown flag bit", buildPuffin([]byte("abc"), []byte(ok), [4]byte{2}), "unsupported footer flags"},
		{"flag in byte 3", buildPuffin([]byte("abc"), []byte(ok), [4]byte{0, 0, 0, 1}), "unsupported footer flags"},
		{"blob overlaps footer", buildPuffin([]byte("abc"), []byte(blob(`,"offset":4,"length":4`)), [4]byte{}), "overlaps the footer"},
		{"blob offset in header", buildPuffin([]byte("abc"), []byte(blob(`,"offset":2,"length":1`)), [4]byte{}), "inside the header magic"},
		{"negative length", buildPuffin([]byte("abc"), []byte(blob(`,"offset":4,"length":-1`)), [4]byte{}), "negative"},
		{"huge offset", buildPuffin([]byte("abc"), []byte(blob(`,"offset":9223372036854775807,"length":9223372036854775807`)), [4]byte{}), "overlaps the footer"},
		{"missing length", buildPuffin([]byte("abc"), []byte(blob(`,"offset":4`)), [4]byte{}), "missing required field length"},
		{"missing blobs", buildPuffin(nil, []byte(`{"properties":{}}`), [4]byte{}), "missing required field blobs"},
		{"fractional offset", buildPuffin([]byte("abc"), []byte(blob(`,"offset":4.5,"length":1`)), [4]byte{}), "cannot unmarshal number 4.5"},
		{"non-string property", buildPuffin(nil, []byte(`{"blobs":[],"properties":{"a":1}}`), [4]byte{}), "not a string"},
		{"duplicate property", buildPuffin(nil, []byte(`{"blobs":[],"properties":{"a":"1","a":"2"}}`), [4]byte{}), "duplicate key"},
		{"not JSON", buildPuffin(nil, []byte(`{"blobs":[`), [4]byte{}), "parse footer JSON"},
		{"compressed flag, plain footer", buildPuffin(nil, []byte(`{"blobs":[]}`), [4]byte{1}), "decompress footer"},
	}
	// A payload size field that disagrees with a footer-size hint.
	good := buildPuffin(nil, []byte(`{"blobs":[]}`), [4]byte{})
	badSize := slices.Clone(good)
	binary.LittleEndian.PutUint32(badSize[len(badSize)-12:], 11)
	_, err := OpenReader(bytes.NewReader(badSize), int64(len(badSize)), WithFooterSize(28))
	if err == nil || !strings.Contains(err.Error(), "Unexpected footer payload size value 11 for footer size 28") {
		t.Errorf("payload size disagreeing with hint: %v", err)
	}
	negative := slices.Clone(good)
	binary.LittleEndian.PutUint32(negative[len(negative)-12:], 0xFFFFFFFF)
	tests = append(tests, struct {
		name string
		file []byte
		want string
	}{"negative payload size", negative, "Invalid footer size"})
	badTail := slices.Clone(good)
	badTail[len(badTail)-1] = 'X'
	tests = append(tests, struct {
		name string
		file []byte
		want string
	}{"bad trailing magic", badTail, "Invalid file: expected magic at offset 28"})
	badHead := slices.Clone(good)
	badHead[0] = 'X'
	tests = append(tests, struct {
		name string
		file []byte
		want string
	}{"bad header magic", badHead, "Invalid file: expected magic at offset 0"})

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := OpenReader(bytes.NewReader(tt.file), int64(len(tt.file)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("OpenReader = %v, %v; want error containing %q", r, err, tt.want)
			}
		})
	}
	if _, err := OpenReader(bytes.NewReader(good), int64(len(good))); err != nil {
		t.Errorf("the valid base file fails: %v", err)
	}
	if _, err := OpenReader(bytes.NewReader(good), int64(len(good)), WithFooterSize(0)); err == nil || !strings.HasPrefix(err.Error(), "Invalid footer size: 0") {
		t.Errorf("footer size hint 0: %v", err)
	}
}

func TestReadBlobRejects(t *testing.T) {
	file := buildPuffin([]byte("abc"), []byte(`{"blobs":[{"type":"x","fields":[1],"snapshot-id":1,"sequence-number":2,"offset":4,"length":3,"compression-codec":"snappy"}]}`), [4]byte{})
	r, err := OpenReader(bytes.NewReader(file), int64(len(file)), WithMaxBlobSize(2))
	if err != nil {
		t.Fatal(err)
	}
	b := r.Metadata().Blobs[0]
	if _, err := r.ReadBlob(b); err == nil || !strings.Contains(err.Error(), "exceeds the limit") {
		t.Errorf("blob above limit: %v", err)
	}
	r, _ = OpenReader(bytes.NewReader(file), int64(len(file)))
	if _, err := r.ReadBlob(b); err == nil || !strings.Contains(err.Error(), `unsupported compression codec "snappy"`) {
		t.Errorf("unknown codec: %v", err)
	}
	b.CompressionCodec = ""
	b.Length = 100
	if _, err := r.ReadBlob(b); err == nil || !strings.Contains(err.Error(), "overlaps the footer") {
		t.Errorf("caller-made blob past the footer: %v", err)
	}
	// zstd output above the limit is refused rather than allocated.
	big, _ := compress(CodecZstd, make([]byte, 1<<20))
	if _, err := decompress(CodecZstd, big, 1<<10); err == nil {
		t.Error("zstd bomb decoded past the limit")
	}
	bigLZ4, _ := compress(CodecLZ4, make([]byte, 1<<20))
	if _, err := decompress(CodecLZ4, bigLZ4, 1<<10); err == nil {
		t.Error("lz4 bomb decoded past the limit")
	}
}

func TestWriterRejects(t *testing.T) {
	w := NewWriter(&bytes.Buffer{}, nil)
	if _, err := w.AddBlob(BlobMetadata{Type: "t", CompressionCodec: "snappy"}, nil); err == nil {
		t.Error("unknown codec accepted")
	}
	if _, err := w.AddBlob(BlobMetadata{}, nil); err == nil {
		t.Error("empty type accepted")
	}
	if _, _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.Finish(); err == nil {
		t.Error("second Finish accepted")
	}
	fw := NewWriter(failWriter{}, nil)
	if _, err := fw.AddBlob(BlobMetadata{Type: "t"}, []byte("x")); err == nil {
		t.Error("write error lost")
	}
	if _, _, err := fw.Finish(); err == nil {
		t.Error("Finish after a failed write succeeded")
	}
	if _, _, err := NewWriter(&bytes.Buffer{}, map[string]string{"k": "\xff"}).Finish(); err == nil {
		t.Error("invalid UTF-8 property accepted")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteDVs(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	dvs := []DV{
		{ReferencedDataFile: "s3://b/t/data/c.parquet", Positions: randomPositions(rng, 5000, 1<<33)},
		{ReferencedDataFile: "s3://b/t/data/a.parquet", Positions: runHeavyPositions(rng, 10, 1<<20)},
		{ReferencedDataFile: "s3://b/t/data/b.parquet", Positions: roaring64.BitmapOf(0)},
	}
	props := map[string]string{PropCreatedBy: "icectl 0.1.0"}
	var buf bytes.Buffer
	blobs, size, err := WriteDVs(&buf, dvs, props)
	if err != nil {
		t.Fatal(err)
	}
	if size != int64(buf.Len()) {
		t.Errorf("size %d, wrote %d", size, buf.Len())
	}
	r, err := OpenReader(bytes.NewReader(buf.Bytes()), size)
	if err != nil {
		t.Fatal(err)
	}
	m := r.Metadata()
	if m.Properties[PropCreatedBy] != "icectl 0.1.0" || len(m.Blobs) != 3 {
		t.Fatalf("metadata = %+v", m)
	}
	byFile := map[string]*roaring64.Bitmap{}
	for _, dv := range dvs {
		byFile[dv.ReferencedDataFile] = dv.Positions
	}
	for i, b := range m.Blobs {
		want := []string{"s3://b/t/data/a.parquet", "s3://b/t/data/b.parquet", "s3://b/t/data/c.parquet"}[i]
		ref := b.Properties[PropReferencedDataFile]
		if ref != want || blobs[i].ReferencedDataFile != want {
			t.Errorf("blob %d references %q / %q, want %q (sorted)", i, ref, blobs[i].ReferencedDataFile, want)
		}
		if b.Type != DVBlobType || !slices.Equal(b.Fields, []int32{PosFieldID}) || b.SnapshotID != -1 || b.SequenceNumber != -1 ||
			b.CompressionCodec != "" || !slices.Equal(b.PropertyOrder, []string{PropReferencedDataFile, PropCardinality}) {
			t.Errorf("blob %d metadata = %+v", i, b)
		}
		if b.Offset != blobs[i].Offset || b.Length != blobs[i].Length {
			t.Errorf("blob %d at %d+%d, WriteDVs said %d+%d", i, b.Offset, b.Length, blobs[i].Offset, blobs[i].Length)
		}
		if b.Properties[PropCardinality] != fmt.Sprint(byFile[want].GetCardinality()) || blobs[i].Cardinality != int64(byFile[want].GetCardinality()) {
			t.Errorf("blob %d cardinality %q / %d, want %d", i, b.Properties[PropCardinality], blobs[i].Cardinality, byFile[want].GetCardinality())
		}
		got, err := r.ReadDV(b)
		if err != nil || !got.Equals(byFile[want]) {
			t.Errorf("blob %d decodes to a different DV: %v", i, err)
		}
	}
	var again bytes.Buffer
	if _, _, err := WriteDVs(&again, []DV{dvs[2], dvs[0], dvs[1]}, props); err != nil || !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Errorf("output depends on input order (err %v)", err)
	}

	for name, bad := range map[string][]DV{
		"duplicate": {{ReferencedDataFile: "f", Positions: roaring64.BitmapOf(1)}, {ReferencedDataFile: "f", Positions: roaring64.BitmapOf(2)}},
		"empty":     {{ReferencedDataFile: "f", Positions: roaring64.New()}},
		"nil":       {{ReferencedDataFile: "f"}},
		"no file":   {{Positions: roaring64.BitmapOf(1)}},
	} {
		if _, _, err := WriteDVs(&bytes.Buffer{}, bad, props); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestReadDVChecksCardinalityProperty(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, nil)
	blob, _ := EncodeDV(roaring64.BitmapOf(1, 2, 3))
	b, err := w.AddBlob(BlobMetadata{Type: DVBlobType, Fields: []int32{PosFieldID}, SnapshotID: -1, SequenceNumber: -1,
		Properties: map[string]string{PropReferencedDataFile: "f", PropCardinality: "4"}}, blob)
	if err != nil {
		t.Fatal(err)
	}
	_, size, _ := w.Finish()
	r, err := OpenReader(bytes.NewReader(buf.Bytes()), size)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadDV(b); !errors.Is(err, ErrDVCardinality) {
		t.Errorf("cardinality property 4 for 3 positions: %v", err)
	}
	b.Type = "other"
	if _, err := r.ReadDV(b); err == nil {
		t.Error("non-DV blob read as DV")
	}
}

// A writer told how many blobs come writes the same bytes, and AddBlob
// still copies the caller's metadata (AddDV's own is not copied).
func TestWriterReserveAndOwnership(t *testing.T) {
	write := func(reserve int) []byte {
		var buf bytes.Buffer
		w := NewWriter(&buf, map[string]string{PropCreatedBy: "icectl test"})
		w.Reserve(reserve)
		for _, ref := range []string{"s3://b/t/data/a.parquet", "s3://b/t/data/b.parquet"} {
			if _, err := w.AddDV(DV{ReferencedDataFile: ref, Positions: roaring64.BitmapOf(1, 2, 3)}); err != nil {
				t.Fatal(err)
			}
		}
		props := map[string]string{"k": "v"}
		if _, err := w.AddBlob(BlobMetadata{Type: "other", Fields: []int32{1}, Properties: props, PropertyOrder: []string{"k"}}, []byte("x")); err != nil {
			t.Fatal(err)
		}
		props["k"] = "changed"
		if _, _, err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	plain, reserved := write(0), write(3)
	if !bytes.Equal(plain, reserved) {
		t.Fatal("Reserve changed the file")
	}
	r, err := OpenReader(bytes.NewReader(plain), int64(len(plain)))
	if err != nil {
		t.Fatal(err)
	}
	m := r.Metadata()
	if len(m.Blobs) != 3 || m.Blobs[2].Properties["k"] != "v" ||
		m.Blobs[0].Properties[PropReferencedDataFile] != "s3://b/t/data/a.parquet" || m.Blobs[1].Properties[PropReferencedDataFile] != "s3://b/t/data/b.parquet" {
		t.Fatalf("metadata = %+v", m)
	}
}
