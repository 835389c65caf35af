package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog/caturi"
)

const icectlYAML = `
default-catalog: prod
catalog:
  prod:
    uri: sqlite:////var/icectl/prod.db
    warehouse: file:///var/wh
    s3.endpoint: http://file-endpoint
    s3.secret-access-key: file-secret
  Other:
    uri: https://rest.example.com
    credential: client:very-secret
`

const pyicebergYAML = `
catalog:
  default:
    type: sql
    uri: sqlite:////tmp/py/catalog.db
    warehouse: file:///tmp/py/wh
  pg:
    uri: postgresql+psycopg2://user:pgpass@db:5432/iceberg
  prod:
    uri: https://should-lose.example.com
  nested:
    uri: http://rest
    s3:
      endpoint: http://minio:9000
      access-key-id: ak
`

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// lookup returns a Lookup over a fake home holding the given files.
func lookup(t *testing.T, icectl, pyiceberg string, env ...string) Lookup {
	t.Helper()
	home := t.TempDir()
	if icectl != "" {
		writeFile(t, home, ".icectl.yaml", icectl)
	}
	if pyiceberg != "" {
		writeFile(t, home, ".pyiceberg.yaml", pyiceberg)
	}
	vars := map[string]string{"HOME": home}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	return Lookup{Getenv: func(k string) string { return vars[k] }, Environ: env, Cwd: t.TempDir()}
}

func resolve(t *testing.T, flags Flags, l Lookup) *Catalog {
	t.Helper()
	s, err := LoadSources(l)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Resolve(flags, s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDefaultCatalogFromIcectlFile(t *testing.T) {
	c := resolve(t, Flags{}, lookup(t, icectlYAML, pyicebergYAML))
	if c.Name != "prod" || c.URI != "sqlite:////var/icectl/prod.db" || c.Warehouse != "file:///var/wh" {
		t.Errorf("got %+v", c)
	}
	// The icectl entry is taken whole: nothing of PyIceberg's prod leaks in.
	if c.Props["s3.endpoint"] != "http://file-endpoint" || len(c.Props) != 2 {
		t.Errorf("props %v", c.Props)
	}
}

func TestPyIcebergFileAndSQLAlchemyURIs(t *testing.T) {
	l := lookup(t, "", pyicebergYAML)
	c := resolve(t, Flags{}, l)
	if c.Name != "default" || c.URI != "sqlite:////tmp/py/catalog.db" || c.Type != "sql" {
		t.Errorf("default: %+v", c)
	}
	c = resolve(t, Flags{Catalog: "PG"}, l)
	if c.URI != "postgresql+psycopg2://user:pgpass@db:5432/iceberg" || c.Kind != caturi.Postgres || c.Name != "pg" {
		t.Errorf("pg: %+v", c)
	}
	c = resolve(t, Flags{Catalog: "nested"}, l)
	if c.Props["s3.endpoint"] != "http://minio:9000" || c.Props["s3.access-key-id"] != "ak" {
		t.Errorf("nested: %v", c.Props)
	}
}

func TestPyIcebergSearchOrder(t *testing.T) {
	pyhome, home, cwd := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, cwd, ".pyiceberg.yaml", "catalog: {default: {uri: http://cwd}}")
	env := map[string]string{"HOME": home}
	l := Lookup{Getenv: func(k string) string { return env[k] }, Cwd: cwd}
	if c := resolve(t, Flags{}, l); c.URI != "http://cwd" {
		t.Errorf("cwd: %s", c.URI)
	}
	writeFile(t, home, ".pyiceberg.yaml", "catalog: {default: {uri: http://home}}")
	if c := resolve(t, Flags{}, l); c.URI != "http://home" {
		t.Errorf("home: %s", c.URI)
	}
	writeFile(t, pyhome, ".pyiceberg.yaml", "catalog: {default: {uri: http://pyhome}}")
	env["PYICEBERG_HOME"] = pyhome
	if c := resolve(t, Flags{}, l); c.URI != "http://pyhome" {
		t.Errorf("PYICEBERG_HOME: %s", c.URI)
	}
}

func TestIcectlConfigVariable(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	p := writeFile(t, dir, "custom.yaml", "catalog: {default: {uri: 'sqlite:///rel.db'}}")
	l := lookup(t, icectlYAML, "", "ICECTL_CONFIG="+p)
	if c := resolve(t, Flags{}, l); c.URI != "sqlite:///rel.db" || c.Kind != caturi.SQLite {
		t.Errorf("got %s", c.URI)
	}
	l = lookup(t, "", "", "ICECTL_CONFIG="+filepath.Join(dir, "missing.yaml"))
	if _, err := LoadSources(l); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing $ICECTL_CONFIG: %v", err)
	}
}

