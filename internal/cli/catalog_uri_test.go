package cli

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/icectl/icectl/internal/cli/config"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// uriSource puts a catalog URI in one of the five places a user writes it
// and returns the arguments that select it. Each call gets its own home
// directory; variables last until the (sub)test ends.
func uriSource(t *testing.T, env map[string]string, source, uri string) []string {
	t.Helper()
	home := t.TempDir()
	env["HOME"] = home
	yaml := fmt.Sprintf("catalog:\n  src:\n    uri: '%s'\n", uri)
	switch source {
	case "flag":
		return []string{"--catalog-uri", uri}
	case "ICECTL_":
		setEnv(t, env, "ICECTL_CATALOG__SRC__URI", uri)
	case "PYICEBERG_":
		setEnv(t, env, "PYICEBERG_CATALOG__SRC__URI", uri)
	case ".icectl.yaml":
		writeTestFile(t, filepath.Join(home, ".icectl.yaml"), yaml)
	case ".pyiceberg.yaml":
		writeTestFile(t, filepath.Join(home, ".pyiceberg.yaml"), yaml)
	default:
		t.Fatalf("unknown source %s", source)
	}
	return []string{"--catalog", "src"}
}

var uriSources = []string{"flag", "ICECTL_", "PYICEBERG_", ".icectl.yaml", ".pyiceberg.yaml"}

func writeTestFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func copyEnv(env map[string]string) map[string]string {
	out := make(map[string]string, len(env))
	for k, v := range env {
		out[k] = v
	}
	return out
}

// TestCatalogURIFormsEverySource opens the fixture's table through every
// accepted spelling of its SQLite database, from each of the five sources.
func TestCatalogURIFormsEverySource(t *testing.T) {
	fx := newFixture(t)
	t.Chdir(fx.dir)
	db := filepath.Join(fx.dir, "catalog.db")
	forms := []string{
		"sqlite:///" + db,      // SQLAlchemy, absolute: four slashes
		"sqlite:///catalog.db", // SQLAlchemy, relative
		"sqlite+pysqlite:///" + db,
		"file:" + db, // iceberg-go's DSN
		"file://" + db,
		"file:catalog.db",
		db,           // bare path
		"catalog.db", // bare relative path
	}
	for _, form := range forms {
		for _, src := range uriSources {
			t.Run(src+" "+form, func(t *testing.T) {
				env := copyEnv(fx.env)
				args := append([]string{"table", "show", "db.events", "--catalog-name", "default", "-o", "json"}, uriSource(t, env, src, form)...)
				m := runCLI(t, env, args...).mustSucceed(t).decodeJSON(t)
				if got := at(t, m, "metadata_location"); got != fx.table.MetadataLocation {
					t.Errorf("metadata location %v, want %s", got, fx.table.MetadataLocation)
				}
			})
		}
	}
}

// TestMalformedCatalogURIIsUsageError: from every source, a malformed URI
// is one line, exit 2, showing the accepted forms and no driver message.
func TestMalformedCatalogURIIsUsageError(t *testing.T) {
	fx := newFixture(t)
	for _, bad := range []string{"sqlite:", "sqlite://host/x.db", "sqlite:rel.db", "mysql://h/db", "sqlite:////tmp/%zz.db", "ftp://x/y", "warehouse-dir"} {
		for _, src := range uriSources {
			t.Run(src+" "+bad, func(t *testing.T) {
				env := copyEnv(fx.env)
				for _, cmd := range [][]string{{"table", "list"}, {"health", "db.events"}, {"catalog", "init"}} {
					r := runCLI(t, env, append(cmd, uriSource(t, env, src, bad)...)...)
					if r.code != ExitUsage {
						t.Errorf("%v: exit %d, want %d: %s", cmd, r.code, ExitUsage, r.stderr)
					}
					if !strings.Contains(r.stderr, "accepted: sqlite:////abs/path.db") || strings.Contains(strings.ToLower(r.stderr), "sql logic error") {
						t.Errorf("%v: %q: want the accepted forms and no driver message", cmd, r.stderr)
					}
				}
			})
		}
	}
}

