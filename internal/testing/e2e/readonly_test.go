package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogs"
	"github.com/icectl/icectl/catalog/caturi"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/internal/cli"
)

// Every read-only command and dry run, on every kind of catalog, changes
// no byte: not of the catalog database and its side files, not of the
// warehouse, not of the REST server's table pointer.

func TestReadOnlySQLiteRollback(t *testing.T) { readOnly(t, sqliteBackend(t), sqliteDB) }
func TestReadOnlySQLiteWAL(t *testing.T)      { readOnly(t, sqliteWALBackend(t), sqliteDB) }
func TestReadOnlyPostgres(t *testing.T)       { readOnly(t, postgresBackend(t), postgresRows) }
func TestReadOnlyREST(t *testing.T)           { readOnly(t, restBackend(t), nil) }
func TestReadOnlyFileCatalog(t *testing.T)    { readOnly(t, fileBackend(t), nil) }

// sqliteWALBackend is sqliteBackend with the database created in WAL
// mode, as the demo creates its catalog.
func sqliteWALBackend(t *testing.T) backend {
	b := sqliteBackend(t)
	cat, err := sqlcat.Create(context.Background(), b.cfg, sqlcat.WAL())
	if err != nil {
		t.Fatal(err)
	}
	cat.Close()
	return b
}

// fileBackend is a file (Hadoop layout) catalog in a temp dir.
func fileBackend(t *testing.T) backend {
	wh := "file://" + filepath.Join(t.TempDir(), "wh")
	return backend{cfg: catalog.Config{Name: "e2e", URI: wh}, ns: "e2e", scheme: "file://"}
}

// state describes a backend's catalog beyond the table's files, for
// comparison before and after.
type state func(t *testing.T, b backend) string

// sqliteDB is every file beside the SQLite database (the database, its
// journal, -wal and -shm) with its bytes, and the journal mode of the
// header.
func sqliteDB(t *testing.T, b backend) string {
	u, err := caturi.Parse(b.cfg.URI)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Dir(u.Path))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(filepath.Dir(u.Path), e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "%s %x\n", e.Name(), sha256.Sum256(data))
		if e.Name() == filepath.Base(u.Path) && len(data) > 19 {
			fmt.Fprintf(&out, "journal mode bytes %d,%d\n", data[18], data[19])
		}
	}
	return out.String()
}

// postgresRows is the catalog's rows in PostgreSQL.
func postgresRows(t *testing.T, b backend) string {
	db, err := sql.Open("pgx", b.cfg.URI)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out strings.Builder
	for _, q := range []string{
		`SELECT table_namespace || '|' || table_name || '|' || coalesce(metadata_location, '') || '|' || coalesce(previous_metadata_location, '') FROM iceberg_tables WHERE catalog_name = $1 ORDER BY 1`,
		`SELECT namespace || '|' || coalesce(property_key, '') || '|' || coalesce(property_value, '') FROM iceberg_namespace_properties WHERE catalog_name = $1 ORDER BY 1`,
	} {
		rows, err := db.Query(q, b.cfg.Name)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out.WriteString(s + "\n")
		}
		rows.Close()
	}
	return out.String()
}

