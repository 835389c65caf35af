package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// serveRequest is one line of serve's input: the arguments of one
// iceberg-read command line, and an id the answer repeats.
type serveRequest struct {
	ID   uint64   `json:"id"`
	Args []string `json:"args"`
}

// serveResponse is one line of serve's output. Stdout is byte for byte
// what `iceberg-read ARGS...` prints on stdout; Error, when not empty, is
// what it prints after "iceberg-read: " on stderr before exiting 1.
type serveResponse struct {
	ID     uint64 `json:"id"`
	Stdout string `json:"stdout,omitempty"`
	Error  string `json:"error,omitempty"`
}

// maxRequest bounds one request line; arguments are paths and flags.
const maxRequest = 1 << 20

// serve answers requests, one JSON line each on in, with one JSON line each
// on out, until in ends. A test binary keeps one serve process for all its
// reads: starting the reader costs about 0.2 CPU-seconds (iceberg-go's
// dependencies initialise), which over hundreds of checks was a good part
// of the test suite's time. Requests run concurrently, as separate
// processes would; answers come in the order they finish, matched by id.
func serve(ctx context.Context, in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), maxRequest)
	var (
		mu   sync.Mutex // serialises whole lines on out
		werr error
		wg   sync.WaitGroup
	)
	enc := json.NewEncoder(out)
	answer := func(resp serveResponse) {
		mu.Lock()
		defer mu.Unlock()
		if werr == nil {
			werr = enc.Encode(resp)
		}
	}
	for sc.Scan() {
		var req serveRequest
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			wg.Wait()
			return fmt.Errorf("serve: request %q: %w", sc.Bytes(), err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			answer(serveOne(ctx, req))
		}()
	}
	wg.Wait()
	if err := sc.Err(); err != nil {
		return fmt.Errorf("serve: read requests: %w", err)
	}
	if werr != nil {
		return fmt.Errorf("serve: write answers: %w", werr)
	}
	return nil
}

// serveOne runs one request as run would for a process, turning a panic
// into an error answer so that one bad read does not end the others.
func serveOne(ctx context.Context, req serveRequest) (resp serveResponse) {
	resp.ID = req.ID
	defer func() {
		if p := recover(); p != nil {
			resp.Stdout, resp.Error = "", fmt.Sprintf("panic: %v", p)
		}
	}()
	var buf bytes.Buffer
	if err := run(ctx, req.Args, &buf); err != nil {
		resp.Error = err.Error()
		return resp
	}
	resp.Stdout = buf.String()
	return resp
}
