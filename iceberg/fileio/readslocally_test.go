package fileio_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/fileio/faultio"
)

func TestReadsLocally(t *testing.T) {
	ctx := context.Background()
	local := fileio.NewLocal()
	path := filepath.Join(t.TempDir(), "f")
	if err := fileio.WriteFile(ctx, local, path, []byte("x")); err != nil {
		t.Fatal(err)
	}
	mem := fileio.NewMem()
	if err := fileio.WriteFile(ctx, mem, "mem://b/f", []byte("x")); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		fio  fileio.FileIO
		path string
		want bool
	}{
		"local": {local, path, true},
		"mem":   {mem, "mem://b/f", true},
		// A wrapper may add cost per call: treated as remote.
		"wrapped": {faultio.New(local), path, false},
	} {
		f, err := tc.fio.Open(ctx, tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fileio.ReadsLocally(f); got != tc.want {
			t.Errorf("%s: ReadsLocally = %v, want %v", name, got, tc.want)
		}
		f.Close()
	}
}
