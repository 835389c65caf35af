package rest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
)

// tokenServer adds an OAuth2 token endpoint to f that checks the client
// credentials and hands out tok-1, tok-2, ... valid for expiresIn seconds.
// Every other route accepts only the newest token.
type tokenServer struct {
	issued  atomic.Int64
	revoked atomic.Bool // when set, the newest token is refused once
}

func (ts *tokenServer) install(t *testing.T, f *fakeServer, path string, expiresIn int) {
	f.handle("POST "+path, func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
			t.Errorf("token request content type %q", ct)
		}
		want := map[string]string{"grant_type": "client_credentials", "client_id": "client", "client_secret": "s3cr3t-client", "scope": "catalog"}
		for k, v := range want {
			if got := r.PostForm.Get(k); got != v {
				writeJSONError(w, 401, "invalid_client", "bad "+k)
				return
			}
		}
		n := ts.issued.Add(1)
		fmt.Fprintf(w, `{"access_token": "tok-%d", "token_type": "bearer", "expires_in": %d}`, n, expiresIn)
	})
}

func (ts *tokenServer) authorized(r *http.Request) bool {
	if r.Header.Get("Authorization") != fmt.Sprintf("Bearer tok-%d", ts.issued.Load()) {
		return false
	}
	return !ts.revoked.CompareAndSwap(true, false)
}

