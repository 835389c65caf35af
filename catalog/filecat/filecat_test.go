package filecat

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogtest"
)

func newCatalog(t *testing.T) catalog.Catalog {
	c, err := Create(context.Background(), catalog.Config{Name: "test", URI: "file://" + t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestConformance(t *testing.T) {
	catalogtest.Run(t, newCatalog)
}

func TestHadoopLayout(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	c, err := Open(ctx, catalog.Config{URI: "file://" + wh})
	if err != nil {
		t.Fatal(err)
	}
	id := catalog.Ident{Namespace: []string{"a", "b"}, Name: "t"}
	tbl := catalogtest.NewTable(t, c, id, nil)
	dir := filepath.Join(wh, "a", "b", "t", "metadata")
	if want := "file://" + filepath.ToSlash(dir) + "/v1.metadata.json"; tbl.MetadataLocation != want {
		t.Errorf("first version at %s, want %s", tbl.MetadataLocation, want)
	}
	reqs, ups := catalogtest.AppendSnapshot(tbl.Metadata, 7)
	if _, err := c.CommitTable(ctx, tbl, reqs, ups); err != nil {
		t.Fatal(err)
	}
	hint, err := os.ReadFile(filepath.Join(dir, versionHintFile))
	if err != nil || string(hint) != "2" {
		t.Errorf("version hint = %q, %v; want 2", hint, err)
	}
	// A stale hint (commit that crashed before updating it) is passed by
	// probing for the next version.
	if err := os.WriteFile(filepath.Join(dir, versionHintFile), []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := c.LoadTable(ctx, id)
	if err != nil || !strings.HasSuffix(loaded.MetadataLocation, "/v2.metadata.json") {
		t.Fatalf("load with stale hint: %v, %v", loaded, err)
	}
	// A missing hint falls back to the highest version present.
	os.Remove(filepath.Join(dir, versionHintFile))
	loaded, err = c.LoadTable(ctx, id)
	if err != nil || !strings.HasSuffix(loaded.MetadataLocation, "/v2.metadata.json") {
		t.Fatalf("load without hint: %v, %v", loaded, err)
	}
	// A version written by another committer is picked up even before
	// its hint.
	data, _ := os.ReadFile(filepath.Join(dir, "v2.metadata.json"))
	if err := os.WriteFile(filepath.Join(dir, "v3.metadata.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	reqs, ups = catalogtest.AppendSnapshot(loaded.Metadata, 8)
	next, err := c.CommitTable(ctx, loaded, reqs, ups)
	if !errors.Is(err, catalog.ErrCommitConflict) && (err != nil || !strings.HasSuffix(next.MetadataLocation, "/v4.metadata.json")) {
		t.Errorf("commit after an external version: %v, %v; want v4 or a conflict", next, err)
	}
}

func TestClaimVersionExclusive(t *testing.T) {
	dir := t.TempDir()
	if _, err := claimVersion(dir, 4, false, []byte("first")); err != nil {
		t.Fatal(err)
	}
	if _, err := claimVersion(dir, 4, false, []byte("second")); err == nil {
		t.Fatal("second claim of version 4 succeeded")
	}
	if _, err := claimVersion(dir, 4, true, []byte("third")); err == nil {
		t.Fatal("claim of version 4 under the gzip name succeeded")
	}
	got, _ := os.ReadFile(filepath.Join(dir, "v4.metadata.json"))
	if string(got) != "first" {
		t.Errorf("version 4 holds %q, want the first writer's", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left files behind: %v", entries)
	}
}

// TestOpenCreatesNothing: reading a file catalog whose warehouse does not
// exist is an error and makes no directory; Create makes it.
func TestOpenCreatesNothing(t *testing.T) {
	ctx := context.Background()
	wh := filepath.Join(t.TempDir(), "nowhere", "wh")
	_, err := Open(ctx, catalog.Config{URI: "file://" + wh})
	if err == nil || !strings.Contains(err.Error(), wh+" does not exist") {
		t.Errorf("open a missing warehouse: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(wh)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("open created %s: %v", filepath.Dir(wh), err)
	}
	c, err := Create(ctx, catalog.Config{URI: "file://" + wh})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := Open(ctx, catalog.Config{URI: "file://" + wh}); err != nil {
		t.Errorf("open after create: %v", err)
	}
}

func TestRefusesRemoteWarehouse(t *testing.T) {
	_, err := Open(context.Background(), catalog.Config{URI: "s3://bucket/wh"})
	if err == nil || !strings.Contains(err.Error(), "local storage only") {
		t.Errorf("open on S3: %v, want a refusal naming local storage", err)
	}
}

func TestNamespacePropertiesRefused(t *testing.T) {
	c := newCatalog(t)
	if err := c.CreateNamespace(context.Background(), []string{"db"}, map[string]string{"owner": "x"}); err == nil {
		t.Error("namespace properties accepted")
	}
}

func TestOpenMetadataFileReadOnly(t *testing.T) {
	ctx := context.Background()
	c := newCatalog(t)
	tbl := catalogtest.NewTable(t, c, catalog.Ident{Namespace: []string{"db"}, Name: "t"}, nil)
	ro, err := OpenMetadataFile(ctx, tbl.MetadataLocation, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ro.Metadata.TableUUID != tbl.Metadata.TableUUID {
		t.Errorf("uuid %s, want %s", ro.Metadata.TableUUID, tbl.Metadata.TableUUID)
	}
	reqs, ups := catalogtest.AppendSnapshot(ro.Metadata, 1)
	if _, err := (Static{Table: ro}).CommitTable(ctx, ro, reqs, ups); !errors.Is(err, catalog.ErrReadOnly) {
		t.Errorf("commit through Static: %v, want ErrReadOnly", err)
	}
	if err := ro.IO.Remove(ctx, tbl.MetadataLocation); err == nil {
		t.Error("read-only table IO removed a file")
	}
	if _, err := OpenMetadataFile(ctx, tbl.MetadataLocation+".missing", nil); err == nil {
		t.Error("missing metadata file opened")
	}
}

// TestForeignWarehouse: pointed at a SQL or REST catalog's warehouse
// (namespace.db/table, NNNNN-uuid.metadata.json), the file catalog says
// whose it is, listing and loading alike, and creates nothing.
func TestForeignWarehouse(t *testing.T) {
	wh := t.TempDir()
	md := filepath.Join(wh, "shop.db", "orders", "metadata")
	if err := os.MkdirAll(md, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(md, "00001-5f1c.metadata.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Open(context.Background(), catalog.Config{Name: "f", URI: "file://" + wh})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ListNamespaces(context.Background(), nil)
	if !errors.Is(err, ErrForeignWarehouse) || !strings.Contains(err.Error(), "shop.db/orders") {
		t.Errorf("list: %v", err)
	}
	_, err = c.LoadTable(context.Background(), catalog.Ident{Namespace: []string{"shop"}, Name: "orders"})
	if !errors.Is(err, catalog.ErrNoSuchTable) || !errors.Is(err, ErrForeignWarehouse) {
		t.Errorf("load: %v", err)
	}
	entries, _ := os.ReadDir(wh)
	if len(entries) != 1 {
		t.Errorf("the warehouse holds %d entries, want the one it had", len(entries))
	}
}