func TestPrecedenceFlagsEnvFile(t *testing.T) {
	env := []string{
		"PYICEBERG_CATALOG__PROD__S3__ENDPOINT=http://py-env",
		"PYICEBERG_CATALOG__PROD__WAREHOUSE=file:///py-env-wh",
		"ICECTL_CATALOG__PROD__WAREHOUSE=file:///icectl-env-wh",
		"PYICEBERG_CATALOG__PROD__S3__ACCESS_KEY_ID=ak-env",
		"icectl_catalog__prod__client__region=eu-1",
		"ICECTL_CATALOG__PROD__EMPTY=",
		"UNRELATED__CATALOG__PROD__URI=x",
	}
	l := lookup(t, icectlYAML, "", env...)
	c := resolve(t, Flags{}, l)
	if c.Props["s3.endpoint"] != "http://py-env" {
		t.Errorf("env must beat file: s3.endpoint=%q", c.Props["s3.endpoint"])
	}
	if c.Warehouse != "file:///icectl-env-wh" {
		t.Errorf("ICECTL_ must beat PYICEBERG_: warehouse=%q", c.Warehouse)
	}
	if c.Props["s3.access-key-id"] != "ak-env" || c.Props["client.region"] != "eu-1" {
		t.Errorf("env keys: %v", c.Props)
	}
	if _, ok := c.Props["empty"]; ok {
		t.Errorf("empty variable set a property")
	}
	if c.URI != "sqlite:////var/icectl/prod.db" {
		t.Errorf("file uri lost: %s", c.URI)
	}
	c = resolve(t, Flags{Catalog: "prod", URI: "/flag.db", Warehouse: "file:///flag-wh", CatalogName: "cn"}, l)
	if c.URI != "/flag.db" || c.Warehouse != "file:///flag-wh" || c.Name != "cn" {
		t.Errorf("flags must beat env: %+v", c)
	}
	if c.Props["s3.endpoint"] != "http://py-env" {
		t.Errorf("flags dropped the env properties: %v", c.Props)
	}
}

func TestEnvDefaultCatalogAndEnvOnlyCatalog(t *testing.T) {
	l := lookup(t, icectlYAML, "", "ICECTL_DEFAULT_CATALOG=envcat", "ICECTL_CATALOG__ENVCAT__URI=http://env-only")
	c := resolve(t, Flags{}, l)
	if c.Name != "envcat" || c.URI != "http://env-only" {
		t.Errorf("got %+v", c)
	}
	l = lookup(t, "", "", "PYICEBERG_CATALOG__DEFAULT__URI=sqlite:////abs/c.db")
	if c := resolve(t, Flags{}, l); c.URI != "sqlite:////abs/c.db" {
		t.Errorf("PYICEBERG_ uri not translated: %s", c.URI)
	}
}

func TestStandaloneURIIgnoresConfiguredCredentials(t *testing.T) {
	l := lookup(t, "catalog: {default: {uri: http://a, token: tok-secret}}", "", "ICECTL_CATALOG__DEFAULT__CREDENTIAL=x:y")
	c := resolve(t, Flags{URI: "http://other"}, l)
	if c.Name != "default" || c.URI != "http://other" || len(c.Props) != 0 {
		t.Errorf("got %+v", c)
	}
}

