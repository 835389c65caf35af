package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestServe sends serve the requests of several one-shot command lines,
// reads and failing ones, and checks that each answer holds exactly what
// the one-shot command prints: the same stdout bytes, or the same error.
func TestServe(t *testing.T) {
	path, b := writeDV(t)
	off, length := strconv.FormatInt(b.Offset, 10), strconv.FormatInt(b.Length, 10)
	cmds := [][]string{
		{"dv", path, "--offset", off, "--length", length},
		{"puffin", path},
		{"dv", path, "--offset", off, "--length", length, "--referenced-data-file", "file:/d/other.parquet"},
		{"nope"},
		{"serve"},
		nil,
		{"manifest-list", path},
	}
	var in bytes.Buffer
	for i, args := range cmds {
		line, err := json.Marshal(serveRequest{ID: uint64(100 + i), Args: args})
		if err != nil {
			t.Fatal(err)
		}
		in.Write(append(line, '\n'))
	}
	var out bytes.Buffer
	if err := serve(context.Background(), &in, &out); err != nil {
		t.Fatalf("serve: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(cmds) {
		t.Fatalf("serve answered %d lines to %d requests:\n%s", len(lines), len(cmds), out.String())
	}
	seen := map[uint64]bool{}
	for _, line := range lines {
		var resp serveResponse
		if err := json.Unmarshal([]byte(line), &resp); err != nil {
			t.Fatalf("answer %q: %v", line, err)
		}
		i := int(resp.ID) - 100
		if i < 0 || i >= len(cmds) || seen[resp.ID] {
			t.Fatalf("answer with id %d, unknown or repeated", resp.ID)
		}
		seen[resp.ID] = true
		var want bytes.Buffer
		wantErr := ""
		if err := run(context.Background(), cmds[i], &want); err != nil {
			wantErr = err.Error()
			want.Reset()
		}
		if resp.Stdout != want.String() || resp.Error != wantErr {
			t.Errorf("serve %q:\nstdout %q\nerror  %q\none-shot:\nstdout %q\nerror  %q", cmds[i], resp.Stdout, resp.Error, want.String(), wantErr)
		}
		// The first two are good reads, the others bad command lines.
		if ok := resp.Error == ""; ok != (i < 2) {
			t.Errorf("serve %q: error %q", cmds[i], resp.Error)
		}
	}
	// A second serve answers as the first.
	var again bytes.Buffer
	in.Reset()
	fmt.Fprintf(&in, "{\"id\": 1, \"args\": [\"puffin\", %q]}\n", path)
	if err := serve(context.Background(), &in, &again); err != nil {
		t.Fatal(err)
	}
	var resp serveResponse
	if err := json.Unmarshal(again.Bytes(), &resp); err != nil || resp.Error != "" || !strings.Contains(resp.Stdout, "deletion-vector-v1") {
		t.Errorf("puffin through serve: %+v (%v)", resp, err)
	}
}

// TestServeBadRequest: a line that is not a request ends serve with an
// error naming it, after answering the requests before it.
func TestServeBadRequest(t *testing.T) {
	in := strings.NewReader("{\"id\": 1, \"args\": [\"nope\"]}\nnot json\n")
	var out bytes.Buffer
	err := serve(context.Background(), in, &out)
	if err == nil || !strings.Contains(err.Error(), "not json") {
		t.Errorf("serve of a bad line: %v, want an error naming it", err)
	}
	var resp serveResponse
	if jerr := json.Unmarshal(out.Bytes(), &resp); jerr != nil || resp.ID != 1 || resp.Error == "" {
		t.Errorf("answer before the bad line: %q (%v)", out.String(), jerr)
	}
}
