package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

func TestReadCommandsGolden(t *testing.T) {
	fx := newFixture(t)
	cases := []struct {
		name string
		args []string
	}{
		{"table_list", []string{"table", "list"}},
		{"table_list_ns", []string{"table", "list", "db"}},
		{"table_show", []string{"table", "show", "db.events"}},
		{"snapshots", []string{"snapshots", "db.events"}},
		{"files", []string{"files", "db.events"}},
		{"files_deletes", []string{"files", "db.events", "--deletes"}},
		{"files_first_snapshot", []string{"files", "db.events", "--snapshot", fmt.Sprint(fx.snaps[0])}},
	}
	for _, c := range cases {
		text := fx.run(t, c.args...).mustSucceed(t)
		// Column widths follow the values (snapshot ids differ in length),
		// so runs of spaces collapse in text output.
		golden(t, c.name+".txt", spacesRe.ReplaceAllString(fx.normalize(text.stdout), "  "))
		js := fx.run(t, append(c.args, "--output", "json")...).mustSucceed(t)
		js.decodeJSON(t)
		golden(t, c.name+".json", fx.normalize(js.stdout))
		if text.stderr != "" || js.stderr != "" {
			t.Errorf("%s: stderr %q %q", c.name, text.stderr, js.stderr)
		}
	}
}

var spacesRe = regexp.MustCompile(` {2,}`)

func TestFilesJSONValues(t *testing.T) {
	fx := newFixture(t)
	m := fx.run(t, "files", "db.events", "--deletes", "-o", "json").mustSucceed(t).decodeJSON(t)
	if n := len(at(t, m, "files").([]any)); n != 2 {
		t.Fatalf("%d delete files", n)
	}
	if got := at(t, m, "files", 0, "content"); got != "position-deletes" {
		t.Errorf("content %v", got)
	}
	if got := at(t, m, "files", 0, "referenced_data_file"); !strings.HasSuffix(fmt.Sprint(got), "/a.parquet") {
		t.Errorf("referenced data file %v", got)
	}
	if got := num(t, m, "files", 1, "data_sequence_number"); got != "2" {
		t.Errorf("data sequence number %s", got)
	}
	if got := num(t, m, "snapshot_id"); got != fmt.Sprint(fx.snaps[1]) {
		t.Errorf("snapshot id %s, want %d", got, fx.snaps[1])
	}
}

func TestHealthEndToEnd(t *testing.T) {
	fx := newFixture(t)
	m := fx.run(t, "health", "db.events", "-o", "json").mustSucceed(t).decodeJSON(t)
	checks := map[string][]any{
		"3":   {"data_files", "files"},
		"160": {"data_files", "records"},
		"1":   {"data_files", "small_files"}, // below 0.75 x 4 MiB: only a.parquet
		"30":  {"delete_files", "deleted_rows"},
		"2":   {"manifests", "count"},
	}
	for want, path := range checks {
		if got := num(t, m, path...); got != want {
			t.Errorf("%v = %s, want %s", path, got, want)
		}
	}
	if got := num(t, m, "delete_files", "delete_ratio"); got != "0.1875" {
		t.Errorf("delete ratio %s", got)
	}
	if got := at(t, m, "partitions", 0, "partition"); got != "region=eu" {
		t.Errorf("first partition %v", got)
	}
	text := fx.run(t, "health", "db.events").mustSucceed(t).stdout
	for _, want := range []string{"equality-deletes: 1 equality delete file", "recommended: icectl rewrite-equality-deletes db.events", "region=us"} {
		if !strings.Contains(text, want) {
			t.Errorf("health text lacks %q:\n%s", want, text)
		}
	}
}

// snapshotDir lists every file under dir with its size and content hash
// stand-in (size + mtime), to show that a failed command changed nothing.
func snapshotDir(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !info.IsDir() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			lines = append(lines, fmt.Sprintf("%s %d %x", p, info.Size(), data))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// restServer answers every request with 401, echoing the Authorization
// header it got, as a careless server might.
func restServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
			"message": "credentials rejected: " + r.Header.Get("Authorization"), "type": "NotAuthorizedException", "code": 401}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// setEnv sets a variable both in the process (where icectl finds the
// names of PYICEBERG_/ICECTL_ variables) and in the fake environment
// (where it reads their values).
func setEnv(t *testing.T, env map[string]string, k, v string) {
	t.Setenv(k, v)
	env[k] = v
}

