package testenv

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// RESTAuthGate is an HTTP server in front of the REST catalog server that
// checks OAuth2 client credentials and bearer tokens the way a production
// catalog does, and forwards what it lets through to the real server.
//
// Iceberg's REST fixture, the suite's default server, hands a token to any
// client credential and accepts any bearer token, so a test of how icectl
// meets a refusal (a wrong secret, a revoked token, a principal without
// write access) cannot get one from it. Through the gate the refusal is the
// gate's, with the status and body a real server sends, while everything
// else (namespaces, tables, commits, the files on S3) is the real server's.
type RESTAuthGate struct {
	URL string // the gate's base URL, to use in place of the server's

	srv        *httptest.Server
	upstream   *url.URL
	proxy      *httputil.ReverseProxy
	credential string // "id:secret" that may write
	readOnly   string // "id:secret" that may only read; "" for none

	mu     sync.Mutex
	tokens map[string]grant // tokens issued and not revoked
	issued int
}

// grant is what a token the gate issued stands for.
type grant struct {
	upstream string // the server's token for the same grant
	readOnly bool
}

// NewRESTAuthGate starts a gate in front of the REST catalog server at
// upstream that accepts credential ("id:secret") at its token endpoint. The
// server behind it must accept that credential too (weed mini checks it;
// the fixture takes anything). The gate stops when the test ends.
func NewRESTAuthGate(t testing.TB, upstream, credential string) *RESTAuthGate {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatalf("REST catalog URI %q: %v", upstream, err)
	}
	g := &RESTAuthGate{upstream: u, proxy: httputil.NewSingleHostReverseProxy(u), credential: credential, tokens: map[string]grant{}}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	g.URL = g.srv.URL
	t.Cleanup(g.srv.Close)
	return g
}

// AllowReadOnly makes the gate hand tokens to credential too, with which
// only GET and HEAD requests pass: every other request is answered 403, as
// a catalog answers a principal that lacks the privilege.
func (g *RESTAuthGate) AllowReadOnly(credential string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.readOnly = credential
}

// RevokeTokens makes every token issued so far be refused from now on, as
// an expired or revoked token is.
func (g *RESTAuthGate) RevokeTokens() {
	g.mu.Lock()
	defer g.mu.Unlock()
	clear(g.tokens)
}

// Issued returns how many tokens the gate has handed out.
func (g *RESTAuthGate) Issued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.issued
}

func (g *RESTAuthGate) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/oauth/tokens") {
		g.token(w, r)
		return
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	g.mu.Lock()
	gr, known := g.tokens[tok]
	g.mu.Unlock()
	switch {
	case !ok || !known:
		writeRESTError(w, http.StatusUnauthorized, "NotAuthorizedException", "Not authorized: the token is missing, expired or revoked")
	case gr.readOnly && r.Method != http.MethodGet && r.Method != http.MethodHead:
		writeRESTError(w, http.StatusForbidden, "ForbiddenException", "Forbidden: the principal lacks the privilege for this operation")
	default:
		r.Header.Set("Authorization", "Bearer "+gr.upstream)
		g.proxy.ServeHTTP(w, r)
	}
}

// token answers the OAuth2 client-credentials request: a wrong credential
// gets RFC 6749's invalid_client (what the Iceberg REST spec's token
// endpoint answers); the right one is forwarded to the server, so that a
// server that checks tokens (weed mini) knows the token it is later sent.
func (g *RESTAuthGate) token(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	got := form.Get("client_id") + ":" + form.Get("client_secret")
	g.mu.Lock()
	readOnly := g.readOnly != "" && got == g.readOnly
	allowed := got == g.credential || readOnly
	g.mu.Unlock()
	if form.Get("grant_type") != "client_credentials" || !allowed {
		writeOAuthError(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	// The server behind the gate is asked with the writing credential,
	// the only one it knows.
	if readOnly {
		id, secret, _ := strings.Cut(g.credential, ":")
		form.Set("client_id", id)
		form.Set("client_secret", secret)
	}
	resp, err := http.PostForm(g.upstream.JoinPath(r.URL.Path).String(), form)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if resp.StatusCode != http.StatusOK {
		w.WriteHeader(resp.StatusCode)
		w.Write(answer)
		return
	}
	var fields map[string]any
	if err := json.Unmarshal(answer, &fields); err != nil {
		http.Error(w, "the server's token response is not JSON", http.StatusBadGateway)
		return
	}
	upstreamToken, _ := fields["access_token"].(string)
	if upstreamToken == "" {
		http.Error(w, "the server's token response has no access_token", http.StatusBadGateway)
		return
	}
	// The client gets a token of the gate's own, swapped for the server's
	// on the way through: the fixture's tokens only name the client
	// ("client-credentials-token:sub=<id>"), so every grant would be the
	// same string and a revoked token would come back to life.
	tok := "gate-" + nonce()
	fields["access_token"] = tok
	answer, err = json.Marshal(fields)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	g.mu.Lock()
	g.tokens[tok] = grant{upstream: upstreamToken, readOnly: readOnly}
	g.issued++
	g.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Write(answer)
}

func writeRESTError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":%q,"code":%d}}`, msg, typ, status)
}

func writeOAuthError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":%q,"error_description":"client authentication failed"}`, code)
}

func nonce() string {
	b := make([]byte, 12)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}
