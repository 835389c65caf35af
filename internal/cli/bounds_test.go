package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/internal/testing/crafted"
)

// allocatedBy returns the bytes fn allocates.
func allocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// manifestHeader returns the header metadata of a manifest of the
// fixture's current snapshot, with the deflate codec.
func manifestHeader(t *testing.T, fx *fixture) (list string, meta map[string]string, listMeta map[string]string) {
	t.Helper()
	ctx := context.Background()
	snap := fx.table.Metadata.CurrentSnapshot()
	io := fileio.NewLocal()
	f, err := io.Open(ctx, snap.ManifestList)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lr, err := manifest.OpenManifestList(bytesOf(t, f))
	if err != nil {
		t.Fatal(err)
	}
	mf, err := lr.Next()
	if err != nil {
		t.Fatal(err)
	}
	mfile, err := io.Open(ctx, mf.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer mfile.Close()
	mr, err := manifest.OpenManifest(bytesOf(t, mfile))
	if err != nil {
		t.Fatal(err)
	}
	meta, listMeta = mr.Meta().Metadata, lr.Header().Metadata
	meta["avro.codec"], listMeta["avro.codec"] = "deflate", "deflate"
	return strings.TrimPrefix(snap.ManifestList, "file://"), meta, listMeta
}

func bytesOf(t *testing.T, f fileio.File) *bytes.Reader {
	t.Helper()
	b := make([]byte, f.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(b)
}

// readCommands are the read-only commands that read a table's manifests.
var readCommands = [][]string{
	{"files", "db.events"},
	{"health", "db.events"},
	{"compact", "db.events", "--dry-run"},
}

// A table whose manifest list names 16 manifests, each a deflate block of
// 64 KiB that inflates to 64 MiB: every read-only command fails with an
// error saying the file is out of proportion, allocating a small fraction
// of what the blocks would inflate to.
func TestCraftedManifestsBoundedMemory(t *testing.T) {
	fx := newFixture(t)
	list, meta, _ := manifestHeader(t, fx)
	bomb := crafted.AvroContainer(meta, crafted.Block{Count: 1, Data: crafted.DeflateZeros(64 << 20)})
	var buf bytes.Buffer
	snap := fx.table.Metadata.CurrentSnapshot()
	lw, err := manifest.NewListWriter(&buf, 2, snap.SnapshotID, snap.ParentSnapshotID, snap.SequenceNumber, nil)
	if err != nil {
		t.Fatal(err)
	}
	zero, zeroRows, one := int32(0), int64(0), int32(1)
	for i := range 16 {
		p := filepath.Join(fx.dir, fmt.Sprintf("bomb-%d.avro", i))
		if err := os.WriteFile(p, bomb, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := lw.Add(manifest.ManifestFile{Path: "file://" + p, Length: int64(len(bomb)), SequenceNumber: snap.SequenceNumber,
			MinSequenceNumber: snap.SequenceNumber, AddedSnapshotID: snap.SnapshotID,
			AddedFilesCount: &one, ExistingFilesCount: &zero, DeletedFilesCount: &zero,
			AddedRowsCount: &zeroRows, ExistingRowsCount: &zeroRows, DeletedRowsCount: &zeroRows}); err != nil {
			t.Fatal(err)
		}
	}
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(list, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range readCommands {
		var r result
		n := allocatedBy(func() { r = fx.run(t, args...) })
		if r.code != ExitFailure || !strings.Contains(r.stderr, "times its compressed size") {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 refusing a file out of proportion", args, r.code, r.stderr)
		}
		if n > 256<<20 {
			t.Errorf("%v: allocated %d MiB for 16 manifests of %d KiB", args, n>>20, len(bomb)>>10)
		}
	}
	r := runCLI(t, fx.env, "inspect", "manifest", filepath.Join(fx.dir, "bomb-0.avro"))
	if r.code != ExitFailure || !strings.Contains(r.stderr, "times its compressed size") {
		t.Errorf("inspect manifest: exit %d, stderr %q", r.code, r.stderr)
	}
}

// A manifest list of 128 KiB that inflates to 128 MiB.
func TestCraftedManifestListBoundedMemory(t *testing.T) {
	fx := newFixture(t)
	list, _, listMeta := manifestHeader(t, fx)
	bomb := crafted.AvroContainer(listMeta, crafted.Block{Count: 1 << 20, Data: crafted.DeflateZeros(128 << 20)})
	if err := os.WriteFile(list, bomb, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range append(readCommands, []string{"inspect", "manifest", list}) {
		var r result
		n := allocatedBy(func() {
			if args[0] == "inspect" {
				r = runCLI(t, fx.env, args...)
			} else {
				r = fx.run(t, args...)
			}
		})
		if r.code != ExitFailure || !strings.Contains(r.stderr, "times its compressed size") {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 refusing a file out of proportion", args, r.code, r.stderr)
		}
		if n > 128<<20 {
			t.Errorf("%v: allocated %d MiB for a manifest list of %d KiB", args, n>>20, len(bomb)>>10)
		}
	}
}

// A Puffin file of about 256 KiB whose LZ4 footer inflates to 64 MiB.
func TestCraftedPuffinFooterBoundedMemory(t *testing.T) {
	p := writeTemp(t, "bomb.puffin", crafted.PuffinLZ4Footer(64<<20))
	for _, args := range [][]string{{"inspect", "puffin", p}} {
		var r result
		n := allocatedBy(func() { r = runCLI(t, nil, args...) })
		if r.code != ExitFailure || !strings.Contains(r.stderr, "out of proportion") {
			t.Errorf("%v: exit %d, stderr %q; want a refusal", args, r.code, r.stderr)
		}
		if n > 64<<20 {
			t.Errorf("%v: allocated %d MiB", args, n>>20)
		}
	}
}
