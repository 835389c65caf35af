package e2e

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// Every maintenance verb on a table whose warehouse is on Google Cloud
// Storage (fake-gcs-server) and on Azure Blob Storage (Azurite), through a
// SQLite catalog: iceberg-go writes the table there (appends and
// merge-on-read deletes), icectl compacts, rewrites manifests, expires and
// removes a planted orphan (listing and deleting on the store), and
// iceberg-go reads the same rows after each verb. Refusals (the store
// unreachable, bad input) leave every object of the warehouse
// byte-identical.

func TestStoresGCS(t *testing.T) {
	t.Parallel()
	storeWalk(t, sqliteGCSBackend)
}

func TestStoresAzure(t *testing.T) {
	t.Parallel()
	storeWalk(t, sqliteAzureBackend)
}

// TestStoresRestGCS and TestStoresRestAzure walk the verbs through the
// REST catalog: Iceberg's REST fixture (Java), whose ResolvingFileIO
// writes the metadata files to each emulator. (Not named REST: they use
// the stores' own fixture, not the REST variables weed mini stands in
// for.)
func TestStoresRestGCS(t *testing.T) {
	t.Parallel()
	storeWalk(t, restGCSBackend)
}

func TestStoresRestAzure(t *testing.T) {
	t.Parallel()
	storeWalk(t, restAzureBackend)
}

func TestMaintenanceRestGCS(t *testing.T) {
	t.Parallel()
	maintenance(t, restGCSBackend)
}

// TestMaintenanceSQLiteGCS and TestMaintenanceSQLiteAzure are the
// expire/orphan/tag/rollback walk of maintenance_test.go on each store.
func TestMaintenanceSQLiteGCS(t *testing.T) {
	t.Parallel()
	maintenance(t, sqliteGCSBackend)
}

func TestMaintenanceSQLiteAzure(t *testing.T) {
	t.Parallel()
	maintenance(t, sqliteAzureBackend)
}

// sqliteGCSBackend is a SQLite catalog with its warehouse on the GCS
// emulator. icectl gets Java's and PyIceberg's properties; iceberg-go,
// whose gcs.endpoint names the JSON API's path, its own.
func sqliteGCSBackend(t *testing.T) backend {
	props, base := testenv.GCS(t)
	uri := "sqlite:///" + filepath.Join(t.TempDir(), "catalog.db")
	wh := base + "/" + uniqueName(t, "wh-")
	args := []string{"--catalog-uri", uri, "--catalog-name", "e2e", "--warehouse", wh,
		"--prop", "gcs.endpoint=" + props[fileio.GCSServiceHost] + "/storage/v1/",
		"--prop", "gcs.no-auth=true", "--prop", "gcs.usejsonapi=true"}
	return backend{cfg: catalog.Config{Name: "e2e", URI: uri, Warehouse: wh, Props: props}, goArgs: args, ns: "e2e", scheme: "gs://"}
}

// sqliteAzureBackend is a SQLite catalog with its warehouse on Azurite,
// at abfs://CONTAINER@ACCOUNT.dfs.core.windows.net/...; both icectl and
// iceberg-go take the account's connection string under Java's
// per-account name.
func sqliteAzureBackend(t *testing.T) backend {
	pyProps, base := testenv.Azure(t)
	account := testenv.Need(t, testenv.AzureAccount, "Azure account")
	props := map[string]string{fileio.ADLSConnectionStringPrefix + account: pyProps[fileio.ADLSConnectionString]}
	uri := "sqlite:///" + filepath.Join(t.TempDir(), "catalog.db")
	wh := base + "/" + uniqueName(t, "wh-")
	args := []string{"--catalog-uri", uri, "--catalog-name", "e2e", "--warehouse", wh}
	for k, v := range props {
		args = append(args, "--prop", k+"="+v)
	}
	return backend{cfg: catalog.Config{Name: "e2e", URI: uri, Warehouse: wh, Props: props}, goArgs: args, ns: "e2e", scheme: "abfs://"}
}

// restGCSBackend is the stores' REST fixture, its tables in its
// warehouse on the GCS emulator.
func restGCSBackend(t *testing.T) backend {
	uri := testenv.Need(t, testenv.RESTStoresURI, "REST fixture on GCS and Azure")
	props, _ := testenv.GCS(t)
	wh := "gs://" + testenv.Need(t, testenv.GCSBucket, "GCS bucket") + "/rest"
	args := []string{"--rest-uri", uri, "--warehouse", wh, "--catalog-name", "rest",
		"--prop", "gcs.endpoint=" + props[fileio.GCSServiceHost] + "/storage/v1/",
		"--prop", "gcs.no-auth=true", "--prop", "gcs.usejsonapi=true"}
	return backend{cfg: catalog.Config{Name: "rest", URI: uri, Warehouse: wh, Props: props}, goArgs: args, ns: uniqueName(t, "e2e_"), scheme: "gs://"}
}

