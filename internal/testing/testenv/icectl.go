package testenv

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// IcectlBin names a prebuilt icectl binary (./cmd/icectl) that Icectl
// returns instead of building one: scripts/test builds it once for the whole
// run, so that each package's test binary does not link its own copy.
const IcectlBin = "ICECTL_TEST_ICECTL_BIN"

var icectlBuild struct {
	sync.Once
	dir, bin string
	out      []byte
	err      error
}

// Icectl returns the icectl binary (./cmd/icectl) for tests that run the CLI
// as a process (to kill it, say): $ICECTL_TEST_ICECTL_BIN when set, else one
// built once per test process. A TestMain calling it should call
// RemoveIcectl after m.Run.
func Icectl(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv(IcectlBin); bin != "" {
		return bin
	}
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

// Run runs cmd (the icectl binary, say) and returns its stdout, stderr and
// exit code; a command that cannot start fails tb.
func Run(tb testing.TB, cmd *exec.Cmd) (stdout, stderr string, code int) {
	tb.Helper()
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		tb.Fatalf("run %s: %v", cmd.Path, err)
	}
	return out.String(), errOut.String(), code
}
