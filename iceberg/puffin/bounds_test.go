package puffin

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/icectl/icectl/internal/testing/crafted"
)

// A small file whose LZ4 footer decompresses to 32 MiB of valid JSON is
// refused as out of proportion once the output passes 32 times the stored
// footer, with a few MiB allocated.
func TestFooterOutOfProportionRefused(t *testing.T) {
	data := crafted.PuffinLZ4Footer(32 << 20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := OpenReader(bytes.NewReader(data), int64(len(data)))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "out of proportion") {
		t.Errorf("%d-byte file with a 32 MiB footer: %v, want a refusal", len(data), err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 24<<20 {
		t.Errorf("opening a %d-byte file allocated %d bytes", len(data), n)
	}
	// A footer within proportion still opens.
	ok := crafted.PuffinLZ4Footer(512 << 10)
	if _, err := OpenReader(bytes.NewReader(ok), int64(len(ok))); err != nil {
		t.Errorf("a 512 KiB compressed footer: %v", err)
	}
}

// TestZstdFrameContentSize: every zstd frame the writer makes records its
// content size, small payloads included (Java's reader needs it).
func TestZstdFrameContentSize(t *testing.T) {
	for _, n := range []int{1, 40, 255, 256, 5000, 70000} {
		payload := make([]byte, n)
		for i := range payload {
			payload[i] = byte(i * 7)
		}
		out, err := compress(CodecZstd, payload)
		if err != nil {
			t.Fatal(err)
		}
		// Frame header descriptor after the 4-byte magic: the content size
		// is present when its flag (bits 7-6) is set or the frame is a
		// single segment (bit 5).
		if d := out[4]; d>>6 == 0 && d&0x20 == 0 {
			t.Errorf("%d bytes: frame header descriptor %#x has no content size", n, d)
		}
		back, err := decompress(CodecZstd, out, 1<<20)
		if err != nil || !bytes.Equal(back, payload) {
			t.Errorf("%d bytes: round trip: %v", n, err)
		}
	}
}