// restAzureBackend is the stores' REST fixture, its tables created at
// locations on Azurite (the fixture's warehouse is on GCS, and its JDBC
// catalog ignores a namespace's location).
func restAzureBackend(t *testing.T) backend {
	uri := testenv.Need(t, testenv.RESTStoresURI, "REST fixture on GCS and Azure")
	pyProps, base := testenv.Azure(t)
	account := testenv.Need(t, testenv.AzureAccount, "Azure account")
	props := map[string]string{fileio.ADLSConnectionStringPrefix + account: pyProps[fileio.ADLSConnectionString]}
	wh := "gs://" + testenv.Need(t, testenv.GCSBucket, "GCS bucket") + "/rest"
	args := []string{"--rest-uri", uri, "--warehouse", wh, "--catalog-name", "rest"}
	for k, v := range props {
		args = append(args, "--prop", k+"="+v)
	}
	ns := uniqueName(t, "e2e_")
	return backend{cfg: catalog.Config{Name: "rest", URI: uri, Warehouse: wh, Props: props}, goArgs: args, ns: ns, scheme: "abfs://", tables: base + "/" + ns}
}

// storeObjects returns the SHA-256 of every object under prefix.
func storeObjects(t *testing.T, fio fileio.FileIO, prefix string) map[string][32]byte {
	t.Helper()
	ctx := context.Background()
	out := map[string][32]byte{}
	err := fio.(fileio.Lister).List(ctx, prefix, func(fi fileio.FileInfo) error {
		data, err := fileio.ReadFile(ctx, fio, fi.Path)
		if err != nil {
			return err
		}
		out[fi.Path] = sha256.Sum256(data)
		return nil
	})
	if err != nil {
		t.Fatalf("list %s: %v", prefix, err)
	}
	return out
}

// writeStoreFixture has iceberg-go write b.ns.name: rows rows in a few
// appends, merge-on-read deletes of every 7th, partitioned by day.
func writeStoreFixture(t *testing.T, b backend, name string, rows int) {
	t.Helper()
	args := []string{"write-fixture", "--table", b.ns + "." + name, "--format-version", "2",
		"--rows", fmt.Sprint(rows), "--delete-every", "7", "--partitioned"}
	if b.tables != "" {
		args = append(args, "--location", b.tables+"/"+name)
	}
	icebergRead(t, append(args, b.goArgs...)...)
}

