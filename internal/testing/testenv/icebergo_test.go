package testenv

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestIcebergGo checks the shared reader process against the one-shot
// command: the same bytes for a write and a scan, the same error message
// for a failing scan, concurrent calls each answered, and a new process
// after CloseIcebergGo.
func TestIcebergGo(t *testing.T) {
	bin := Need(t, IcebergGoReader, "iceberg-go reader (scripts/build-iceberg-go-reader)")
	ctx := context.Background()
	dir := t.TempDir()
	uri := "sqlite:///" + filepath.Join(dir, "catalog.db")
	IcebergGo(ctx, t, "write-fixture", "--catalog-uri", uri, "--warehouse", "file://"+dir, "--catalog-name", "c",
		"--table", "ns.t", "--format-version", "3", "--rows", "40", "--delete-every", "7")
	scan := []string{"scan", "--catalog-uri", uri, "--catalog-name", "c", "--table", "ns.t", "--lineage"}
	want, err := exec.Command(bin, scan...).Output()
	if err != nil {
		t.Fatalf("iceberg-read scan: %v", err)
	}
	if !bytes.Contains(want, []byte(`"row_count": 34`)) {
		t.Fatalf("one-shot scan of 40 rows less every 7th: %s", want)
	}
	var wg sync.WaitGroup
	got := make([][]byte, 4)
	for i := range got {
		wg.Go(func() { got[i] = IcebergGo(ctx, t, scan...) })
	}
	wg.Wait()
	for i, g := range got {
		if !bytes.Equal(g, want) {
			t.Errorf("scan %d through serve differs from the one-shot scan:\n%s\nwant\n%s", i, g, want)
		}
	}

	missing := []string{"scan", "--catalog-uri", uri, "--catalog-name", "c", "--table", "ns.missing"}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, missing...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil {
		t.Fatal("one-shot scan of a missing table succeeded")
	}
	_, err = icebergGo.run(ctx, bin, missing)
	msg := strings.TrimSpace(strings.TrimPrefix(stderr.String(), "iceberg-read: "))
	if err == nil || !strings.HasSuffix(err.Error(), ": "+msg) {
		t.Errorf("scan of a missing table through serve: %v; the one-shot command says %q", err, msg)
	}

	if err := CloseIcebergGo(); err != nil {
		t.Errorf("CloseIcebergGo: %v", err)
	}
	if g := IcebergGo(ctx, t, scan...); !bytes.Equal(g, want) {
		t.Errorf("scan after CloseIcebergGo differs from the one-shot scan")
	}
	if err := CloseIcebergGo(); err != nil {
		t.Errorf("CloseIcebergGo: %v", err)
	}
}
