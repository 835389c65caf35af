package rest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
)

// tableJSON is a minimal valid v2 table metadata document.
const tableJSON = `{
  "format-version": 2,
  "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
  "location": "mem://wh/db/t",
  "last-sequence-number": 0,
  "last-updated-ms": 1700000000000,
  "last-column-id": 1,
  "current-schema-id": 0,
  "schemas": [{"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "x", "required": true, "type": "long"}]}],
  "default-spec-id": 0,
  "partition-specs": [{"spec-id": 0, "fields": []}],
  "last-partition-id": 999,
  "default-sort-order-id": 0,
  "sort-orders": [{"order-id": 0, "fields": []}],
  "properties": {},
  "current-snapshot-id": -1,
  "snapshots": [],
  "snapshot-log": [],
  "metadata-log": []
}`

// withLocation returns tableJSON with another table location.
func withLocation(loc string) string {
	return strings.Replace(tableJSON, "mem://wh/db/t", loc, 1)
}

func loadResult(location string, extra string) string {
	s := `{"metadata-location": "` + location + `/metadata/00000-a.metadata.json", "metadata": ` + withLocation(location)
	if extra != "" {
		s += ", " + extra
	}
	return s + "}"
}

// fakeServer is an httptest REST server whose routes the test sets. It
// records every request.
type fakeServer struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	reqs   []recorded
	config string // body of GET /v1/config
	routes map[string]http.HandlerFunc
}

type recorded struct {
	Method, RawPath, Query string
	Header                 http.Header
	Body                   string
}

func newFakeServer(t *testing.T) *fakeServer {
	f := &fakeServer{t: t, config: `{"defaults": {}, "overrides": {}}`, routes: map[string]http.HandlerFunc{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// handle sets the handler of "METHOD /escaped/path".
func (f *fakeServer) handle(route string, h http.HandlerFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.routes[route] = h
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	f.mu.Lock()
	f.reqs = append(f.reqs, recorded{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), string(body)})
	h := f.routes[r.Method+" "+r.URL.EscapedPath()]
	cfg := f.config
	f.mu.Unlock()
	switch {
	case h != nil:
		h(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/config":
		io.WriteString(w, cfg)
	default:
		writeJSONError(w, http.StatusNotFound, "NotFoundException", "no route "+r.Method+" "+r.URL.EscapedPath())
	}
}

// requests returns the recorded requests other than GET /v1/config.
func (f *fakeServer) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []recorded
	for _, r := range f.reqs {
		if r.RawPath != "/v1/config" {
			out = append(out, r)
		}
	}
	return out
}

func (f *fakeServer) open(t *testing.T, props map[string]string, opts ...Option) *Catalog {
	t.Helper()
	c, err := Open(context.Background(), catalog.Config{Name: "fake", URI: f.srv.URL, Props: props}, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func writeJSONError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": status}})
}

func reply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// fakeClock is a settable clock for token expiry.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func withClock(now func() time.Time) Option {
	return func(o *options) { o.now = now }
}

var dbT = catalog.Ident{Namespace: []string{"db"}, Name: "t"}
