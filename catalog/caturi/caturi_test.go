package caturi

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseForms(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	cases := []struct {
		in   string
		kind Kind
		path string // Path for SQLite and File, URL otherwise
		alt  string
	}{
		{"sqlite:////var/lake/catalog.db", SQLite, "/var/lake/catalog.db", filepath.Join(cwd, "var/lake/catalog.db")},
		{"sqlite:///var/lake/catalog.db", SQLite, filepath.Join(cwd, "var/lake/catalog.db"), "/var/lake/catalog.db"},
		{"SQLite+pysqlite:///c.db", SQLite, filepath.Join(cwd, "c.db"), "/c.db"},
		{"sqlite:////tmp/my%20lake/c.db", SQLite, "/tmp/my lake/c.db", filepath.Join(cwd, "tmp/my lake/c.db")},
		{"file:/abs/path.db", SQLite, "/abs/path.db", ""},
		{"file:///abs/path.sqlite", SQLite, "/abs/path.sqlite", ""},
		{"file://localhost/abs/path.db", SQLite, "/abs/path.db", ""},
		{"file:rel/path.db", SQLite, filepath.Join(cwd, "rel/path.db"), ""},
		{"/abs/bare.db", SQLite, "/abs/bare.db", ""},
		{"rel/bare.sqlite3", SQLite, filepath.Join(cwd, "rel/bare.sqlite3"), ""},
		{"./x.db", SQLite, filepath.Join(cwd, "x.db"), ""},
		{"postgresql+psycopg2://u:p@h:5432/db?sslmode=disable", Postgres, "postgresql://u:p@h:5432/db?sslmode=disable", ""},
		{"postgres://h/db", Postgres, "postgresql://h/db", ""},
		{"postgresql://h/db", Postgres, "postgresql://h/db", ""},
		{"https://rest.example.com/catalog", REST, "https://rest.example.com/catalog", ""},
		{"http://127.0.0.1:8181", REST, "http://127.0.0.1:8181", ""},
		{"thrift://metastore:9083", Hive, "thrift://metastore:9083", ""},
		{"thrift://a:9083,thrift://b:9083", Hive, "thrift://a:9083,thrift://b:9083", ""},
		{"file:///warehouse/wh", File, "/warehouse/wh", ""},
		{"file:/warehouse/wh/", File, "/warehouse/wh", ""},
	}
	for _, c := range cases {
		u, err := Parse(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		got := u.Path
		if c.kind == Postgres || c.kind == REST || c.kind == Hive {
			got = u.URL
		}
		if u.Kind != c.kind || got != c.path || u.Alt != c.alt {
			t.Errorf("%s: got %v %q alt %q, want %v %q alt %q", c.in, u.Kind, got, u.Alt, c.kind, c.path, c.alt)
		}
		// The canonical form parses to the same thing.
		again, err := Parse(u.String())
		if err != nil || again.Kind != u.Kind || again.Path != u.Path || again.URL != u.URL {
			t.Errorf("%s: canonical %s parses to %+v, %v", c.in, u.String(), again, err)
		}
	}
}

func TestSQLiteURI(t *testing.T) {
	if got := SQLiteURI("/tmp/a b/c.db"); got != "sqlite:////tmp/a%20b/c.db" {
		t.Errorf("got %s", got)
	}
	if got := SQLiteURI("rel/c.db"); got != "sqlite:///rel/c.db" {
		t.Errorf("got %s", got)
	}
}

func TestParseMalformed(t *testing.T) {
	for _, in := range []string{
		"", "sqlite:", "sqlite:x.db", "sqlite://host/x.db", "sqlite://", "sqlite:///", "sqlite:///:memory:",
		"sqlite:///x.db?mode=ro", "sqlite:////tmp/%zz.db", "mysql://h/db", "ftp://x", "warehouse",
		"file://host/x.db", "file:wh", "file:///", "file:/x.db?cache=shared",
		"postgres://ice:PW@127.0.0.1:notaport/icedb", "postgres://ice:PW@[::1/icedb", "postgres://ice:P%zzW@h/db",
		"postgres:h/db", "http://", "https:///x", "thrift://", "thrift://h:9083/db", "thrift://u:p@h:9083", "http://h/%", "host=h password=PW", "sqlite:////x.db\n",
	} {
		_, err := Parse(in)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%q: error %v, want *Error", in, err)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.Contains(msg, "sqlite:////abs/path.db") {
			t.Errorf("%q: message %q: want one line with the accepted forms", in, msg)
		}
		if strings.Contains(msg, "PW") {
			t.Errorf("%q: message shows the password: %s", in, msg)
		}
	}
}

func TestRedact(t *testing.T) {
	cases := map[string]string{
		"postgres://ice:PW@127.0.0.1:notaport/icedb":      "postgres://ice:****@127.0.0.1:notaport/icedb",
		"postgres://ice:PW@[::1/icedb":                    "postgres://ice:****@[::1/icedb",
		"postgresql://ice:p/w@d@h/db":                     "postgresql://ice:****@h/db",
		"postgres://h/db?sslmode=disable&password=PW&x=1": "postgres://h/db?sslmode=disable&password=****&x=1",
		"postgres://h/db?PassWord=PW@x":                   "postgres://h/db?PassWord=****",
		"host=h user=ice password=PW dbname=x":            "host=h user=ice password=**** dbname=x",
		"host=h password='P W' sslpassword=PW2":           "host=h password=**** sslpassword=****",
		"https://rest/v1?token=PW&credential=id:PW":       "https://rest/v1?token=****&credential=****",
		"https://user@rest/v1":                            "https://user@rest/v1",
		"sqlite:////tmp/u@x/c.db":                         "sqlite:////tmp/u@x/c.db",
		"http://h/x?client_secret=PW;access_key=PW#frag":  "http://h/x?client_secret=****;access_key=****#frag",
		"file:///wh":               "file:///wh",
		"postgres://ice:****@h/db": "postgres://ice:****@h/db",
		"garbage ://:PW@":          "garbage ://:****@",
		"postgres://ice:PW@h/db?sslkey=/etc/k&sslmode=allow": "postgres://ice:****@h/db?sslkey=/etc/k&sslmode=allow",
	}
	for in, want := range cases {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(Redact(in), "PW") {
			t.Errorf("Redact(%q) shows the secret", in)
		}
	}
	if got := Secrets("postgres://u:longpw@h/db?password=other"); len(got) != 2 || got[0] != "longpw" || got[1] != "other" {
		t.Errorf("Secrets = %q", got)
	}
}

func FuzzRedact(f *testing.F) {
	for _, s := range []string{"postgres://u:secret@h:x/db", "host=h password=secret", "http://h/?token=secret"} {
		f.Add(s)
	}
	// No input panics, and a parse error never shows more of the input
	// than Redact does.
	f.Fuzz(func(t *testing.T, s string) {
		r := Redact(s)
		_ = Secrets(s)
		if _, err := Parse(s); err != nil && !strings.Contains(err.Error(), fmt.Sprintf("%q", r)) {
			t.Errorf("Parse(%q) error %q does not quote the redacted URI", s, err)
		}
	})
}
