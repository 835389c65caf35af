// Package crafted builds hostile files for tests: Avro containers whose
// blocks inflate far beyond their size, Puffin files with a compressed
// footer out of proportion to the file. Tests use them to check that
// every reader refuses such input quickly, with a clear error and bounded
// memory.
//
// It is a test fixture: nothing outside tests may import it.
package crafted

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"sort"
	"testing"

	"github.com/klauspost/compress/flate"
	"github.com/pierrec/lz4/v4"
)

// Sync is the sync marker of every container AvroContainer writes.
var Sync = [16]byte{'c', 'r', 'a', 'f', 't', 'e', 'd', '-', 's', 'y', 'n', 'c', '-', '-', '-', '!'}

// Block is one block of an Avro container: Count records in Data, which
// is already compressed with the header's avro.codec.
type Block struct {
	Count int64
	Data  []byte
}

// AvroContainer returns an Avro object container file with the header
// metadata meta (which must name avro.schema and avro.codec as wanted) and
// blocks, each followed by Sync.
func AvroContainer(meta map[string]string, blocks ...Block) []byte {
	var b bytes.Buffer
	b.WriteString("Obj\x01")
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	putLong(&b, int64(len(keys)))
	for _, k := range keys {
		putBytes(&b, []byte(k))
		putBytes(&b, []byte(meta[k]))
	}
	putLong(&b, 0)
	b.Write(Sync[:])
	for _, bl := range blocks {
		putLong(&b, bl.Count)
		putBytes(&b, bl.Data)
		b.Write(Sync[:])
	}
	return b.Bytes()
}

// DeflateZeros returns a raw deflate stream (Avro's "deflate" codec) of n
// zero bytes: about n/1000 bytes that inflate to n.
func DeflateZeros(n int) []byte {
	var b bytes.Buffer
	w, err := flate.NewWriter(&b, flate.BestCompression)
	if err != nil {
		panic(err)
	}
	chunk := make([]byte, 1<<20)
	for n > 0 {
		k := min(n, len(chunk))
		if _, err := w.Write(chunk[:k]); err != nil {
			panic(err)
		}
		n -= k
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// PuffinLZ4Footer returns a Puffin file with no blobs whose footer is a
// valid JSON document of about n bytes (one property holding n 'a's),
// LZ4-compressed into a small fraction of that.
func PuffinLZ4Footer(n int) []byte {
	payload := append([]byte(`{"blobs":[],"properties":{"padding":"`), bytes.Repeat([]byte{'a'}, n)...)
	payload = append(payload, `"}}`...)
	var z bytes.Buffer
	w := lz4.NewWriter(&z)
	if _, err := w.Write(payload); err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	var b bytes.Buffer
	b.WriteString("PFA1") // header magic
	b.WriteString("PFA1") // footer magic
	b.Write(z.Bytes())
	var tail [12]byte
	binary.LittleEndian.PutUint32(tail[:4], uint32(z.Len()))
	tail[4] = 1 // footer payload compressed (LZ4)
	copy(tail[8:], "PFA1")
	b.Write(tail[:])
	return b.Bytes()
}

func putLong(b *bytes.Buffer, v int64) {
	var buf [binary.MaxVarintLen64]byte
	b.Write(buf[:binary.PutVarint(buf[:], v)])
}

func putBytes(b *bytes.Buffer, p []byte) {
	putLong(b, int64(len(p)))
	b.Write(p)
}

// CheckAlloc fails t when fn allocates more than fixed bytes plus perByte
// for each of the n bytes of input: fuzz targets use it to check that no
// input, however crafted, costs memory out of proportion to its size.
func CheckAlloc(t testing.TB, n int, fixed, perByte uint64, fn func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	if got, limit := after.TotalAlloc-before.TotalAlloc, fixed+perByte*uint64(n); got > limit {
		t.Fatalf("a %d-byte input allocated %d bytes, more than %d + %d per byte", n, got, fixed, perByte)
	}
}
