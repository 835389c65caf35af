package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/icectl/icectl/internal/testing/testenv"
)

// result is what one icectl run printed and returned.
type result struct {
	stdout, stderr string
	code           int
}

// runCLI runs icectl in-process with an empty environment plus env.
func runCLI(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	return runCLIContext(t, context.Background(), env, args...)
}

func runCLIContext(t *testing.T, ctx context.Context, env map[string]string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &Factory{Out: &out, ErrOut: &errOut, Getenv: func(k string) string { return env[k] }, Output: outputText}
	code := Run(ctx, f, args)
	r := result{stdout: out.String(), stderr: errOut.String(), code: code}
	// The error contract: exactly one line on stderr. (stdout may hold
	// what a streaming command printed before it failed.)
	if code != ExitOK && (!strings.HasPrefix(r.stderr, "icectl: ") || strings.Count(r.stderr, "\n") != 1) {
		t.Errorf("icectl %v: stderr is not one \"icectl: \" line: %q", args, r.stderr)
	}
	return r
}

// mustSucceed fails the test unless the run exited 0.
func (r result) mustSucceed(t *testing.T) result {
	t.Helper()
	if r.code != ExitOK {
		t.Fatalf("exit %d, stderr: %s", r.code, r.stderr)
	}
	return r
}

// decodeJSON parses stdout keeping numbers exact (json.Number).
func (r result) decodeJSON(t *testing.T) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, r.stdout)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON document:\n%s", r.stdout)
	}
	return m
}

// vector returns the path of a conformance file.
func vector(t *testing.T, rel string) string {
	t.Helper()
	return testenv.ConformanceFile(t, rel)
}

// writeTemp writes data to a new file in the test's temp dir.
func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// num returns the JSON number at a path of object keys and array indexes.
func num(t *testing.T, v any, path ...any) string {
	t.Helper()
	got := at(t, v, path...)
	n, ok := got.(json.Number)
	if !ok {
		t.Fatalf("%v: %T %v is not a number", path, got, got)
	}
	return n.String()
}

func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%v: %T is not an object at %q", path, v, k)
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("%v: no element %d in %v", path, k, v)
			}
			v = a[k]
		}
	}
	return v
}

// demoRun is a practice table built by icectl demo in a test's temp dir.
type demoRun struct {
	dir, uri, checksum string
	env                map[string]string
	cat                []string // the flags that choose its catalog
}

// newDemo builds the demo's tables without the walkthrough (its table
// shop.walkthrough and the runbook run on it, about a second of CPU per
// build): the tests that use it work on the other tables.
func newDemo(t *testing.T) demoRun {
	t.Helper()
	return buildDemo(t, "--walkthrough=false")
}

// newWalkthroughDemo is newDemo with the walkthrough: shop.walkthrough as
// the runbook left it.
func newWalkthroughDemo(t *testing.T) demoRun {
	t.Helper()
	return buildDemo(t)
}

func buildDemo(t *testing.T, flags ...string) demoRun {
	t.Helper()
	d := demoRun{dir: filepath.Join(t.TempDir(), "demo"), env: map[string]string{"HOME": t.TempDir()}}
	m := runCLI(t, d.env, append([]string{"demo", "--dir", d.dir, "-o", "json"}, flags...)...).mustSucceed(t).decodeJSON(t)
	d.uri, _ = at(t, m, "catalog_uri").(string)
	d.checksum, _ = at(t, m, "checksum").(string)
	d.cat = []string{"--catalog-uri", d.uri, "--catalog-name", "demo"}
	return d
}

// run runs icectl with the demo's catalog flags after args.
func (d demoRun) run(t *testing.T, args ...string) result {
	t.Helper()
	return runCLI(t, d.env, append(args, d.cat...)...)
}
