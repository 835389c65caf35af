package testenv

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

var icectlBuild struct {
	once sync.Once
	bin  string
	out  []byte
	err  error
}

// Icectl builds cmd/icectl once per test binary and returns its path, for
// tests that run the CLI as a process (to kill it, say).
func Icectl(t testing.TB) string {
	t.Helper()
	icectlBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "icectl-test-bin-")
		if err != nil {
			icectlBuild.err = err
			return
		}
		icectlBuild.bin = filepath.Join(dir, "icectl")
		icectlBuild.out, icectlBuild.err = exec.Command("go", "build", "-o", icectlBuild.bin, "github.com/icectl/icectl/cmd/icectl").CombinedOutput()
	})
	if icectlBuild.err != nil {
		t.Fatalf("go build ./cmd/icectl: %v\n%s", icectlBuild.err, icectlBuild.out)
	}
	return icectlBuild.bin
}

// KillAfter starts cmd and SIGKILLs it after delay. finished reports that
// the process exited before the kill landed; it must then have succeeded.
func KillAfter(t testing.TB, cmd *exec.Cmd, delay time.Duration) (finished bool) {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s exited before the kill: %v\n%s", cmd, err, out.String())
		}
		return true
	case <-time.After(delay):
	}
	// The process may finish between the timer and the kill: then the run
	// simply completed.
	if err := cmd.Process.Signal(syscall.SIGKILL); errors.Is(err, os.ErrProcessDone) {
		if err := <-done; err != nil {
			t.Fatalf("%s failed before the kill: %v\n%s", cmd, err, out.String())
		}
		return true
	} else if err != nil {
		t.Fatal(err)
	}
	<-done
	return false
}

// Calibrate runs cmd to the end and returns how long it took, so that a
// kill test can spread its kills over a whole run.
func Calibrate(t testing.TB, cmd *exec.Cmd) time.Duration {
	t.Helper()
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("calibration run %s: %v\n%s", cmd, err, out)
	}
	return time.Since(start)
}