func storeWalk(t *testing.T, mk func(*testing.T) backend) {
	readerBin(t)
	b := mk(t)
	ctx := context.Background()
	const name = "store_walk"
	ident := b.ns + "." + name
	writeStoreFixture(t, b, name, 60)
	cat := b.open(t)
	id := catalog.Ident{Namespace: []string{b.ns}, Name: name}
	tbl, err := cat.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tbl.Metadata.Location, b.scheme) {
		t.Fatalf("table location %s, want one on %s", tbl.Metadata.Location, b.scheme)
	}
	wh := strings.TrimRight(tbl.Metadata.Location, "/") + "/"
	want := goScanTable(t, b, name, false)
	if want.RowCount == 0 {
		t.Fatal("iceberg-go's fixture reads no rows")
	}
	run := func(args ...string) string {
		t.Helper()
		out, stderr, code := runICECTLOn(t, b, args...)
		if code != 0 {
			t.Fatalf("icectl %s: exit %d: %s%s", strings.Join(args, " "), code, out, stderr)
		}
		return out
	}
	sameRows := func(after string) {
		t.Helper()
		if got := goScanTable(t, b, name, false); got.Checksum != want.Checksum || got.RowCount != want.RowCount {
			t.Fatalf("after %s iceberg-go reads %d rows (%s), before %d (%s)", after, got.RowCount, got.Checksum, want.RowCount, want.Checksum)
		}
	}

	// Refusals change nothing on the store: an endpoint nobody listens on,
	// and bad input.
	objects := storeObjects(t, tbl.IO, wh)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()
	down := b
	down.cfg.Props = maps.Clone(b.cfg.Props)
	for k, v := range down.cfg.Props {
		switch {
		case k == fileio.GCSServiceHost:
			down.cfg.Props[k] = dead
		case strings.HasPrefix(k, fileio.ADLSConnectionStringPrefix):
			down.cfg.Props[k] = v[:strings.Index(v, "BlobEndpoint=")] + "BlobEndpoint=" + dead + "/devstoreaccount1;"
		}
	}
	for _, args := range [][]string{
		{"compact", ident, "--rewrite-all"},
		{"expire", ident, "--older-than", "0s", "--retain-last", "1"},
		{"orphan", ident, "--older-than", "1s", "--unsafe-allow-recent"},
	} {
		out, stderr, code := runICECTLOn(t, down, args...)
		msg := strings.TrimSpace(stderr)
		if code == 0 || msg == "" || !strings.Contains(msg, strings.TrimPrefix(dead, "http://")) {
			t.Errorf("icectl %s with the store unreachable: exit %d, stderr %q, stdout %q; want a failure naming the endpoint", strings.Join(args, " "), code, stderr, out)
		}
		t.Logf("icectl %s, store unreachable: exit %d: %s", args[0], code, msg)
	}
	// A run that failed so through a REST catalog took and released its
	// claim (the server wrote those metadata files); nothing else changed.
	after := storeObjects(t, tbl.IO, wh)
	for p, h := range objects {
		if got, ok := after[p]; !ok || got != h {
			t.Errorf("a run with the store unreachable deleted or changed %s", p)
		}
	}
	for p := range after {
		if _, ok := objects[p]; !ok && !strings.HasSuffix(p, ".metadata.json") {
			t.Errorf("a run with the store unreachable wrote %s", p)
		}
	}
	objects = after
	for _, args := range [][]string{
		{"compact", ident, "--target-file-size", "lots"},
		{"expire", ident, "--older-than", "yesterday"},
		{"orphan", ident, "--older-than", "1s"}, // recent files need --unsafe-allow-recent
	} {
		if out, stderr, code := runICECTLOn(t, b, args...); code == 0 || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("icectl %s: exit %d, stderr %q, stdout %q; want a one-line refusal", strings.Join(args, " "), code, stderr, out)
		}
	}
	if after := storeObjects(t, tbl.IO, wh); !maps.Equal(after, objects) {
		t.Fatalf("refusals changed the store: %d objects before, %d after", len(objects), len(after))
	}

	opOf := func() string {
		t.Helper()
		tbl, err := cat.LoadTable(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return tbl.Metadata.Snapshots[len(tbl.Metadata.Snapshots)-1].Summary["operation"]
	}
	run("compact", ident, "--rewrite-all")
	if op := opOf(); op != "replace" {
		t.Fatalf("compact committed %q, want a replace", op)
	}
	sameRows("compact")
	run("rewrite-manifests", ident)
	if op := opOf(); op != "replace" {
		t.Fatalf("rewrite-manifests committed %q, want a replace", op)
	}
	sameRows("rewrite-manifests")
	run("expire", ident, "--older-than", "0s", "--retain-last", "1")
	sameRows("expire")
	if tbl, err = cat.LoadTable(ctx, id); err != nil {
		t.Fatal(err)
	}
	if n := len(tbl.Metadata.Snapshots); n != 1 {
		t.Errorf("%d snapshots after expire --retain-last 1", n)
	}
	checkReachableExist(t, tbl)

	// A planted orphan is listed and deleted; nothing live is.
	loc := strings.TrimRight(tbl.Metadata.Location, "/")
	planted := loc + "/data/orphan-" + uniqueName(t, "") + ".parquet"
	if err := fileio.WriteFile(ctx, tbl.IO, planted, []byte("orphan")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // older than --older-than 1s
	out := run("orphan", ident, "--older-than", "1s", "--unsafe-allow-recent")
	if _, err := tbl.IO.Open(ctx, planted); err == nil {
		t.Errorf("orphan left %s:\n%s", planted, out)
	}
	sameRows("orphan")
	checkReachableExist(t, tbl)
	live := storeObjects(t, tbl.IO, loc+"/")
	for p := range live {
		if strings.Contains(p, "orphan-") {
			t.Errorf("orphan file %s is still there", p)
		}
	}
	t.Logf("%s: %d objects after the walk, %d rows read by iceberg-go (%s)", b.scheme, len(live), want.RowCount, fmt.Sprint(want.Checksum))
}
