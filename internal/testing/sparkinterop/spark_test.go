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
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/icectl/icectl/internal/testing/testenv"
)

// spark is the test binary's Spark sessions.
var spark = newSparkPool(sparkSessions)

// sparkSessions is how many Spark sessions serve the package's requests,
// each in a process of its own (iceberg_spark.py serve, one JVM), started
// by the first request it serves (about 10 s). A session answers one
// request at a time, and most of a request on these small tables is
// planning on one thread: with one session the package's tests queued
// behind each other's requests for most of its time, and with two a
// request waits only while both are busy (docs/bench/tests.md,
// 2026-12-07). A table's copies are still used one at a time (the corpus
// link's lock), whichever session reads them.
const sparkSessions = 2

// sparkPool hands each request to the first free session: a session
// registers a table's catalog on the first request that names it, and
// never caches a table (iceberg_spark.py), so what one session wrote
// another reads. The first free one, not any: while the tests send one
// request at a time only the first session starts, and the second's JVM
// compiles only what the overlap runs.
type sparkPool struct {
	sessions []*sparkClient
	slots    chan struct{} // one per session; held while a request is sent
	mu       sync.Mutex
	busy     []bool
}

func newSparkPool(n int) *sparkPool {
	p := &sparkPool{slots: make(chan struct{}, n), busy: make([]bool, n)}
	for i := range n {
		p.sessions = append(p.sessions, &sparkClient{n: i + 1})
	}
	return p
}

// call sends request cmd with args to a free session (waiting for one)
// and decodes the result into result. An error the Python side reports (a
// failed Spark statement, say) is returned; the session lives on.
func (p *sparkPool) call(ctx context.Context, t testing.TB, cmd string, args, result any) error {
	t.Helper()
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		t.Fatalf("spark %s: waiting for a free session: %v", cmd, ctx.Err())
	}
	defer func() { <-p.slots }()
	p.mu.Lock()
	i := slices.Index(p.busy, false) // there is one: this request holds a slot
	p.busy[i] = true
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.busy[i] = false
		p.mu.Unlock()
	}()
	return p.sessions[i].call(ctx, t, cmd, args, result)
}

// must is call for requests that must succeed.
func (p *sparkPool) must(ctx context.Context, t testing.TB, cmd string, args, result any) {
	t.Helper()
	if err := p.call(ctx, t, cmd, args, result); err != nil {
		t.Fatalf("%v\n(Spark's log: %s)", err, p.log())
	}
}

// log is the end of every started session's log, shown when a request
// failed.
func (p *sparkPool) log() string {
	var b strings.Builder
	for i, s := range p.sessions {
		if s.stderr != nil {
			fmt.Fprintf(&b, "\n--- session %d:\n%s", i+1, s.stderr)
		}
	}
	return b.String()
}

// close ends every session's process.
func (p *sparkPool) close() error {
	var errs []error
	for _, s := range p.sessions {
		errs = append(errs, s.close())
	}
	return errors.Join(errs...)
}

// sparkClient is one session's process. It sends one request at a time:
// the Python side answers in order, with one Spark session.
type sparkClient struct {
	n      int // the session's number, from 1
	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Scanner
	stderr *tailBuffer
	nextID uint64
	err    error // the process is unusable: every later call fails with it
	times  *requestTimes
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
	if c.times != nil {
		defer c.times.record(c.n, t.Name(), cmd, time.Now(), c.cmd.Process.Pid, processCPU(c.cmd.Process.Pid))
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

func (c *sparkClient) start(dir string) error {
	c.stderr = &tailBuffer{max: 64 << 10}
	if f := os.Getenv(timesEnv); f != "" {
		c.times = &requestTimes{path: f}
	}
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

// timesEnv names a file to which each Spark request's time is appended,
// one line "session<TAB>test<TAB>request<TAB>seconds<TAB>cpu": where the
// package's time goes (docs/bench/tests.md). The time counts from when
// the request holds a session, so waiting for a free one is not in it;
// cpu is the CPU seconds the session's processes (Python and its JVM)
// spent on the request, the figure that compares on a loaded machine.
const timesEnv = "ICECTL_TEST_SPARK_TIMES"

type requestTimes struct{ path string }

func (r *requestTimes) record(session int, test, cmd string, start time.Time, pid int, cpuBefore float64) {
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return // only a measurement
	}
	fmt.Fprintf(f, "%d\t%s\t%s\t%.3f\t%.2f\n", session, test, cmd, time.Since(start).Seconds(), processCPU(pid)-cpuBefore)
	f.Close()
}

// processCPU is the user and system CPU seconds of process pid and its
// children (the session's JVM), from /proc; 0 where /proc has none.
func processCPU(pid int) float64 {
	ticks := func(stat string) (ppid, cpu int64) {
		// The fields after the command name, which may hold spaces.
		f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
		if len(f) < 13 {
			return -1, 0
		}
		ppid, _ = strconv.ParseInt(f[1], 10, 64)
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		return ppid, u + s
	}
	var total int64
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		n, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		if ppid, cpu := ticks(string(b)); n == pid || ppid == int64(pid) {
			total += cpu
		}
	}
	return float64(total) / 100 // USER_HZ
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