// TestMissingSQLiteCatalogCreatesNothing: a database that does not exist is
// an error naming the absolute path (and the file the other reading of the
// slashes names), and no file appears.
func TestMissingSQLiteCatalogCreatesNothing(t *testing.T) {
	fx := newFixture(t)
	// Short paths: the message names the database four times, and t.TempDir's
	// long names would push it past maxErrorLine, which cuts its middle.
	short := func() string {
		d, err := os.MkdirTemp("", "c")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	cwd := short()
	t.Chdir(cwd)
	db := filepath.Join(short(), "catalog.db")
	data, err := os.ReadFile(filepath.Join(fx.dir, "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// Three slashes and the absolute path: the relative reading.
	r := runCLI(t, fx.env, "table", "list", "--catalog-uri", "sqlite://"+db)
	want := filepath.Join(cwd, db) + " does not exist"
	if r.code != ExitFailure || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, db+" exists: write sqlite:///"+db) {
		t.Errorf("exit %d %q: want %q and the absolute reading", r.code, r.stderr, want)
	}
	if entries, _ := os.ReadDir(cwd); len(entries) != 0 {
		t.Errorf("reading created %v", entries)
	}
}

// TestFileCatalogReadCreatesNothing: listing a file catalog whose warehouse
// does not exist fails and runs no mkdir; catalog init creates it.
func TestFileCatalogReadCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	wh := filepath.Join(dir, "nowhere", "wh")
	env := map[string]string{"HOME": dir}
	r := runCLI(t, env, "table", "list", "--catalog-uri", "file://"+wh)
	if r.code != ExitFailure || !strings.Contains(r.stderr, wh+" does not exist") {
		t.Errorf("exit %d %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "nowhere")); !os.IsNotExist(err) {
		t.Errorf("table list created a directory: %v", err)
	}
	runCLI(t, env, "catalog", "init", "--catalog-uri", "file://"+wh).mustSucceed(t)
	if r := runCLI(t, env, "table", "list", "--catalog-uri", "file://"+wh).mustSucceed(t); r.stdout != "" || !strings.HasPrefix(r.stderr, "no tables in ") {
		t.Errorf("new file catalog lists %q, says %q", r.stdout, r.stderr)
	}
}

func TestCatalogInitSQLite(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir}
	uri := "sqlite:///" + filepath.Join(dir, "new.db")
	m := runCLI(t, env, "catalog", "init", "--catalog-uri", uri, "--catalog-name", "lake", "-o", "json").mustSucceed(t).decodeJSON(t)
	if at(t, m, "created") != true || at(t, m, "catalog", "uri") != uri || at(t, m, "catalog", "name") != "lake" {
		t.Errorf("init: %v", m)
	}
	// The database is a rollback-journal SQLite database (header bytes
	// 18-19 are 1,1), like PyIceberg's and iceberg-go's.
	b, err := os.ReadFile(filepath.Join(dir, "new.db"))
	if err != nil || len(b) < 20 || b[18] != 1 || b[19] != 1 {
		t.Errorf("new database: %v, journal bytes %v", err, b[18:20])
	}
	r := runCLI(t, env, "catalog", "init", "--catalog-uri", uri).mustSucceed(t)
	if !strings.Contains(r.stdout, "exists already; nothing changed") {
		t.Errorf("second init: %q", r.stdout)
	}
	if r := runCLI(t, env, "table", "list", "--catalog-uri", uri).mustSucceed(t); r.stdout != "" || r.stderr != "no tables in catalog \"default\"\n" {
		t.Errorf("new catalog lists %q, says %q", r.stdout, r.stderr)
	}
	// A directory that does not exist is not created.
	r = runCLI(t, env, "catalog", "init", "--catalog-uri", "sqlite:///"+filepath.Join(dir, "no", "c.db"))
	if r.code != ExitFailure || !strings.Contains(r.stderr, "does not exist") {
		t.Errorf("init in a missing directory: %d %q", r.code, r.stderr)
	}
	if r := runCLI(t, env, "catalog", "init", "--catalog-uri", "https://rest.example.com"); r.code != ExitFailure || !strings.Contains(r.stderr, "created on its server") {
		t.Errorf("init of a REST catalog: %d %q", r.code, r.stderr)
	}
}

// TestWrongCatalogNameNamesTheOther: a table looked up under a catalog name
// the database does not hold says which name it holds.
func TestWrongCatalogNameNamesTheOther(t *testing.T) {
	fx := newFixture(t)
	want := `no table db.events in catalog "demo"; this database holds catalog "default": add --catalog-name default`
	for _, args := range [][]string{
		{"table", "show", "db.events"}, {"health", "db.events"}, {"files", "db.events"}, {"snapshots", "db.events"},
		{"compact", "db.events", "--dry-run"}, {"table", "set-properties", "db.events", "a=b"},
	} {
		r := fx.run(t, append(args, "--catalog-name", "demo")...)
		if r.code != ExitFailure || !strings.Contains(r.stderr, want) {
			t.Errorf("%v: exit %d %q, want %q", args, r.code, r.stderr, want)
		}
	}
}

// TestCatalogSecretsNeverPrinted walks every command that opens a catalog,
// in text and JSON, with secrets in URIs Go cannot parse, in query
// parameters and in key=value DSNs, from the flag, a configuration file
// and a PYICEBERG_ variable: no secret reaches stdout or stderr.
func TestCatalogSecretsNeverPrinted(t *testing.T) {
	fx := newFixture(t)
	port := closedPort(t)
	uris := map[string]string{
		"SECRETPW1": "postgres://ice:SECRETPW1@127.0.0.1:notaport/icedb",
		"SECRETPW2": "postgres://ice:SECRETPW2@[::1/icedb",
		"SECRETPW3": fmt.Sprintf("postgres://ice@127.0.0.1:%d/icedb?sslmode=disable&password=SECRETPW3&connect_timeout=2", port),
		"SECRETPW4": "host=127.0.0.1 user=ice password=SECRETPW4 dbname=icedb",
		"SECRETPW5": fmt.Sprintf("postgresql+psycopg2://ice:SECRETPW5@127.0.0.1:%d/icedb?connect_timeout=2", port),
		"SECRETPW6": "postgres://ice:SECRETPW6@127.0.0.1:5432/ice%zzdb",
		"SECRETPW7": fmt.Sprintf("http://127.0.0.1:%d/api?token=SECRETPW7", port),
	}
	commands := [][]string{
		{"table", "list"}, {"table", "show", "db.events"}, {"snapshots", "db.events"}, {"files", "db.events"},
		{"health", "db.events"}, {"compact", "db.events", "--dry-run"}, {"table", "set-properties", "db.events", "a=b"},
		{"table", "remove-properties", "db.events", "a"}, {"catalog", "init"},
	}
	for secret, uri := range uris {
		for _, src := range []string{"flag", "PYICEBERG_", ".pyiceberg.yaml", ".icectl.yaml"} {
			// The subtest's name must not hold the secret: temp dirs are
			// named after it.
			t.Run(src+" "+secret[len(secret)-1:], func(t *testing.T) {
				env := copyEnv(fx.env)
				sel := uriSource(t, env, src, uri)
				for _, cmd := range commands {
					for _, out := range []string{"text", "json"} {
						r := runCLI(t, env, append(append(append([]string{}, cmd...), sel...), "-o", out)...)
						if r.code == ExitOK {
							t.Errorf("%v: succeeded", cmd)
						}
						if strings.Contains(r.stdout+r.stderr, secret) {
							t.Errorf("icectl %v -o %s printed %s: %s%s", cmd, out, secret, r.stdout, r.stderr)
						}
					}
				}
			})
		}
	}
}

// TestCatalogViewRedactsQueryPassword: the catalog URI in JSON output
// loses a password given as a query parameter.
func TestCatalogViewRedactsQueryPassword(t *testing.T) {
	v := newCatalogView(&config.Catalog{Name: "x", URI: "postgresql://ice@db/iceberg?sslmode=require&password=SECRETPW"})
	if strings.Contains(v.URI, "SECRETPW") || v.URI != "postgresql://ice@db/iceberg?sslmode=require&password=****" {
		t.Errorf("uri %q", v.URI)
	}
}

// TestPostgresQueryPasswordNotInJSON lists a real PostgreSQL catalog with
// its password moved into a ?password= parameter: the JSON output names
// the catalog without it.
func TestPostgresQueryPasswordNotInJSON(t *testing.T) {
	pg := testenv.Need(t, testenv.PostgresURL, "PostgreSQL database")
	u, err := url.Parse(pg)
	if err != nil {
		t.Fatal(err)
	}
	pw, ok := u.User.Password()
	if !ok || len(pw) < 4 {
		t.Skip("the test database URL has no password to move")
	}
	u.User = url.User(u.User.Username())
	q := u.Query()
	q.Set("password", pw)
	u.RawQuery = q.Encode()
	env := map[string]string{"HOME": t.TempDir()}
	r := runCLI(t, env, "catalog", "init", "--catalog-uri", u.String(), "--catalog-name", "pwtest", "-o", "json").mustSucceed(t)
	r2 := runCLI(t, env, "table", "list", "--catalog-uri", u.String(), "--catalog-name", "pwtest", "-o", "json").mustSucceed(t)
	for _, out := range []string{r.stdout, r2.stdout} {
		if strings.Contains(out, pw) || !strings.Contains(out, "password=****") {
			t.Errorf("output %s: want the password redacted", out)
		}
	}
}

// TestHelpCatalogs: the grammar is documented in one place users reach
// from the command line.
func TestHelpCatalogs(t *testing.T) {
	r := runCLI(t, map[string]string{}, "help", "catalogs").mustSucceed(t)
	for _, want := range []string{"sqlite:////var/lake/catalog.db", "sqlite:///lake/catalog.db", "file:/var/lake/catalog.db", "postgresql+psycopg2://", "file:///var/lake/wh", "icectl catalog init"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("help catalogs lacks %q", want)
		}
	}
}