// tableFiles lists every file under the table's location with its bytes,
// and the metadata location the catalog points at.
func tableFiles(t *testing.T, cat catalog.Catalog, id catalog.Ident) string {
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	lister, ok := tbl.IO.(fileio.Lister)
	if !ok {
		t.Fatalf("%T cannot list", tbl.IO)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "current %s\n", tbl.MetadataLocation)
	err = lister.List(ctx, strings.TrimSuffix(tbl.Metadata.Location, "/")+"/", func(fi fileio.FileInfo) error {
		data, err := fileio.ReadFile(ctx, tbl.IO, fi.Path)
		if err != nil {
			return err
		}
		fmt.Fprintf(&out, "%s %x\n", fi.Path, sha256.Sum256(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// catalogEnv names the backend's catalog to the CLI as catalog "ro" through
// ICECTL_CATALOG__RO__* variables (so REST credentials and S3 settings
// travel as a user's would), and sets the AWS variables the inspect
// commands read for s3:// files.
func catalogEnv(t *testing.T, b backend) {
	set := func(key, v string) {
		k := strings.ToUpper(strings.NewReplacer(".", "__", "-", "_").Replace(key))
		t.Setenv("ICECTL_CATALOG__RO__"+k, v)
	}
	set("uri", b.cfg.URI)
	if b.cfg.Warehouse != "" {
		set("warehouse", b.cfg.Warehouse)
	}
	for k, v := range b.cfg.Props {
		set(k, v)
	}
	for k, env := range map[string]string{
		fileio.S3AccessKeyID: "AWS_ACCESS_KEY_ID", fileio.S3SecretAccessKey: "AWS_SECRET_ACCESS_KEY",
		fileio.S3Endpoint: "AWS_ENDPOINT_URL_S3", fileio.ClientRegion: "AWS_REGION",
	} {
		if v := b.cfg.Props[k]; v != "" {
			t.Setenv(env, v)
		}
	}
}

func readOnly(t *testing.T, b backend, extra state) {
	ctx := context.Background()
	cat := b.open(t)
	const name = "ro"
	w := newWriter(t, b, cat, name, 3)
	d1, d2 := w.data(t, mkRows("eu", span(0, 10)...)), w.data(t, mkRows("us", span(10, 20)...))
	w.commit(t, []manifest.DataFile{d1, d2})
	w.commit(t, []manifest.DataFile{w.data(t, mkRows("eu", span(20, 25)...))})
	dv := w.dv(t, d1, 2, 5, 7)
	w.commit(t, nil, dv)
	w.commit(t, nil, w.equalityDeletes(t, []any{"us"}, 11, 19))
	id := catalog.Ident{Namespace: []string{b.ns}, Name: name}
	tbl, err := cat.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	cat.Close()
	catalogEnv(t, b)

	// The metadata files the inspect commands read.
	var manifestPath string
	snapList := tbl.Metadata.CurrentSnapshot().ManifestList
	prefix := strings.TrimSuffix(tbl.Metadata.Location, "/") + "/metadata/"
	err = tbl.IO.(fileio.Lister).List(ctx, prefix, func(fi fileio.FileInfo) error {
		if base := fi.Path[strings.LastIndex(fi.Path, "/")+1:]; strings.HasSuffix(base, ".avro") && !strings.HasPrefix(base, "snap-") && manifestPath == "" {
			manifestPath = fi.Path
		}
		return nil
	})
	if err != nil || manifestPath == "" {
		t.Fatalf("no manifest under %s: %v", prefix, err)
	}

	table := b.ns + "." + name
	firstSnap := tbl.Metadata.Snapshots[0].SnapshotID
	cat2 := []string{"--catalog", "ro", "--catalog-name", b.cfg.Name}
	s3 := []string{"--s3-path-style"}
	runs := [][]string{
		append([]string{"table", "list"}, cat2...),
		append([]string{"table", "list", b.ns}, cat2...),
		append([]string{"table", "show", table}, cat2...),
		append([]string{"snapshots", table}, cat2...),
		append([]string{"files", table}, cat2...),
		append([]string{"files", table, "--deletes"}, cat2...),
		append([]string{"health", table}, cat2...),
		append([]string{"compact", table, "--dry-run"}, cat2...),
		append([]string{"table", "set-properties", table, "owner=x", "--dry-run"}, cat2...),
		append([]string{"table", "remove-properties", table, "owner", "--dry-run"}, cat2...),
		// The maintenance verbs' dry runs and checks: each reads the whole
		// table (manifests, delete files, the listing) and must still write
		// nothing, not even a journal, a lock or a trash directory.
		append([]string{"expire", table, "--dry-run", "--older-than", "0d", "--retain-last", "1"}, cat2...),
		append([]string{"orphan", table, "--dry-run"}, cat2...),
		append([]string{"orphan", table, "--dry-run", "--older-than", "1s", "--unsafe-allow-recent"}, cat2...),
		append([]string{"dv", "merge", table, "--dry-run"}, cat2...),
		append([]string{"dv", "merge", table, "--dry-run", "--equality"}, cat2...),
		append([]string{"rewrite-manifests", table, "--dry-run"}, cat2...),
		append([]string{"upgrade", table, "--to", "3", "--check"}, cat2...),
		append([]string{"verify", "deletes", table, "--check-files"}, cat2...),
		append([]string{"verify", "lineage", table, "--from", fmt.Sprint(firstSnap), "--key", "id"}, cat2...),
		append([]string{"tag", "list", table}, cat2...),
		append([]string{"branch", "list", table}, cat2...),
		{"health", tbl.MetadataLocation},
		{"compact", tbl.MetadataLocation, "--dry-run"},
		append([]string{"inspect", "metadata", tbl.MetadataLocation}, s3...),
		append([]string{"inspect", "manifest", snapList}, s3...),
		append([]string{"inspect", "manifest", manifestPath}, s3...),
		append([]string{"inspect", "parquet", d1.FilePath}, s3...),
		append([]string{"inspect", "puffin", dv.FilePath}, s3...),
		append([]string{"inspect", "dv", dv.FilePath, "--offset", fmt.Sprint(*dv.ContentOffset), "--length", fmt.Sprint(*dv.ContentSizeInBytes), "--all"}, s3...),
	}

	snapshot := func() string {
		c, err := catalogs.Open(ctx, b.cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		s := tableFiles(t, c, id)
		if extra != nil {
			s += extra(t, b)
		}
		return s
	}
	before := snapshot()
	if extra != nil && strings.Contains(b.cfg.URI, "sqlite") {
		// Creating it is the only thing that set the journal mode.
		if strings.HasSuffix(t.Name(), "WAL") != strings.Contains(before, "journal mode bytes 2,2") {
			t.Fatalf("fixture in the wrong journal mode:\n%s", before)
		}
	}
	for _, args := range runs {
		for _, output := range []string{"text", "json"} {
			var out, errOut bytes.Buffer
			f := &cli.Factory{Out: &out, ErrOut: &errOut, Getenv: os.Getenv, Output: "text"}
			if code := cli.Run(ctx, f, append(append([]string{}, args...), "--output", output)); code != cli.ExitOK {
				t.Errorf("icectl %v -o %s: exit %d: %s", args, output, code, errOut.String())
			}
		}
	}
	if after := snapshot(); after != before {
		t.Errorf("read-only commands changed the catalog or the table:\n%s", diffLines(before, after))
	}
}

// diffLines lists the lines only one of a and b holds, shortened.
func diffLines(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	var out []string
	for l := range ma {
		if !mb[l] {
			out = append(out, "- "+short(l))
		}
	}
	for l := range mb {
		if !ma[l] {
			out = append(out, "+ "+short(l))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func short(s string) string {
	if len(s) > 160 {
		return s[:160] + "..."
	}
	return s
}
