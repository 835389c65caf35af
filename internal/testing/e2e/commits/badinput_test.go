package commits

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogs"
	"github.com/icectl/icectl/catalog/catalogtest"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// TestBadRESTCredential: a credential the catalog refuses (a wrong secret,
// 401 at the token endpoint) or one that may only read (403 on the commit)
// is a one-line error and exit 1, never shows the secret, and changes
// nothing. The refusals come from a testenv.RESTAuthGate in front of the
// real server, since the default server (Iceberg's REST fixture) accepts
// any credential; what passes the gate is the real server's.
func TestBadRESTCredential(t *testing.T) {
	e := needREST(t)
	direct := e.open(t, e.uri)
	tbl := e.newTable(t, direct)
	gate := testenv.NewRESTAuthGate(t, e.uri, e.credential)
	key, _, _ := strings.Cut(e.credential, ":")
	const wrong, reader = "not-the-secret-7f3a9", "reader-secret-2b8e1"
	gate.AllowReadOnly("reader:" + reader)
	for _, c := range []struct {
		name, credential, secret, says string
	}{
		{"wrong secret", key + ":" + wrong, wrong, "not authorized"},
		{"read-only principal", "reader:" + reader, reader, "forbidden"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "icectl.yaml")
			if err := os.WriteFile(cfg, []byte(e.configYAML("gated", gate.URL, c.credential)), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"table", "set-properties", tbl.Ident.String(), "owner=mallory", "--catalog", "gated"},
				{"table", "remove-properties", tbl.Ident.String(), "owner", "--catalog", "gated"},
			} {
				r := icectl(t, baseEnv(t, "ICECTL_CONFIG="+cfg), args...)
				if r.code != 1 || r.stdout != "" {
					t.Errorf("%s\nwant exit 1 and no output", r)
				}
				if !strings.Contains(strings.ToLower(r.stderr), c.says) {
					t.Errorf("stderr %q does not say %q", r.stderr, c.says)
				}
				if strings.Contains(r.stderr, c.secret) {
					t.Errorf("stderr shows the secret: %q", r.stderr)
				}
			}
		})
	}
	loaded, err := direct.LoadTable(context.Background(), tbl.Ident)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.MetadataLocation != tbl.MetadataLocation || loaded.Metadata.Properties["owner"] != "tests" {
		t.Errorf("a refused command changed the table: %s, owner %q", loaded.MetadataLocation, loaded.Metadata.Properties["owner"])
	}
	// The gate let the right credential through: the same commands with it
	// reach the server (so the refusals above were the gate's, for the
	// credential, and not a broken route).
	cfg := filepath.Join(t.TempDir(), "icectl.yaml")
	if err := os.WriteFile(cfg, []byte(e.configYAML("gated", gate.URL, e.credential)), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := icectl(t, baseEnv(t, "ICECTL_CONFIG="+cfg), "table", "set-properties", tbl.Ident.String(), "owner=gate-ok", "--catalog", "gated"); r.code != 0 {
		t.Fatalf("%s\nwant exit 0 with the right credential through the gate", r)
	}
	if loaded, err = direct.LoadTable(context.Background(), tbl.Ident); err != nil {
		t.Fatal(err)
	}
	if owner := loaded.Metadata.Properties["owner"]; owner != "gate-ok" {
		t.Errorf("the commit through the gate did not land: owner %q", owner)
	}
}

// TestCorruptMetadataSetProperties: when the current metadata file is
// corrupt, set-properties and remove-properties fail with exit 1 and leave
// the catalog row and every file byte for byte as they were.
func TestCorruptMetadataSetProperties(t *testing.T) {
	for _, c := range []struct {
		name string
		data func(good []byte) []byte
	}{
		{"garbage", func([]byte) []byte { return []byte("this is not table metadata\x00\xff") }},
		{"truncated", func(good []byte) []byte { return good[:len(good)/2] }},
		{"empty", func([]byte) []byte { return nil }},
		{"bad gzip", func([]byte) []byte { return []byte{0x1f, 0x8b, 0x08, 0x00, 0x01, 0x02} }},
		{"invalid", func(good []byte) []byte {
			return []byte(strings.Replace(string(good), `"format-version"`, `"format-version-x"`, 1))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tg := sqliteTarget(t)
			ctx := context.Background()
			cat, err := catalogs.Create(ctx, catalog.Config{Name: tg.name, URI: tg.uri, Warehouse: tg.warehouse})
			if err != nil {
				t.Fatal(err)
			}
			id := catalog.Ident{Namespace: []string{"db"}, Name: "t"}
			tbl := catalogtest.NewTable(t, cat, id, map[string]string{"owner": "tests"})
			cat.Close()
			cur := strings.TrimPrefix(tbl.MetadataLocation, "file://")
			good, err := os.ReadFile(cur)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cur, c.data(good), 0o644); err != nil {
				t.Fatal(err)
			}
			db, err := sql.Open(tg.driver, tg.dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			wh := strings.TrimPrefix(tg.warehouse, "file://")
			rowCur, rowPrev := catalogRow(t, db, false, tg.name, id)
			files := dirBytes(t, wh)

			for _, args := range [][]string{
				{"table", "set-properties", "db.t", "owner=other"},
				{"table", "set-properties", "db.t", "owner=other", "--dry-run"},
				{"table", "remove-properties", "db.t", "owner"},
			} {
				r := icectl(t, baseEnv(t), append(args, "--catalog-uri", tg.uri, "--catalog-name", tg.name)...)
				if r.code != 1 || r.stdout != "" {
					t.Errorf("%s\nwant exit 1 and no output", r)
				}
				if !strings.Contains(r.stderr, cur) && !strings.Contains(r.stderr, filepath.Base(cur)) {
					t.Errorf("stderr %q does not name the corrupt file %s", r.stderr, filepath.Base(cur))
				}
			}
			if gotCur, gotPrev := catalogRow(t, db, false, tg.name, id); gotCur != rowCur || gotPrev != rowPrev {
				t.Errorf("catalog row changed: (%s, %s) -> (%s, %s)", rowCur, rowPrev, gotCur, gotPrev)
			}
			if after := dirBytes(t, wh); after != files {
				t.Errorf("files under the warehouse changed:\nbefore:\n%s\nafter:\n%s", files, after)
			}
		})
	}
}

// dirBytes lists every file under dir with its full content.
func dirBytes(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lines = append(lines, p+" "+string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
