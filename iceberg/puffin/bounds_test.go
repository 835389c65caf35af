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
