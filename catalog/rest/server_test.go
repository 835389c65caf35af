package rest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// These tests run against a real REST catalog server (internal/testing/testenv's
// RESTCatalog: Iceberg's REST fixture by default, SeaweedFS weed mini when
// asked for), with the table files on its S3. What servers may differ in
// (a config prefix, where table locations go, whether a table can be
// created in a missing namespace) is checked only as far as the protocol
// says; the exact mappings are tested against httptest in the other files.

func serverConfig(t *testing.T) catalog.Config {
	t.Helper()
	uri := testenv.Need(t, testenv.RESTCatalog, "REST catalog server")
	wh := testenv.Need(t, testenv.RESTWarehouse, "REST catalog warehouse")
	cred := testenv.Need(t, testenv.RESTCredential, "REST catalog OAuth2 credential")
	s3 := testenv.Need(t, testenv.RESTS3Endpoint, "S3 endpoint of the REST catalog")
	key, secret, _ := strings.Cut(cred, ":")
	return catalog.Config{Name: "server", URI: uri, Warehouse: wh, Props: map[string]string{
		PropCredential:           cred,
		fileio.S3Endpoint:        s3,
		fileio.S3AccessKeyID:     key,
		fileio.S3SecretAccessKey: secret,
		fileio.S3PathStyleAccess: "true",
		fileio.ClientRegion:      "us-east-1",
		PropSocketTimeoutMS:      "30000",
		PropConnectTimeoutMS:     "5000",
	}}
}

