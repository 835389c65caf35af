package sparkinterop

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/icectl/icectl/internal/testing/testenv"
)

// spark is the test binary's Spark process (iceberg_spark.py serve),
// started by the first call: starting Spark takes about 10 s.
var spark sparkClient

// sparkClient sends one request at a time: the Python side answers in
// order, with one Spark session.
type sparkClient struct {
	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Scanner
	stderr *tailBuffer
	nextID uint64
	err    error // the process is unusable: every later call fails with it
}

// call sends request cmd with args and decodes the result into result.
// An error the Python side reports (a failed Spark statement, say) is
// returned; the process lives on.
func (c *sparkClient) call(ctx context.Context, t testing.TB, cmd string, args, result any) error {
	t.Helper()
	dir := testenv.Need(t, testenv.Spark, "PySpark and Iceberg's Spark runtime (scripts/install-spark)")
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		t.Fatalf("spark %s: %v", cmd, c.err)
	}
	if c.cmd == nil {
		if err := c.start(dir); err != nil {
			c.err = err
			t.Fatalf("spark %s: %v", cmd, err)
		}
	}
	c.nextID++
	id := c.nextID
	line, err := json.Marshal(map[string]any{"id": id, "cmd": cmd, "args": args})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.stdin.Write(append(line, '\n')); err != nil {
		c.err = fmt.Errorf("send to iceberg_spark.py: %w\n%s", err, c.stderr)
		t.Fatalf("spark %s: %v", cmd, c.err)
	}
	// Spark cannot be interrupted mid-request; a test's deadline ends the
	// process instead.
	type answer struct {
		ID     uint64          `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  string          `json:"error"`
	}
	done := make(chan error, 1)
	var a answer
	go func() {
		if !c.out.Scan() {
			done <- errors.Join(io.ErrUnexpectedEOF, c.out.Err())
			return
		}
		done <- json.Unmarshal(c.out.Bytes(), &a)
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
		c.cmd.Process.Kill()
		<-done
		err = ctx.Err()
	}
	if err == nil && a.ID != id {
		err = fmt.Errorf("answer %d to request %d", a.ID, id)
	}
	if err != nil {
		c.err = fmt.Errorf("iceberg_spark.py: %w\n%s", err, c.stderr)
		t.Fatalf("spark %s: %v", cmd, c.err)
	}
	if a.Error != "" {
		return fmt.Errorf("spark %s: %s", cmd, a.Error)
	}
	if err := json.Unmarshal(a.Result, result); err != nil {
		t.Fatalf("spark %s: decode %s: %v", cmd, a.Result, err)
	}
	return nil
}

// must is call for requests that must succeed.
func (c *sparkClient) must(ctx context.Context, t testing.TB, cmd string, args, result any) {
	t.Helper()
	if err := c.call(ctx, t, cmd, args, result); err != nil {
		t.Fatalf("%v\n(Spark's log: %s)", err, c.stderr)
	}
}

func (c *sparkClient) start(dir string) error {
	c.stderr = &tailBuffer{max: 64 << 10}
	python := filepath.Join(dir, "bin", "python")
	c.cmd = exec.Command(python, "iceberg_spark.py", "--spark", dir, "serve")
	c.cmd.Stderr = c.stderr
	var err error
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		return err
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := c.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", python, err)
	}
	c.out = bufio.NewScanner(stdout)
	c.out.Buffer(make([]byte, 0, 1<<20), 64<<20)
	return nil
}

// close ends the process (closing its stdin ends serve) and reports how it
// ended when that was not cleanly.
func (c *sparkClient) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return nil
	}
	c.stdin.Close()
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	var err error
	select {
	case err = <-exited:
	case <-time.After(time.Minute):
		c.cmd.Process.Kill()
		err = <-exited
	}
	c.cmd = nil
	if err != nil && c.err == nil {
		return fmt.Errorf("iceberg_spark.py ended: %v\n%s", err, c.stderr)
	}
	return nil
}

// tailBuffer keeps the last max bytes written to it: Spark's log, shown
// when a call fails.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// lockFile holds an exclusive flock on path until the test ends: a
// table's link is pointed at one checkout at a time, across processes.
func lockFile(t testing.TB, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("lock %s: %v", path, err)
	}
	t.Cleanup(func() { f.Close() })
}