func TestErrorsEndToEnd(t *testing.T) {
	fx := newFixture(t)
	srv := restServer(t)
	setEnv(t, fx.env, "ICECTL_CATALOG__REST__URI", srv.URL)
	setEnv(t, fx.env, "ICECTL_CATALOG__REST__TOKEN", "tok-very-secret")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"missing table", []string{"table", "show", "db.nope", "--catalog-uri", fx.uri}, "no such table"},
		{"missing namespace", []string{"snapshots", "nope.events", "--catalog-uri", fx.uri}, "no such table"},
		{"missing sqlite file", []string{"health", "db.events", "--catalog-uri", "sqlite:///" + filepath.Join(fx.dir, "nope.db")}, "nope.db does not exist"},
		{"postgres closed port", []string{"table", "list", "--catalog-uri", fmt.Sprintf("postgres://icectl:pg-secret-pw@127.0.0.1:%d/iceberg?connect_timeout=5", closedPort(t))}, "open catalog postgres://icectl:****@127.0.0.1"},
		{"http closed port", []string{"files", "db.events", "--catalog-uri", fmt.Sprintf("http://127.0.0.1:%d", closedPort(t))}, "open catalog http://127.0.0.1"},
		{"rest 401", []string{"table", "show", "db.events", "--catalog", "rest"}, "not authorized"},
		{"unknown catalog", []string{"health", "db.events", "--catalog", "nope"}, `catalog "nope" is not configured`},
	}
	before := snapshotDir(t, fx.dir)
	for _, c := range cases {
		r := runCLI(t, fx.env, c.args...)
		if r.code != ExitFailure {
			t.Errorf("%s: exit %d, want %d (stderr %q)", c.name, r.code, ExitFailure, r.stderr)
		}
		if !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: stderr %q lacks %q", c.name, r.stderr, c.want)
		}
		if r.stdout != "" {
			t.Errorf("%s: stdout %q", c.name, r.stdout)
		}
		for _, secret := range []string{"pg-secret-pw", "tok-very-secret"} {
			if strings.Contains(r.stderr, secret) {
				t.Errorf("%s: stderr shows a secret: %q", c.name, r.stderr)
			}
		}
	}
	if after := snapshotDir(t, fx.dir); after != before {
		t.Errorf("failed commands changed the catalog or warehouse")
	}
}

func TestUsageErrorsOfReadCommands(t *testing.T) {
	fx := newFixture(t)
	for _, args := range [][]string{
		{"table", "show", "events"},
		{"files", "db.events", "--snapshot", "abc"},
		{"files", "db.events", "--snapshot", "42"}, // no such snapshot
		{"snapshots"},
		{"table", "list", "a..b"},
	} {
		r := fx.run(t, args...)
		if r.code != ExitUsage {
			t.Errorf("%v: exit %d (stderr %q)", args, r.code, r.stderr)
		}
	}
}

