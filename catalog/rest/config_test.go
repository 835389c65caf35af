package rest

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
)

func TestConfigMergeOrder(t *testing.T) {
	f := newFakeServer(t)
	f.config = `{"defaults": {"a": "default", "b": "default", "c": "default"},
	             "overrides": {"c": "override", "prefix": "cat/one"}}`
	f.handle("POST /v1/oauth/tokens", reply(200, `{"access_token": "tok-123456", "token_type": "bearer"}`))
	c := f.open(t, map[string]string{"b": "client", "c": "client", "credential": "id:secret-value"})

	got := c.Properties()
	for k, want := range map[string]string{"a": "default", "b": "client", "c": "override", "prefix": "cat/one"} {
		if got[k] != want {
			t.Errorf("merged property %s = %q, want %q", k, got[k], want)
		}
	}
	if _, ok := got["credential"]; ok {
		t.Error("Properties exposes the credential")
	}
	// The prefix from the overrides is used in every path.
	f.handle("GET /v1/cat/one/namespaces", reply(200, `{"namespaces": [["x"]]}`))
	if _, err := c.ListNamespaces(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

func TestConfigWarehouseQuery(t *testing.T) {
	f := newFakeServer(t)
	c, err := Open(context.Background(), catalog.Config{URI: f.srv.URL + "/", Warehouse: "s3://wh/a b"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	f.mu.Lock()
	first := f.reqs[0]
	f.mu.Unlock()
	if first.RawPath != "/v1/config" || first.Query != "warehouse=s3%3A%2F%2Fwh%2Fa+b" {
		t.Errorf("config request %s?%s, want /v1/config?warehouse=s3%%3A%%2F%%2Fwh%%2Fa+b", first.RawPath, first.Query)
	}
	if c.Name() != "rest" {
		t.Errorf("default name %q, want rest", c.Name())
	}
}

func TestConfigErrors(t *testing.T) {
	f := newFakeServer(t)
	f.handle("GET /v1/config", reply(403, `{"error": {"message": "go away", "type": "ForbiddenException", "code": 403}}`))
	_, err := Open(context.Background(), catalog.Config{URI: f.srv.URL})
	if !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), "go away") {
		t.Errorf("Open on 403 = %v, want ErrForbidden with the server message", err)
	}
	for _, uri := range []string{"", "ftp://x", "http://", "sqlite:///x.db"} {
		if _, err := Open(context.Background(), catalog.Config{URI: uri}); err == nil {
			t.Errorf("Open(%q) succeeded", uri)
		}
	}
	_, err = Open(context.Background(), catalog.Config{URI: f.srv.URL, Props: map[string]string{PropSocketTimeoutMS: "-1"}})
	if err == nil {
		t.Error("negative timeout accepted")
	}
}

func TestNamespaceEncoding(t *testing.T) {
	f := newFakeServer(t)
	c := f.open(t, nil)
	f.handle("GET /v1/namespaces/a%1Fb%20c%2Fd/tables", reply(200, `{"identifiers": [{"namespace": ["a", "b c/d"], "name": "t"}]}`))
	ids, err := c.ListTables(context.Background(), []string{"a", "b c/d"})
	if err != nil {
		t.Fatal(err)
	}
	want := []catalog.Ident{{Namespace: []string{"a", "b c/d"}, Name: "t"}}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("ListTables = %v, want %v", ids, want)
	}
	if _, err := c.ListTables(context.Background(), nil); err == nil {
		t.Error("ListTables of the empty namespace succeeded")
	}
}

func TestNamespaceSeparatorFromConfig(t *testing.T) {
	f := newFakeServer(t)
	f.config = `{"defaults": {"namespace-separator": "%2E"}, "overrides": {}}`
	c := f.open(t, nil)
	f.handle("GET /v1/namespaces/a%2Eb/tables/t", reply(200, loadResult("mem://wh/a/b/t", "")))
	if _, err := c.LoadTable(context.Background(), catalog.Ident{Namespace: []string{"a", "b"}, Name: "t"}); err != nil {
		t.Fatal(err)
	}
	f.handle("GET /v1/namespaces", func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Query().Get("parent"); p != "a.b" {
			t.Errorf("parent = %q, want a.b", p)
		}
		reply(200, `{"namespaces": []}`)(w, r)
	})
	if _, err := c.ListNamespaces(context.Background(), []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
}

func TestListNamespacesPagination(t *testing.T) {
	f := newFakeServer(t)
	f.config = `{"defaults": {"rest-page-size": "2"}, "overrides": {}}`
	c := f.open(t, nil)
	pages := map[string]string{
		"":   `{"namespaces": [["top", "mid", "a"], ["top", "mid", "b"]], "next-page-token": "p2"}`,
		"p2": `{"namespaces": [["top", "mid", "c"], ["top", "mid", "d"]], "next-page-token": "p3"}`,
		"p3": `{"namespaces": [["top", "mid", "e"], ["top", "mid", "x", "deeper"], ["other", "mid", "y"]], "next-page-token": null}`,
	}
	f.handle("GET /v1/namespaces", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("pageSize") != "2" {
			t.Errorf("pageSize = %q, want 2", r.URL.Query().Get("pageSize"))
		}
		if p := r.URL.Query().Get("parent"); p != "top\x1fmid" {
			t.Errorf("parent = %q, want top\\x1fmid", p)
		}
		reply(200, pages[r.URL.Query().Get("pageToken")])(w, r)
	})
	got, err := c.ListNamespaces(context.Background(), []string{"top", "mid"})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"top", "mid", "a"}, {"top", "mid", "b"}, {"top", "mid", "c"}, {"top", "mid", "d"}, {"top", "mid", "e"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ListNamespaces = %v, want %v", got, want)
	}
	if n := len(f.requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}

	// A server that hands out the same token again is an error, not a loop.
	f.handle("GET /v1/namespaces", reply(200, `{"namespaces": [["a"]], "next-page-token": "same"}`))
	if _, err := c.ListNamespaces(context.Background(), nil); !errors.Is(err, ErrUnexpected) {
		t.Errorf("repeated page token: %v, want ErrUnexpected", err)
	}
}

