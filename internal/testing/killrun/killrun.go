// Package killrun runs a command and kills it with SIGKILL partway, for
// the crash tests of the verbs (a run killed at any point leaves the table
// as before or as after). Tests only.
package killrun

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Run starts cmd with its output captured and kills it with SIGKILL once
// until returns, unless it exited first. It reports whether cmd ran to
// the end and what it printed; a cmd that fails before the kill fails the
// test.
func Run(t testing.TB, cmd *exec.Cmd, until func()) (finished bool, out string) {
	t.Helper()
	var buf syncBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stop := make(chan struct{})
	go func() { until(); close(stop) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s exited before the kill: %v\n%s", cmd.Path, err, buf.String())
		}
		return true, buf.String()
	case <-stop:
	}
	// The process may finish between until and the kill; then the run
	// simply completed.
	if err := cmd.Process.Signal(syscall.SIGKILL); errors.Is(err, os.ErrProcessDone) {
		if err := <-done; err != nil {
			t.Fatalf("%s failed before the kill: %v\n%s", cmd.Path, err, buf.String())
		}
		return true, buf.String()
	} else if err != nil {
		t.Fatal(err)
	}
	err := <-done
	return err == nil, buf.String()
}

// After is an until for Run: the delay.
func After(d time.Duration) func() { return func() { time.Sleep(d) } }

// syncBuffer is a bytes.Buffer the command's two output pipes write to at
// once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
