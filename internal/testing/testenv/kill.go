package testenv

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

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