func TestCreateNamespace(t *testing.T) {
	f := newFakeServer(t)
	c := f.open(t, nil)
	f.handle("POST /v1/namespaces", reply(200, `{"namespace": ["a", "b"], "properties": {"k": "v"}}`))
	if err := c.CreateNamespace(context.Background(), []string{"a", "b"}, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	got := f.requests()[0].Body
	if got != `{"namespace":["a","b"],"properties":{"k":"v"}}` {
		t.Errorf("create namespace body %s", got)
	}
	f.handle("POST /v1/namespaces", reply(409, `{"error": {"message": "exists", "type": "AlreadyExistsException", "code": 409}}`))
	if err := c.CreateNamespace(context.Background(), []string{"a"}, nil); !errors.Is(err, catalog.ErrAlreadyExists) {
		t.Errorf("409: %v, want ErrAlreadyExists", err)
	}
	n := len(f.requests())
	for _, bad := range [][]string{nil, {"a", ""}, {"bad.level"}} {
		if err := c.CreateNamespace(context.Background(), bad, nil); err == nil {
			t.Errorf("CreateNamespace(%q) succeeded", bad)
		}
	}
	if len(f.requests()) != n {
		t.Error("an invalid namespace was sent to the server")
	}
	f.handle("GET /v1/namespaces/nope/tables", reply(404, `{"error": {"message": "no ns", "type": "NoSuchNamespaceException", "code": 404}}`))
	if _, err := c.ListTables(context.Background(), []string{"nope"}); !errors.Is(err, catalog.ErrNoSuchNamespace) {
		t.Errorf("404: %v, want ErrNoSuchNamespace", err)
	}
}