func TestOAuth2FetchRefreshAndRetry(t *testing.T) {
	f := newFakeServer(t)
	ts := &tokenServer{}
	ts.install(t, f, "/v1/oauth/tokens", 3600)
	f.handle("GET /v1/namespaces", func(w http.ResponseWriter, r *http.Request) {
		if !ts.authorized(r) {
			writeJSONError(w, 401, "NotAuthorizedException", "token "+r.Header.Get("Authorization")+" rejected")
			return
		}
		reply(200, `{"namespaces": [["a"]]}`)(w, r)
	})
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	c := f.open(t, map[string]string{PropCredential: "client:s3cr3t-client"}, withClock(clock.Now))
	list := func() {
		t.Helper()
		if _, err := c.ListNamespaces(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	// Open fetched the first token for the config request.
	list()
	list()
	if n := ts.issued.Load(); n != 1 {
		t.Fatalf("%d tokens fetched, want 1 (cached)", n)
	}
	// Before expiry (less the safety margin) the token is refreshed.
	clock.Advance(3600*time.Second - 30*time.Second)
	list()
	if n := ts.issued.Load(); n != 2 {
		t.Fatalf("%d tokens fetched after expiry, want 2", n)
	}
	// A 401 makes the client fetch a token and send the request once more.
	ts.revoked.Store(true)
	list()
	if n := ts.issued.Load(); n != 3 {
		t.Fatalf("%d tokens fetched after a 401, want 3", n)
	}
	// Only once: a server that keeps refusing gets a clear error.
	f.handle("GET /v1/namespaces", func(w http.ResponseWriter, r *http.Request) {
		writeJSONError(w, 401, "NotAuthorizedException", "refused "+r.Header.Get("Authorization"))
	})
	before := ts.issued.Load()
	_, err := c.ListNamespaces(context.Background(), nil)
	if !errors.Is(err, ErrNotAuthorized) {
		t.Fatalf("refused twice: %v, want ErrNotAuthorized", err)
	}
	if ts.issued.Load() != before+1 {
		t.Errorf("%d token fetches for one refused request, want 1", ts.issued.Load()-before)
	}
	if strings.Contains(err.Error(), "tok-") {
		t.Errorf("error %q contains a token", err)
	}
}

func TestOAuth2ServerURIAndScope(t *testing.T) {
	f := newFakeServer(t)
	var got string
	f.handle("POST /auth/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		got = r.PostForm.Encode()
		fmt.Fprint(w, `{"access_token": "abc-token", "token_type": "Bearer"}`)
	})
	f.open(t, map[string]string{PropCredential: "only-secret", PropOAuth2ServerURI: f.srv.URL + "/auth/token", PropScope: "PRINCIPAL_ROLE:ALL"})
	if got != "client_secret=only-secret&grant_type=client_credentials&scope=PRINCIPAL_ROLE%3AALL" {
		t.Errorf("token request form %q", got)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	last := f.reqs[len(f.reqs)-1]
	if last.RawPath != "/v1/config" || last.Header.Get("Authorization") != "Bearer abc-token" {
		t.Errorf("config request %s with authorization %q, want /v1/config with the fetched token", last.RawPath, last.Header.Get("Authorization"))
	}
}

func TestStaticBearerToken(t *testing.T) {
	f := newFakeServer(t)
	f.handle("GET /v1/namespaces", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer static-tok-xyz" {
			writeJSONError(w, 401, "NotAuthorizedException", "bad token: "+r.Header.Get("Authorization"))
			return
		}
		reply(200, `{"namespaces": []}`)(w, r)
	})
	c := f.open(t, map[string]string{PropToken: "static-tok-xyz"})
	if _, err := c.ListNamespaces(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	cfgAuth := f.reqs[0].Header.Get("Authorization")
	f.mu.Unlock()
	if cfgAuth != "Bearer static-tok-xyz" {
		t.Errorf("config request authorization %q", cfgAuth)
	}
	// A static token cannot be refreshed: a 401 is final, sent once.
	f.handle("GET /v1/namespaces", func(w http.ResponseWriter, r *http.Request) {
		writeJSONError(w, 401, "NotAuthorizedException", "expired: "+r.Header.Get("Authorization"))
	})
	n := len(f.requests())
	_, err := c.ListNamespaces(context.Background(), nil)
	if !errors.Is(err, ErrNotAuthorized) || strings.Contains(err.Error(), "static-tok-xyz") {
		t.Errorf("401 with a static token: %v", err)
	}
	if len(f.requests()) != n+1 {
		t.Errorf("%d requests for one 401, want 1", len(f.requests())-n)
	}
}

// TestSecretsNeverInErrors has a hostile server echo every secret it is
// sent in its error messages, on every path that builds an error.
func TestSecretsNeverInErrors(t *testing.T) {
	const secret, token = "sup3r-s3cret-value", "leaky-token-0123456789"
	echo := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			r.ParseForm()
			writeJSONError(w, status, "Echo"+r.Header.Get("Authorization"),
				"you sent "+r.Header.Get("Authorization")+" "+r.PostForm.Encode()+" "+secret+" "+token)
		}
	}
	check := func(t *testing.T, what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		for _, s := range []string{secret, token} {
			if strings.Contains(err.Error(), s) || strings.Contains(fmt.Sprintf("%+v", err), s) {
				t.Errorf("%s: error %q contains a secret", what, err)
			}
		}
	}

	// The token endpoint refuses, echoing the client secret.
	f := newFakeServer(t)
	f.handle("POST /v1/oauth/tokens", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		w.WriteHeader(401)
		fmt.Fprintf(w, `{"error": "invalid_client", "error_description": "secret %s is wrong"}`, r.PostForm.Get("client_secret"))
	})
	_, err := Open(context.Background(), catalog.Config{URI: f.srv.URL, Props: map[string]string{PropCredential: "id:" + secret}})
	check(t, "token refused", err)
	if !errors.Is(err, ErrNotAuthorized) {
		t.Errorf("token refused: %v, want ErrNotAuthorized", err)
	}

	// Every catalog call fails with an echo of the token.
	f = newFakeServer(t)
	f.handle("POST /v1/oauth/tokens", reply(200, `{"access_token": "`+token+`", "token_type": "bearer", "expires_in": 3600}`))
	c := f.open(t, map[string]string{PropCredential: "id:" + secret})
	for _, route := range []string{"GET /v1/namespaces", "POST /v1/namespaces", "GET /v1/namespaces/db/tables",
		"GET /v1/namespaces/db/tables/t", "DELETE /v1/namespaces/db/tables/t", commitRoute} {
		f.handle(route, echo(500))
	}
	ctx := context.Background()
	_, err = c.ListNamespaces(ctx, nil)
	check(t, "list namespaces", err)
	check(t, "create namespace", c.CreateNamespace(ctx, []string{"db"}, nil))
	_, err = c.ListTables(ctx, []string{"db"})
	check(t, "list tables", err)
	_, err = c.LoadTable(ctx, dbT)
	check(t, "load table", err)
	check(t, "drop table", c.DropTable(ctx, dbT))
	tbl, reqs, ups := commitArgs()
	_, err = c.CommitTable(ctx, tbl, reqs, ups)
	check(t, "commit", err)
	if !errors.Is(err, catalog.ErrCommitStateUnknown) {
		t.Errorf("commit 500: %v, want ErrCommitStateUnknown", err)
	}
	if !strings.Contains(err.Error(), "[REDACTED]") {
		t.Errorf("commit error %q: want the echoed secrets shown as [REDACTED]", err)
	}
}
