package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var icectlBuild struct {
	sync.Once
	dir, bin string
	out      []byte
	err      error
}

// Icectl returns the icectl binary (./cmd/icectl), built once per test
// process, for tests that run the CLI as a process (to kill it, say).
// A TestMain calling it should call RemoveIcectl after m.Run.
func Icectl(t testing.TB) string {
	t.Helper()
	b := &icectlBuild
	b.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "icectl-bin-"); b.err != nil {
			return
		}
		b.bin = filepath.Join(b.dir, "icectl")
		b.out, b.err = exec.Command("go", "build", "-o", b.bin, "github.com/icectl/icectl/cmd/icectl").CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("go build ./cmd/icectl: %v\n%s", b.err, b.out)
	}
	return b.bin
}

// RemoveIcectl removes the binary Icectl built, if any.
func RemoveIcectl() {
	if icectlBuild.dir != "" {
		os.RemoveAll(icectlBuild.dir)
	}
}
