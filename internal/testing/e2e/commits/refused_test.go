package commits

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// objects lists every object under the table's location with its size
// and content hash, read through the table's IO.
func objects(t *testing.T, tbl *catalog.Table) string {
	t.Helper()
	ctx := context.Background()
	l, ok := tbl.IO.(fileio.Lister)
	if !ok {
		t.Fatalf("the table's IO (%T) cannot list", tbl.IO)
	}
	var lines []string
	err := l.List(ctx, strings.TrimSuffix(tbl.Metadata.Location, "/")+"/", func(fi fileio.FileInfo) error {
		data, err := fileio.ReadFile(ctx, tbl.IO, fi.Path)
		if err != nil {
			return err
		}
		lines = append(lines, fmt.Sprintf("%s %d %x", fi.Path, len(data), sha256.Sum256(data)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestVerbsRefusedByCatalog: every verb that changes a table, given work
// to do on a REST catalog that lets it read but refuses its commits (a
// read-only principal: 403 on the commit), fails with one line and exit
// 1, and the table's metadata pointer and every object of its location
// are as before: the first write a verb attempts is its claim, which the
// catalog refuses, so no data or metadata file is written either.
func TestVerbsRefusedByCatalog(t *testing.T) {
	e := needREST(t)
	direct := e.open(t, e.uri)
	tbl := e.newTable(t, direct)
	for i := range 6 {
		tbl = appendOK(t, direct, tbl, writeParquet(t, tbl, fmt.Sprintf("small-%d", i), []int64{int64(2 * i), int64(2*i + 1)}))
	}
	gate := testenv.NewRESTAuthGate(t, e.uri, e.credential)
	const reader = "reader-secret-5c1d"
	gate.AllowReadOnly("reader:" + reader)
	cfg := filepath.Join(t.TempDir(), "icectl.yaml")
	if err := os.WriteFile(cfg, []byte(e.configYAML("gated", gate.URL, "reader:"+reader)), 0o600); err != nil {
		t.Fatal(err)
	}
	before := objects(t, tbl)
	if n := strings.Count(before, ".parquet "); n != 6 {
		t.Fatalf("%d data files listed under %s, want 6:\n%s", n, tbl.Metadata.Location, before)
	}
	name := tbl.Ident.String()
	for _, args := range [][]string{
		{"compact", name},
		{"rewrite-manifests", name},
		{"expire", name, "--older-than", "0s", "--retain-last", "1"},
		{"upgrade", name, "--to", "3", "--force"},
	} {
		r := icectl(t, baseEnv(t, "ICECTL_CONFIG="+cfg), append(args, "--catalog", "gated")...)
		if r.code != 1 || !strings.Contains(strings.ToLower(r.stderr), "forbidden") || strings.Contains(r.stderr, reader) {
			t.Errorf("%s\nwant exit 1 saying forbidden, without the secret", r)
		}
		loaded, err := direct.LoadTable(context.Background(), tbl.Ident)
		if err != nil {
			t.Fatal(err)
		}
		if loaded.MetadataLocation != tbl.MetadataLocation {
			t.Errorf("%v: the table moved to %s", args, loaded.MetadataLocation)
		}
		if after := objects(t, tbl); after != before {
			t.Errorf("%v changed the table's objects:\nbefore:\n%s\nafter:\n%s", args, before, after)
		}
	}
}
