package testenv

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// IcebergGoReader names the iceberg-read binary (interop/cmd/iceberg-read,
// built from iceberg-go by scripts/build-iceberg-go-reader) that tests run
// to read icectl's files with an independent implementation.
const IcebergGoReader = "ICECTL_TEST_ICEBERG_GO_READER"

// IcebergGo runs `iceberg-read ARGS...` and returns what it prints on
// stdout; the test fails with the reader's error message when it fails. It
// is skipped (failed under CI) when the reader is not available.
//
// The commands run in one `iceberg-read serve` process per test binary,
// started by the first call: starting the reader costs about 0.2
// CPU-seconds, which over the hundreds of checks of a package was a good
// part of its test time. The answers are the one-shot command's output,
// byte for byte. A TestMain should call CloseIcebergGo after m.Run.
func IcebergGo(ctx context.Context, t testing.TB, args ...string) []byte {
	t.Helper()
	bin := Need(t, IcebergGoReader, "iceberg-go reader (scripts/build-iceberg-go-reader)")
	out, err := icebergGo.run(ctx, bin, args)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return out
}

// TryIcebergGo is IcebergGo returning the reader's error instead of
// failing the test, for a table the test does not know iceberg-go reads
// (it refuses some that the spec allows: docs/interop.md).
func TryIcebergGo(ctx context.Context, t testing.TB, args ...string) ([]byte, error) {
	t.Helper()
	bin := Need(t, IcebergGoReader, "iceberg-go reader (scripts/build-iceberg-go-reader)")
	return icebergGo.run(ctx, bin, args)
}

// CloseIcebergGo ends the reader process IcebergGo started, if any.
func CloseIcebergGo() error { return icebergGo.close() }

// icebergGo is the test binary's reader process: shared, as the binary
// built by Icectl is, because starting one per test is the cost it saves.
var icebergGo readerClient

// readerClient starts `iceberg-read serve` on first use, and again after
// the process ended (a crash fails the requests it held, not later ones).
type readerClient struct {
	mu sync.Mutex
	p  *readerProc
}

func (c *readerClient) run(ctx context.Context, bin string, args []string) ([]byte, error) {
	c.mu.Lock()
	p := c.p
	if p == nil || p.dead() {
		var err error
		if p, err = startReader(bin); err != nil {
			c.mu.Unlock()
			return nil, err
		}
		c.p = p
	}
	c.mu.Unlock()
	return p.call(ctx, args)
}

func (c *readerClient) close() error {
	c.mu.Lock()
	p := c.p
	c.p = nil
	c.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.close()
}

// readerRequest and readerResponse are the lines of iceberg-read serve.
type readerRequest struct {
	ID   uint64   `json:"id"`
	Args []string `json:"args"`
}

type readerResponse struct {
	ID     uint64 `json:"id"`
	Stdout string `json:"stdout"`
	Error  string `json:"error"`
}

// readerProc is one serve process; requests may be in flight at once.
type readerProc struct {
	cmd    *exec.Cmd
	stderr lockedBuffer
	done   chan struct{} // closed when the process's stdout ended

	mu      sync.Mutex // guards the fields below and writes to stdin
	stdin   io.WriteCloser
	nextID  uint64
	pending map[uint64]chan readerResponse
	err     error // why the process ended; set before done is closed
}

func startReader(bin string) (*readerProc, error) {
	p := &readerProc{done: make(chan struct{}), pending: map[uint64]chan readerResponse{}}
	p.cmd = exec.Command(bin, "serve")
	p.cmd.Stderr = &p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("iceberg-read serve: %w", err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("iceberg-read serve: %w", err)
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start iceberg-read serve: %w", err)
	}
	go p.readAnswers(stdout)
	return p, nil
}

// readAnswers hands each answer to its caller until the process's stdout
// ends, then fails the requests still waiting.
func (p *readerProc) readAnswers(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<30)
	var err error
	for sc.Scan() {
		var resp readerResponse
		if err = json.Unmarshal(sc.Bytes(), &resp); err != nil {
			err = fmt.Errorf("iceberg-read serve answered %.200q: %w", sc.Bytes(), err)
			break
		}
		p.mu.Lock()
		ch := p.pending[resp.ID]
		delete(p.pending, resp.ID)
		p.mu.Unlock()
		if ch != nil {
			ch <- resp
		}
	}
	if err == nil {
		err = sc.Err()
	}
	// Wait for the process only now: it closes stdout before Wait may run.
	p.stdin.Close()
	werr := p.cmd.Wait()
	p.mu.Lock()
	p.err = fmt.Errorf("iceberg-read serve ended (%v): %w\n%s", werr, errors.Join(err, io.ErrUnexpectedEOF), p.stderr.String())
	for id, ch := range p.pending {
		close(ch)
		delete(p.pending, id)
	}
	p.mu.Unlock()
	close(p.done)
}

func (p *readerProc) dead() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *readerProc) call(ctx context.Context, args []string) ([]byte, error) {
	what := "iceberg-read " + strings.Join(args, " ")
	ch := make(chan readerResponse, 1)
	p.mu.Lock()
	if p.err != nil {
		err := p.err
		p.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	p.nextID++
	id := p.nextID
	line, err := json.Marshal(readerRequest{ID: id, Args: args})
	if err == nil {
		p.pending[id] = ch
		_, err = p.stdin.Write(append(line, '\n'))
		if err != nil {
			delete(p.pending, id)
		}
	}
	p.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%s: send to iceberg-read serve: %w", what, err)
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			p.mu.Lock()
			err := p.err
			p.mu.Unlock()
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if resp.Error != "" {
			return nil, fmt.Errorf("%s: %s", what, resp.Error)
		}
		return []byte(resp.Stdout), nil
	case <-ctx.Done():
		p.mu.Lock()
		delete(p.pending, id)
		p.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", what, ctx.Err())
	}
}

// close ends the process by closing its stdin, as serve expects, and
// reports how it ended when that was not cleanly.
func (p *readerProc) close() error {
	p.mu.Lock()
	p.stdin.Close()
	p.mu.Unlock()
	<-p.done
	if p.cmd.ProcessState.Success() {
		return nil
	}
	return p.err
}

// lockedBuffer is a bytes.Buffer that exec's copying goroutine may write
// while a failing call reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
