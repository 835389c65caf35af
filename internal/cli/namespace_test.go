package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The namespace commands on a file catalog (a warehouse directory):
// properties are refused (it stores none), a namespace is a directory,
// and one holding anything at all is not dropped, nor changed.
func TestNamespaceCommandsFileCatalog(t *testing.T) {
	wh := filepath.Join(t.TempDir(), "wh")
	env := map[string]string{"HOME": t.TempDir()}
	run := func(args ...string) result {
		t.Helper()
		return runCLI(t, env, append(args, "--catalog-uri", "file://"+wh)...)
	}
	run("catalog", "init").mustSucceed(t)
	if r := run("namespace", "create", "a", "owner=ann"); r.code != ExitFailure || !strings.Contains(r.stderr, "does not store namespace properties") {
		t.Errorf("create with properties: exit %d: %s", r.code, r.stderr)
	}
	run("namespace", "create", "a").mustSucceed(t)
	run("namespace", "create", "a.b").mustSucceed(t)
	run("namespace", "create", "c").mustSucceed(t)
	if r := run("namespace", "list").mustSucceed(t); r.stdout != "a\nc\n" {
		t.Errorf("namespace list = %q, want a and c", r.stdout)
	}
	if r := run("namespace", "list", "a").mustSucceed(t); r.stdout != "a.b\n" {
		t.Errorf("namespace list a = %q, want a.b", r.stdout)
	}
	r := run("-o", "json", "namespace", "list", "a").mustSucceed(t)
	if got := r.decodeJSON(t); !reflect.DeepEqual(got["namespaces"], []any{"a.b"}) || got["parent"] != "a" {
		t.Errorf("namespace list a as JSON: %s", r.stdout)
	}
	if r := run("namespace", "list", "c").mustSucceed(t); r.stdout != "" || !strings.Contains(r.stderr, "no namespaces in namespace c") {
		t.Errorf("namespace list c: %q, %q", r.stdout, r.stderr)
	}

	// A stray file keeps the namespace: removing the directory would
	// take it.
	if err := os.WriteFile(filepath.Join(wh, "c", ".keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := fileTree(t, wh)
	for _, ns := range []string{"a", "c"} {
		if r := run("namespace", "drop", ns); r.code != ExitFailure || !strings.Contains(r.stderr, "not empty") {
			t.Errorf("drop %s: exit %d: %s", ns, r.code, r.stderr)
		}
	}
	if after := fileTree(t, wh); !reflect.DeepEqual(before, after) {
		t.Error("a refused drop changed the warehouse")
	}
	run("namespace", "drop", "a.b").mustSucceed(t)
	if r := run("-o", "json", "namespace", "drop", "a").mustSucceed(t); r.decodeJSON(t)["dropped"] != true {
		t.Errorf("drop a as JSON: %s", r.stdout)
	}
	if r := run("namespace", "list").mustSucceed(t); r.stdout != "c\n" {
		t.Errorf("namespace list after the drops = %q, want c", r.stdout)
	}
}