func openServer(t *testing.T) *Catalog {
	t.Helper()
	c, err := Open(context.Background(), serverConfig(t))
	if err != nil {
		t.Fatalf("open REST catalog: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// uniqueName returns a name no other test run has used.
func uniqueName(t *testing.T, prefix string) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b)
}

func TestServerConfig(t *testing.T) {
	c := openServer(t)
	if wh := c.Properties()[PropWarehouse]; !strings.HasPrefix(wh, "s3://") {
		t.Errorf("warehouse %q after merge, want an s3:// location", wh)
	}
	// Whatever prefix the server's config gave (weed mini names one, the
	// fixture none), the paths built with it reach the server.
	if _, err := c.ListNamespaces(context.Background(), nil); err != nil {
		t.Errorf("list namespaces with prefix %q: %v", c.prefix, err)
	}
}

// gatedConfig is serverConfig through a testenv.RESTAuthGate, which checks
// credentials and tokens as a production catalog does (the fixture checks
// neither), forwarding what it lets through to the server.
func gatedConfig(t *testing.T) (catalog.Config, *testenv.RESTAuthGate) {
	t.Helper()
	cfg := serverConfig(t)
	gate := testenv.NewRESTAuthGate(t, cfg.URI, cfg.Props[PropCredential])
	cfg.URI = gate.URL
	return cfg, gate
}

func TestServerBadCredential(t *testing.T) {
	cfg, gate := gatedConfig(t)
	if c, err := Open(context.Background(), cfg); err != nil {
		t.Fatalf("the right credential through the gate: %v", err)
	} else {
		c.Close()
	}
	key, _, _ := strings.Cut(cfg.Props[PropCredential], ":")
	const wrong = "definitely-not-the-secret-42"
	cfg.Props[PropCredential] = key + ":" + wrong
	_, err := Open(context.Background(), cfg)
	if !errors.Is(err, ErrNotAuthorized) {
		t.Fatalf("wrong secret: %v, want ErrNotAuthorized", err)
	}
	if strings.Contains(err.Error(), wrong) {
		t.Errorf("error %q shows the secret", err)
	}
	if n := gate.Issued(); n != 1 {
		t.Errorf("the gate issued %d tokens, want 1 (for the right credential only)", n)
	}
}

func TestServerNamespaces(t *testing.T) {
	c := openServer(t)
	ctx := context.Background()
	ns := []string{uniqueName(t, "ns_")}
	if err := c.CreateNamespace(ctx, ns, map[string]string{"owner": "icectl"}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateNamespace(ctx, ns, nil); !errors.Is(err, catalog.ErrAlreadyExists) {
		t.Errorf("second create: %v, want ErrAlreadyExists", err)
	}
	all, err := c.ListNamespaces(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(all, func(n []string) bool { return slices.Equal(n, ns) }) {
		t.Errorf("ListNamespaces = %v, missing %v", all, ns)
	}
	// Nested namespaces: the listing under a parent holds its direct
	// children only, and the top level holds no nested namespace.
	child, grandchild := append(slices.Clone(ns), "b"), append(slices.Clone(ns), "b", "c")
	for _, n := range [][]string{child, grandchild} {
		if err := c.CreateNamespace(ctx, n, nil); err != nil {
			t.Fatalf("create %v: %v", n, err)
		}
	}
	under, err := c.ListNamespaces(ctx, ns)
	if err != nil || len(under) != 1 || !slices.Equal(under[0], child) {
		t.Errorf("ListNamespaces(%v) = %v, %v; want [%v]", ns, under, err, child)
	}
	all, err = c.ListNamespaces(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range all {
		if len(n) != 1 {
			t.Errorf("top-level listing holds nested namespace %v", n)
		}
	}
	tables, err := c.ListTables(ctx, ns)
	if err != nil || len(tables) != 0 {
		t.Errorf("ListTables of a new namespace = %v, %v", tables, err)
	}
	// Servers differ on a missing namespace: weed mini lists its tables as
	// empty rather than 404 and refuses a table in it; the fixture's JDBC
	// catalog creates the table. The 404 mappings are tested against
	// httptest; here a refusal must be the right one.
	md, err := spec.NewTableMetadata(testSchema(), spec.PartitionSpec{}, spec.SortOrder{}, "s3://warehouse/x", nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	md.Location = "" // let the server choose
	missing := catalog.Ident{Namespace: []string{uniqueName(t, "missing_")}, Name: "t"}
	if _, err := c.CreateTable(ctx, missing, md); err != nil && !errors.Is(err, catalog.ErrNoSuchNamespace) {
		t.Errorf("CreateTable in a missing namespace: %v, want success or ErrNoSuchNamespace", err)
	}
}

func TestServerListPagination(t *testing.T) {
	cfg := serverConfig(t)
	cfg.Props[PropPageSize] = "2"
	counter := &countingTransport{next: http.DefaultTransport}
	c, err := Open(context.Background(), cfg, WithHTTPClient(&http.Client{Transport: counter}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	var want [][]string
	for i := 0; i < 5; i++ {
		ns := []string{uniqueName(t, "pg_")}
		if err := c.CreateNamespace(ctx, ns, nil); err != nil {
			t.Fatal(err)
		}
		want = append(want, ns)
	}
	before := counter.n.Load()
	all, err := c.ListNamespaces(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range want {
		if !slices.ContainsFunc(all, func(n []string) bool { return slices.Equal(n, ns) }) {
			t.Errorf("paged ListNamespaces misses %v", ns)
		}
	}
	if pages := counter.n.Load() - before; pages < int64(len(all)+1)/2 {
		t.Errorf("%d namespaces in %d requests: the server did not page by 2", len(all), pages)
	}
}

// countingTransport counts the requests sent through it.
type countingTransport struct {
	next http.RoundTripper
	n    atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

func testSchema() spec.Schema {
	return spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "name", Type: spec.StringType{}},
	}}
}

// writeManifestList writes an empty manifest list for a snapshot through
// the table's FileIO (so the vended or configured S3 access is exercised).
func writeManifestList(t *testing.T, tbl *catalog.Table, snapID int64, parent *int64, seq int64) string {
	t.Helper()
	path := tbl.Metadata.Location + "/metadata/snap-" + uniqueName(t, "") + ".avro"
	ctx := context.Background()
	w, err := tbl.IO.Create(ctx, path)
	if err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
	lw, err := manifest.NewListWriter(w, tbl.Metadata.FormatVersion, snapID, parent, seq, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
	return path
}

func TestServerTableLifecycle(t *testing.T) {
	c := openServer(t)
	ctx := context.Background()
	ns := []string{uniqueName(t, "tl_")}
	if err := c.CreateNamespace(ctx, ns, nil); err != nil {
		t.Fatal(err)
	}
	id := catalog.Ident{Namespace: ns, Name: "orders"}
	md, err := spec.NewTableMetadata(testSchema(), spec.PartitionSpec{}, spec.SortOrder{}, "s3://placeholder/ignored", map[string]string{"owner": "icectl"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	md.Location = "" // let the server choose
	created, err := c.CreateTable(ctx, id, md)
	if err != nil {
		t.Fatalf("create table: %v", err)
	}
	if created.Metadata.FormatVersion != 2 || created.Metadata.Property("owner", "") != "icectl" ||
		len(created.Metadata.CurrentSchema().Fields) != 2 || !strings.HasPrefix(created.Metadata.Location, "s3://") {
		t.Errorf("created table metadata: v%d location %q props %v", created.Metadata.FormatVersion, created.Metadata.Location, created.Metadata.Properties)
	}
	if _, err := c.CreateTable(ctx, id, md); !errors.Is(err, catalog.ErrAlreadyExists) {
		t.Errorf("second create: %v, want ErrAlreadyExists", err)
	}
	ids, err := c.ListTables(ctx, ns)
	if err != nil || len(ids) != 1 || ids[0].String() != id.String() {
		t.Errorf("ListTables = %v, %v; want [%s]", ids, err, id)
	}

	tbl, err := c.LoadTable(ctx, id)
	if err != nil {
		t.Fatalf("load table: %v", err)
	}
	if tbl.Metadata.TableUUID != created.Metadata.TableUUID || tbl.MetadataLocation == "" {
		t.Errorf("loaded uuid %s location %q, created %s", tbl.Metadata.TableUUID, tbl.MetadataLocation, created.Metadata.TableUUID)
	}

	// Commit 1: a first snapshot on main, with the requirements Java sends.
	snap1 := int64(1001)
	list1 := writeManifestList(t, tbl, snap1, nil, 1)
	now := time.Now().UnixMilli()
	reqs := []spec.Requirement{spec.AssertTableUUID{UUID: tbl.Metadata.TableUUID}, spec.AssertRefSnapshotID{Ref: "main"}}
	ups := []spec.Update{
		spec.AddSnapshot{Snapshot: spec.Snapshot{SnapshotID: snap1, SequenceNumber: 1, TimestampMS: now, ManifestList: list1,
			Summary: map[string]string{"operation": "append"}, SchemaID: ptr(tbl.Metadata.CurrentSchemaID)}},
		spec.SetSnapshotRef{RefName: "main", Ref: spec.SnapshotRef{SnapshotID: snap1, Type: "branch"}},
		spec.SetProperties{Updates: map[string]string{"icectl.test": "one"}},
	}
	v1, err := c.CommitTable(ctx, tbl, reqs, ups)
	if err != nil {
		t.Fatalf("commit 1: %v", err)
	}
	if cur := v1.Metadata.CurrentSnapshot(); cur == nil || cur.SnapshotID != snap1 || cur.ManifestList != list1 {
		t.Errorf("after commit 1 current snapshot %+v, want %d", cur, snap1)
	}
	if v1.Metadata.Property("icectl.test", "") != "one" || v1.MetadataLocation == tbl.MetadataLocation {
		t.Errorf("commit 1: property %q, metadata location %q (was %q)", v1.Metadata.Property("icectl.test", ""), v1.MetadataLocation, tbl.MetadataLocation)
	}

	// The same requirements again are stale: main exists now.
	_, err = c.CommitTable(ctx, tbl, reqs, []spec.Update{spec.SetProperties{Updates: map[string]string{"icectl.test": "stale"}}})
	if !errors.Is(err, catalog.ErrCommitConflict) {
		t.Fatalf("stale commit: %v, want ErrCommitConflict", err)
	}
	if _, err := c.CommitTable(ctx, tbl, []spec.Requirement{spec.AssertTableUUID{UUID: "00000000-0000-0000-0000-000000000001"}}, nil); !errors.Is(err, catalog.ErrCommitConflict) {
		t.Errorf("wrong table uuid: %v, want ErrCommitConflict", err)
	}

	// Commit 2 on top of the reloaded table; a tag too.
	cur, err := c.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if cur.Metadata.Property("icectl.test", "") != "one" {
		t.Errorf("the stale commit changed the table: %v", cur.Metadata.Properties)
	}
	snap2 := int64(1002)
	list2 := writeManifestList(t, cur, snap2, &snap1, 2)
	v2, err := c.CommitTable(ctx, cur,
		[]spec.Requirement{spec.AssertTableUUID{UUID: cur.Metadata.TableUUID}, spec.AssertRefSnapshotID{Ref: "main", SnapshotID: &snap1}},
		[]spec.Update{
			spec.AddSnapshot{Snapshot: spec.Snapshot{SnapshotID: snap2, ParentSnapshotID: &snap1, SequenceNumber: 2, TimestampMS: now + 1,
				ManifestList: list2, Summary: map[string]string{"operation": "replace"}, SchemaID: ptr(cur.Metadata.CurrentSchemaID)}},
			spec.SetSnapshotRef{RefName: "main", Ref: spec.SnapshotRef{SnapshotID: snap2, Type: "branch"}},
			spec.SetSnapshotRef{RefName: "before-compaction", Ref: spec.SnapshotRef{SnapshotID: snap1, Type: "tag"}},
		})
	if err != nil {
		t.Fatalf("commit 2: %v", err)
	}
	if s := v2.Metadata.CurrentSnapshot(); s == nil || s.SnapshotID != snap2 || v2.Metadata.LastSequenceNumber != 2 {
		t.Errorf("after commit 2: current %+v, last sequence number %d", s, v2.Metadata.LastSequenceNumber)
	}
	if r, ok := v2.Metadata.Refs["before-compaction"]; !ok || r.SnapshotID != snap1 || r.Type != "tag" {
		t.Errorf("tag after commit 2: %+v", v2.Metadata.Refs)
	}
	// The manifest list written through the table's FileIO is readable.
	if _, err := fileio.ReadFile(ctx, v2.IO, list2); err != nil {
		t.Errorf("read back %s: %v", list2, err)
	}

	if err := c.DropTable(ctx, id); err != nil {
		t.Fatalf("drop: %v", err)
	}
	if _, err := c.LoadTable(ctx, id); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Errorf("load after drop: %v, want ErrNoSuchTable", err)
	}
	if err := c.DropTable(ctx, id); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Errorf("second drop: %v, want ErrNoSuchTable", err)
	}
	if _, err := c.CommitTable(ctx, v2, nil, []spec.Update{spec.SetProperties{Updates: map[string]string{"a": "b"}}}); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Errorf("commit after drop: %v, want ErrNoSuchTable", err)
	}
}

func ptr[T any](v T) *T { return &v }

func TestServerTokenRejectedIsRefreshed(t *testing.T) {
	cfg, gate := gatedConfig(t)
	c, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	ns := []string{uniqueName(t, "tok_")}
	if err := c.CreateNamespace(ctx, ns, nil); err != nil {
		t.Fatal(err)
	}
	// The gate now refuses the cached token, as a server refuses an
	// expired or revoked one: the client must fetch a new token once and
	// carry on, and the request must reach the server.
	gate.RevokeTokens()
	before := gate.Issued()
	all, err := c.ListNamespaces(ctx, nil)
	if err != nil {
		t.Fatalf("list with a rejected token: %v", err)
	}
	if !slices.ContainsFunc(all, func(n []string) bool { return slices.Equal(n, ns) }) {
		t.Errorf("ListNamespaces after the refresh = %v, missing %v", all, ns)
	}
	if n := gate.Issued() - before; n != 1 {
		t.Errorf("%d tokens fetched after the refusal, want 1", n)
	}
}
