package manifest

import (
	"bytes"
	"errors"
	"github.com/icectl/icectl/internal/testing/crafted"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/icectl/icectl/internal/testing/testenv"
)

func conformanceFiles(t testing.TB) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(testenv.ConformanceDir(t), "avro", "*.avro"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no conformance avro files (%v)", err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = b
	}
	return out
}

// drainList and drainManifest read a whole file and return the first error.
func drainList(data []byte) error {
	lr, err := OpenManifestList(bytes.NewReader(data))
	if err != nil {
		return err
	}
	for {
		if _, err := lr.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

func drainManifest(data []byte) error {
	mr, err := OpenManifest(bytes.NewReader(data))
	if err != nil {
		return err
	}
	mr.InheritFrom(ManifestFile{SequenceNumber: 1, FirstRowID: ptr(int64(0))})
	for {
		if _, err := mr.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

func isList(name string) bool {
	return strings.HasPrefix(name, "snap-") || strings.Contains(name, "list")
}

func TestTruncatedFilesFail(t *testing.T) {
	for name, data := range conformanceFiles(t) {
		drain := drainManifest
		if isList(name) {
			drain = drainList
		}
		if err := drain(data); err != nil {
			t.Fatalf("%s: intact file fails: %v", name, err)
		}
		for _, n := range []int{0, 3, 10, len(data) / 2, len(data) - 17, len(data) - 1} {
			err := drain(data[:n])
			if err == nil {
				t.Errorf("%s truncated to %d bytes: no error", name, n)
			} else if n > 0 && n < len(data)-16 && !strings.Contains(err.Error(), "truncated") && !strings.Contains(err.Error(), "corrupt") && !strings.Contains(err.Error(), "decompress") {
				t.Errorf("%s truncated to %d bytes: unclear error %v", name, n, err)
			}
		}
	}
}

func TestCorruptFilesFailCleanly(t *testing.T) {
	for name, data := range conformanceFiles(t) {
		drain := drainManifest
		if isList(name) {
			drain = drainList
		}
		failures := 0
		for i := 0; i < len(data); i += 7 {
			bad := append([]byte(nil), data...)
			bad[i] ^= 0xff
			if err := drain(bad); err != nil {
				failures++
			}
		}
		if failures == 0 {
			t.Errorf("%s: no corruption was detected", name)
		}
	}
	if err := drainManifest([]byte("not avro at all")); err == nil || !strings.Contains(err.Error(), "not an avro") {
		t.Errorf("garbage: %v", err)
	}
	// A manifest list is not a manifest.
	if err := drainManifest(conformanceFiles(t)["manifest-list-v2-1.avro"]); err == nil {
		t.Error("manifest list read as a manifest without error")
	}
}

// Allocation bounds of the Avro fuzz targets: a file may inflate to
// InflateAllowance plus MaxInflateRatio times its size, and decoding
// allocates a few times what it decodes.
const (
	avroFuzzFixed   = 64 << 20
	avroFuzzPerByte = 4 * MaxInflateRatio * 64
)

func FuzzReadManifest(f *testing.F) {
	for _, d := range conformanceFiles(f) {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		crafted.CheckAlloc(t, len(data), avroFuzzFixed, avroFuzzPerByte, func() { _ = drainManifest(data) })
	})
}

func FuzzReadManifestList(f *testing.F) {
	for _, d := range conformanceFiles(f) {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		crafted.CheckAlloc(t, len(data), avroFuzzFixed, avroFuzzPerByte, func() { _ = drainList(data) })
	})
}
