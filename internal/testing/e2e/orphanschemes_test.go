package e2e

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	icefx "github.com/icectl/icectl/internal/testing/fixture"
)

// A table written through s3a:// on the S3 server, and one written
// through abfss:// (the dfs endpoint) on Azurite, each with a live file
// named in the other form too (s3://, wasb:// through the blob endpoint):
// `icectl orphan` listing the table in either form finds no live file an
// orphan (Spark's equal_schemes and the account's two endpoints; Java's
// remove_orphan_files deleted live data so, iceberg #4346) and finds, and
// deletes, a planted one.

func TestOrphanEqualSchemesS3(t *testing.T) {
	t.Parallel()
	orphanEqualSchemes(t, sqliteS3Backend, func(loc string) (string, string) {
		// s3[a]://bucket/p -> s3a://bucket/p, s3://bucket/p
		rest := loc[strings.Index(loc, "://")+3:]
		return "s3a://" + rest, "s3://" + rest
	})
}

func TestOrphanEqualSchemesAzure(t *testing.T) {
	t.Parallel()
	orphanEqualSchemes(t, sqliteAzureBackend, func(loc string) (string, string) {
		// abfs[s]://ctr@acct.dfs.core.windows.net/p ->
		// abfss://ctr@acct.dfs.core.windows.net/p, wasb://ctr@acct.blob.core.windows.net/p
		rest := loc[strings.Index(loc, "://")+3:]
		return "abfss://" + rest, "wasb://" + strings.Replace(rest, ".dfs.", ".blob.", 1)
	})
}

// orphanEqualSchemes makes a table at the written form of b's warehouse,
// its files named in the written form and one in the other form, and runs
// orphan listing the other form (dry run) and the written form (deleting).
func orphanEqualSchemes(t *testing.T, mk func(*testing.T) backend, forms func(string) (written, other string)) {
	b := mk(t)
	ctx := context.Background()
	wh, _ := forms(b.cfg.Warehouse)
	fx := icefx.NewSQLite(t, icefx.WithName(b.cfg.Name), icefx.WithWarehouse(wh), icefx.WithProps(b.cfg.Props))
	b.cfg.URI, b.cfg.Warehouse = fx.URI, wh
	ft := fx.Table(t, icefx.TableOptions{Namespace: b.ns, Name: "schemes"})
	tbl := ft.Load(t)
	loc := tbl.Metadata.Location
	written, other := forms(loc)
	if loc != written {
		t.Fatalf("table location %s, want %s", loc, written)
	}
	put := func(path string) {
		t.Helper()
		if err := fileio.WriteFile(ctx, tbl.IO, path, []byte("bytes of "+path)); err != nil {
			t.Fatal(err)
		}
	}
	// Live: one file named as written, one named in the other form (as a
	// second engine would write it); both stored once.
	ch := table.Change{Operation: spec.OperationAppend}
	for _, p := range []string{written + "/data/live-1.parquet", other + "/data/live-2.parquet"} {
		put(p)
		ch.AddData = append(ch.AddData, icefx.Listed(p, nil, 1, int64(len("bytes of "+p))))
	}
	tbl = ft.Commit(t, tbl, ch)
	planted := written + "/data/planted.parquet"
	put(planted)
	time.Sleep(1100 * time.Millisecond) // older than --older-than 1s

	run := func(args ...string) string {
		t.Helper()
		out, stderr, code := runICECTLOn(t, b, args...)
		t.Logf("icectl %s: exit %d\n%s%s", strings.Join(args, " "), code, out, stderr)
		if code != 0 {
			t.Fatalf("icectl %s: exit %d", strings.Join(args, " "), code)
		}
		return out
	}
	ident := b.ns + ".schemes"
	before := storeObjects(t, tbl.IO, written+"/")
	out := run("orphan", ident, "--older-than", "1s", "--unsafe-allow-recent", "--dry-run", "--location", other)
	if !strings.Contains(out, "planted.parquet") || strings.Contains(out, "live-") || strings.Contains(out, ".metadata.json") {
		t.Errorf("orphan --dry-run --location %s: want only the planted file", other)
	}
	if after := storeObjects(t, tbl.IO, written+"/"); !maps.Equal(after, before) {
		t.Fatal("orphan --dry-run changed the store")
	}
	out = run("orphan", ident, "--older-than", "1s", "--unsafe-allow-recent")
	if !strings.Contains(out, "planted.parquet") || strings.Contains(out, "live-") {
		t.Errorf("orphan at %s: want only the planted file", written)
	}
	// Every file but the planted one is still there, unchanged; the run
	// added only the metadata files of its claim.
	after := storeObjects(t, tbl.IO, written+"/")
	for p, h := range before {
		if got, ok := after[p]; p != planted && (!ok || got != h) {
			t.Errorf("orphan deleted or changed %s", p)
		}
	}
	if _, ok := after[planted]; ok {
		t.Errorf("orphan left the planted %s", planted)
	}
	for p := range after {
		if _, ok := before[p]; !ok && !strings.HasSuffix(p, ".metadata.json") {
			t.Errorf("orphan added %s", p)
		}
	}
	cat := b.open(t)
	got, err := cat.LoadTable(ctx, catalog.Ident{Namespace: []string{b.ns}, Name: "schemes"})
	if err != nil {
		t.Fatal(err)
	}
	checkReachableExist(t, got)
}
