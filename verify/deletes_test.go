package verify

import (
	"context"
	"errors"
	"testing"

	"github.com/icectl/icectl/iceberg/fileio"
)

// failingOpen fails every Open of one path with an error other than
// not-found.
type failingOpen struct {
	fileio.FileIO
	path string
}

var errBroken = errors.New("storage unavailable")

func (f failingOpen) Open(ctx context.Context, path string) (fileio.File, error) {
	if path == f.path {
		return nil, errBroken
	}
	return f.FileIO.Open(ctx, path)
}

func TestMissingFiles(t *testing.T) {
	ctx := context.Background()
	mem := fileio.NewMem()
	for _, p := range []string{"mem://t/a", "mem://t/c"} {
		w, err := mem.Create(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	paths := []string{"mem://t/a", "mem://t/b", "mem://t/c", "mem://t/d"}
	missing, err := missingFiles(ctx, mem, paths, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) != 2 || !missing["mem://t/b"] || !missing["mem://t/d"] {
		t.Errorf("missing = %v, want b and d", missing)
	}
	// Any other error is not taken for a missing file.
	if _, err := missingFiles(ctx, failingOpen{mem, "mem://t/c"}, paths, 2); !errors.Is(err, errBroken) {
		t.Errorf("err = %v, want the storage error", err)
	}
}