func TestWarehouseOnlyIsFileCatalog(t *testing.T) {
	c := resolve(t, Flags{Warehouse: "file:///wh"}, lookup(t, "", ""))
	if c.URI != "file:///wh" {
		t.Errorf("uri %q", c.URI)
	}
}

func TestResolveErrors(t *testing.T) {
	cases := []struct {
		yaml  string
		flags Flags
		want  string
	}{
		{"", Flags{}, "no catalog: give --catalog-uri"},
		{icectlYAML, Flags{Catalog: "nope"}, `catalog "nope" is not configured`},
		{"catalog: {a: {warehouse: ''}}", Flags{Catalog: "a"}, `catalog "a" has no uri`},
		{"catalog: {g: {type: glue, uri: x}}", Flags{Catalog: "g"}, `type "glue" is not supported`},
		{"", Flags{Warehouse: "s3://b/wh"}, "only a local warehouse"},
	}
	for _, c := range cases {
		s, err := LoadSources(lookup(t, c.yaml, ""))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Resolve(c.flags, s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.flags, err, c.want)
		}
	}
}

func TestParseFileErrors(t *testing.T) {
	for _, bad := range []string{"catalog: [1, 2]", "catalog: {a: 3}", "catalog: {a: {uri: [x]}}", "default-catalog: {a: b}", ":\n- ["} {
		if _, err := ParseFile([]byte(bad), "f.yaml"); err == nil || !strings.Contains(err.Error(), "f.yaml") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
}

// TestOneGrammarEverySource resolves each URI form from the flag, both
// environment prefixes and both configuration files: every source gives
// the same canonical URI.
func TestOneGrammarEverySource(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	forms := map[string]string{
		"sqlite:////var/lake/catalog.db":             "sqlite:////var/lake/catalog.db",
		"sqlite:///lake/catalog.db":                  caturi.SQLiteURI(filepath.Join(cwd, "lake/catalog.db")),
		"file:/var/lake/catalog.db":                  "sqlite:////var/lake/catalog.db",
		"lake/catalog.db":                            caturi.SQLiteURI(filepath.Join(cwd, "lake/catalog.db")),
		"postgresql+psycopg2://u:pw@db:5432/iceberg": "postgresql://u:pw@db:5432/iceberg",
		"postgres://db/iceberg":                      "postgresql://db/iceberg",
		"https://rest.example.com/api":               "https://rest.example.com/api",
		"file:///var/lake/wh":                        "file:///var/lake/wh",
	}
	for in, want := range forms {
		sources := map[string]Lookup{
			"flag":      lookup(t, "", ""),
			"ICECTL_":   lookup(t, "", "", "ICECTL_CATALOG__DEFAULT__URI="+in),
			"PYICEBERG": lookup(t, "", "", "PYICEBERG_CATALOG__DEFAULT__URI="+in),
			"icectl":    lookup(t, "catalog: {default: {uri: '"+in+"'}}", ""),
			"pyiceberg": lookup(t, "", "catalog: {default: {uri: '"+in+"'}}"),
		}
		for name, l := range sources {
			var flags Flags
			if name == "flag" {
				flags.URI = in
			}
			c := resolve(t, flags, l)
			got, err := caturi.Parse(c.URI)
			if err != nil || got.String() != want {
				t.Errorf("%s from %s: %s (%v), want %s", in, name, got.String(), err, want)
			}
		}
	}
}

func TestMalformedURIEverySource(t *testing.T) {
	for _, in := range []string{"sqlite:", "sqlite://host/x.db", "mysql://h/db", "sqlite:////tmp/%zz.db", "postgres://ice:SECRETPW@127.0.0.1:notaport/icedb"} {
		sources := map[string]Lookup{
			"--catalog-uri":                    lookup(t, "", ""),
			"$ICECTL_CATALOG__DEFAULT__URI":    lookup(t, "", "", "ICECTL_CATALOG__DEFAULT__URI="+in),
			"$PYICEBERG_CATALOG__DEFAULT__URI": lookup(t, "", "", "PYICEBERG_CATALOG__DEFAULT__URI="+in),
			".icectl.yaml":                     lookup(t, "catalog: {default: {uri: '"+in+"'}}", ""),
			".pyiceberg.yaml":                  lookup(t, "", "catalog: {default: {uri: '"+in+"'}}"),
		}
		for name, l := range sources {
			var flags Flags
			if name == "--catalog-uri" {
				flags.URI = in
			}
			s, err := LoadSources(l)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Resolve(flags, s)
			var e *caturi.Error
			if !errors.As(err, &e) {
				t.Errorf("%s from %s: %v, want a *caturi.Error", in, name, err)
				continue
			}
			if msg := err.Error(); !strings.Contains(msg, name) || strings.Contains(msg, "SECRETPW") || strings.Contains(msg, "\n") {
				t.Errorf("%s from %s: %q: want one line naming the source, no password", in, name, msg)
			}
		}
	}
}

func TestRedactedAndScrub(t *testing.T) {
	c := &Catalog{
		Name: "x", URI: "postgresql://user:pg-pass@db/iceberg", Warehouse: "s3://b/wh",
		Props: map[string]string{
			"s3.secret-access-key": "s3-secret", "s3.session-token": "sess-tok", "credential": "client:cred-secret",
			"token": "bearer-tok", "s3.access-key-id": "AKID", "adls.account-key": "acct-key", "s3.endpoint": "http://e",
		},
	}
	r := c.Redacted()
	all := r.URI + r.Warehouse
	for k, v := range r.Props {
		all += k + "=" + v + "\n"
	}
	for _, s := range []string{"pg-pass", "s3-secret", "sess-tok", "cred-secret", "bearer-tok", "acct-key"} {
		if strings.Contains(all, s) {
			t.Errorf("Redacted shows %q:\n%s", s, all)
		}
	}
	if r.Props["s3.access-key-id"] != "AKID" || r.Props["s3.endpoint"] != "http://e" || !strings.Contains(r.URI, "user:****@db") {
		t.Errorf("Redacted hid too much: %+v", r)
	}
	if c.Props["token"] != "bearer-tok" {
		t.Error("Redacted changed the original")
	}
	msg := c.Scrub("dial postgresql://user:pg-pass@db failed; token bearer-tok; secret cred-secret")
	for _, s := range []string{"pg-pass", "bearer-tok", "cred-secret"} {
		if strings.Contains(msg, s) {
			t.Errorf("Scrub left %q: %s", s, msg)
		}
	}
}

func TestIsSecret(t *testing.T) {
	for k, want := range map[string]bool{
		"s3.secret-access-key": true, "s3.session-token": true, "credential": true, "token": true,
		"adls.account-key": true, "gcs.oauth2.token": true, "s3.sse.key": true, "password": true,
		"s3.access-key-id": false, "s3.endpoint": false, "uri": false, "warehouse": false,
	} {
		if got := IsSecret(k); got != want {
			t.Errorf("IsSecret(%q) = %v", k, got)
		}
	}
}

// FuzzParseFile checks that no configuration file makes the parser panic,
// and that what it accepts resolves or fails cleanly.
func FuzzParseFile(f *testing.F) {
	for _, s := range []string{icectlYAML, pyicebergYAML, "catalog: {a: {s3: {endpoint: x}}}", "default-catalog: 3", "catalog: ~"} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, _ bool) {
		file, err := ParseFile(data, "fuzz.yaml")
		if err != nil {
			return
		}
		for _, name := range append(file.Names(), "") {
			c, err := Resolve(Flags{Catalog: name}, Sources{Files: []*File{file}})
			if err == nil {
				c.Redacted()
				c.Scrub("x")
			}
		}
	})
}
