// Package faultproxy is a reverse proxy in front of an object store's HTTP
// endpoint (fake-gcs-server, Azurite) that injects the faults a real store
// or network causes: an error status answered instead of forwarding
// (throttling, a refused request), or the connection cut while the client
// is still sending its request body (before the store sees the request,
// or after it has seen part of the body). It is the network seam of the store
// fault tests, for tests only: the store behind it is real, and so is the
// client (the icectl binary or a FileIO pointed at the proxy's URL).
package faultproxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// Request is what a Rule sees of a request: its method, URL and the first
// bytes of its body (enough for the object name a GCS upload carries in
// its metadata part).
type Request struct {
	Method string
	URL    *url.URL
	Header http.Header
	Head   []byte // up to HeadSize bytes of the body
	Upload bool   // the request sends a body (an upload or part of one)
}

// HeadSize is how much of a body a Rule sees, and how much a cut request
// has sent when its connection is closed.
const HeadSize = 4096

// Fault is a Rule's answer: the zero Fault forwards the request.
type Fault struct {
	Status int  // answer this status (with a JSON and an x-ms-error-code error) instead of forwarding
	Cut    bool // close the connection without an answer, after reading at most HeadSize bytes of the body
	// Truncate forwards the request with half of what the proxy read of
	// its body (at most HeadSize bytes), then drops the store's
	// connection and closes the client's without an answer: a cut the
	// store sees mid-body.
	Truncate bool
}

// Rule decides the fate of a request. Calls are serialised.
type Rule func(Request) Fault

// Proxy forwards to a target endpoint and applies its rule.
type Proxy struct {
	URL string // the proxy's endpoint, scheme://host:port

	target *url.URL
	rp     *httputil.ReverseProxy

	mu       sync.Mutex
	rule     Rule
	requests int
	injected map[string]int // "status 503", "cut" -> count
}

// New starts a proxy to target (scheme://host[:port]; a path is ignored)
// that forwards everything until SetRule; it closes with the test.
func New(t testing.TB, target string) *Proxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = ""
	p := &Proxy{target: u, injected: map[string]int{}}
	srv := httptest.NewUnstartedServer(p)
	p.URL = "http://" + srv.Listener.Addr().String()
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(u) },
		// A GCS resumable upload's later chunks go to the URL its first
		// answer names: through the proxy too.
		// A truncated request's failure is the fault injected, not
		// worth a log line.
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if !errors.Is(err, errTruncated) {
				log.Printf("faultproxy: %s %s: %v", r.Method, r.URL, err)
			}
			w.WriteHeader(http.StatusBadGateway)
		},
		ModifyResponse: func(resp *http.Response) error {
			if loc := resp.Header.Get("Location"); strings.HasPrefix(loc, u.String()) {
				resp.Header.Set("Location", p.URL+strings.TrimPrefix(loc, u.String()))
			}
			return nil
		},
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return p
}

// SetRule replaces the rule; nil forwards everything.
func (p *Proxy) SetRule(r Rule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rule = r
}

// Injected returns how many faults of each kind ("status 429", "cut")
// were injected since the last call, and how many requests arrived.
func (p *Proxy) Injected() (map[string]int, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out, n := p.injected, p.requests
	p.injected, p.requests = map[string]int{}, 0
	return out, n
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	head, err := io.ReadAll(io.LimitReader(r.Body, HeadSize))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := Request{Method: r.Method, URL: r.URL, Header: r.Header, Head: head, Upload: len(head) > 0}
	p.mu.Lock()
	p.requests++
	var f Fault
	if p.rule != nil {
		f = p.rule(req)
	}
	switch {
	case f.Cut:
		p.injected["cut"]++
	case f.Truncate:
		p.injected["truncate"]++
	case f.Status != 0:
		p.injected[fmt.Sprintf("status %d", f.Status)]++
	}
	p.mu.Unlock()
	switch {
	case f.Cut:
		// The store never sees the request; the client sees its
		// connection drop before any answer (net/http closes the
		// connection of a handler aborted so, and logs nothing).
		panic(http.ErrAbortHandler)
	case f.Truncate:
		// The body's reader fails after half the head: the transport
		// drops the connection to the store mid-request (its answer,
		// a 502 from the proxy, is discarded), and the client's is cut.
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(head[:len(head)/2]), errReader{}))
		p.rp.ServeHTTP(discardWriter{http.Header{}}, r)
		panic(http.ErrAbortHandler)
	case f.Status != 0:
		// Google's client reads the JSON error, Azure's SDK the header.
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("x-ms-error-code", "InjectedFault")
		w.WriteHeader(f.Status)
		fmt.Fprintf(w, `{"error":{"code":%d,"message":"faultproxy: injected %d"}}`, f.Status, f.Status)
	default:
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), bufio.NewReader(r.Body)), r.Body}
		p.rp.ServeHTTP(w, r)
	}
}

// errTruncated ends a truncated request's body.
var errTruncated = errors.New("faultproxy: request body truncated")

// errReader fails every read: a request body cut short.
type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errTruncated }

// discardWriter is a ResponseWriter that keeps nothing.
type discardWriter struct{ h http.Header }

func (w discardWriter) Header() http.Header       { return w.h }
func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (discardWriter) WriteHeader(int)             {}