func TestCorruptMetadataChangesNothing(t *testing.T) {
	fx := newFixture(t)
	p := strings.TrimPrefix(fx.table.MetadataLocation, "file://")
	if err := os.WriteFile(p, []byte(`{"format-version": 2, "table-uuid": `), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshotDir(t, fx.dir)
	for _, args := range [][]string{{"table", "show", "db.events"}, {"health", "db.events"}, {"files", "db.events"}, {"snapshots", "db.events"}} {
		r := fx.run(t, args...)
		if r.code != ExitFailure || !strings.Contains(r.stderr, "corrupt table metadata") {
			t.Errorf("%v: exit %d stderr %q", args, r.code, r.stderr)
		}
	}
	if after := snapshotDir(t, fx.dir); after != before {
		t.Error("reading corrupt metadata changed files")
	}
}

func TestConfigFileCatalogAndPrecedence(t *testing.T) {
	fx := newFixture(t)
	// The icectl file names the fixture's catalog; PyIceberg's file names
	// the same database in SQLAlchemy's spelling (four slashes).
	yaml := fmt.Sprintf("default-catalog: mine\ncatalog:\n  mine:\n    uri: %s\n", fx.uri)
	if err := os.WriteFile(filepath.Join(fx.dir, ".icectl.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	py := fmt.Sprintf("catalog:\n  py:\n    type: sql\n    uri: sqlite:///%s\n", filepath.Join(fx.dir, "catalog.db"))
	if err := os.WriteFile(filepath.Join(fx.dir, ".pyiceberg.yaml"), []byte(py), 0o600); err != nil {
		t.Fatal(err)
	}
	// The SQL catalog's rows are under catalog_name "default".
	for _, args := range [][]string{
		{"table", "list", "--catalog-name", "default"},
		{"table", "list", "--catalog", "mine", "--catalog-name", "default"},
		{"table", "list", "--catalog", "py", "--catalog-name", "default"},
	} {
		r := runCLI(t, fx.env, args...).mustSucceed(t)
		if r.stdout != "db.events\n" {
			t.Errorf("%v: %q", args, r.stdout)
		}
	}
	// Without --catalog-name the name is the catalog's: nothing is listed
	// under "mine".
	if r := runCLI(t, fx.env, "table", "list").mustSucceed(t); r.stdout != "" ||
		r.stderr != "no tables in catalog \"mine\"; this database holds catalog \"default\": add --catalog-name default\n" {
		t.Errorf("catalog_name mine listed %q, said %q", r.stdout, r.stderr)
	}
	// Environment beats the file: this URI does not exist.
	setEnv(t, fx.env, "ICECTL_CATALOG__MINE__URI", "sqlite:///"+filepath.Join(fx.dir, "env.db"))
	if r := runCLI(t, fx.env, "table", "list"); r.code != ExitFailure || !strings.Contains(r.stderr, "env.db does not exist") {
		t.Errorf("env did not override the file: %d %q", r.code, r.stderr)
	}
	// And a flag beats the environment.
	r := runCLI(t, fx.env, "table", "list", "--catalog", "mine", "--catalog-uri", fx.uri, "--catalog-name", "default").mustSucceed(t)
	if r.stdout != "db.events\n" {
		t.Errorf("flag did not override env: %q", r.stdout)
	}
	// $ICECTL_CONFIG replaces ~/.icectl.yaml.
	fx.env["ICECTL_CONFIG"] = filepath.Join(fx.dir, "missing.yaml")
	if r := runCLI(t, fx.env, "table", "list"); r.code != ExitFailure || !strings.Contains(r.stderr, "missing.yaml") {
		t.Errorf("ICECTL_CONFIG ignored: %q", r.stderr)
	}
}

// TestSecretsNeverPrinted runs every read command, in text and JSON and
// through its error paths, with secrets in the configuration, and greps
// everything printed for them.
func TestSecretsNeverPrinted(t *testing.T) {
	fx := newFixture(t)
	secrets := []string{"S3SECRETVALUE", "SESSIONTOKENVALUE", "CREDSECRETVALUE", "BEARERTOKENVALUE", "PGPASSWORDVALUE"}
	srv := restServer(t)
	yaml := fmt.Sprintf(`catalog:
  sec:
    uri: %s
    s3.secret-access-key: S3SECRETVALUE
    s3.session-token: SESSIONTOKENVALUE
    credential: client:CREDSECRETVALUE
    token: BEARERTOKENVALUE
  rest:
    uri: %s
    token: BEARERTOKENVALUE
  pg:
    uri: postgres://icectl:PGPASSWORDVALUE@127.0.0.1:%d/db
    s3.secret-access-key: S3SECRETVALUE
`, fx.uri, srv.URL, closedPort(t))
	if err := os.WriteFile(filepath.Join(fx.dir, ".icectl.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	fx.env["AWS_SECRET_ACCESS_KEY"] = "S3SECRETVALUE"
	sec := []string{"--catalog", "sec", "--catalog-name", "default"}
	var runs [][]string
	for _, cmd := range [][]string{
		{"table", "list"}, {"table", "show", "db.events"}, {"snapshots", "db.events"},
		{"files", "db.events"}, {"files", "db.events", "--deletes"}, {"health", "db.events"},
		{"table", "show", "db.missing"},
	} {
		runs = append(runs, append(append([]string{}, cmd...), sec...), append(append([]string{"-o", "json"}, cmd...), sec...))
	}
	runs = append(runs,
		[]string{"table", "list", "--catalog", "rest"},
		[]string{"health", "db.events", "--catalog", "pg"},
		[]string{"table", "list", "--catalog", "sec", "--catalog-uri", "postgres://u:PGPASSWORDVALUE@127.0.0.1:1/x"},
	)
	failures := 0
	for _, args := range runs {
		r := runCLI(t, fx.env, args...)
		if r.code != ExitOK {
			failures++
		}
		for _, s := range secrets {
			if strings.Contains(r.stdout, s) || strings.Contains(r.stderr, s) {
				t.Errorf("icectl %v printed secret %s:\nstdout %s\nstderr %s", args, s, r.stdout, r.stderr)
			}
		}
	}
	// The error paths ran: a missing table (text and JSON), REST 401,
	// postgres twice.
	if failures != 5 {
		t.Errorf("%d runs failed, want 5", failures)
	}
}
