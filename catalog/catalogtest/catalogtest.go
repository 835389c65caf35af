// Package catalogtest is the conformance suite every catalog.Catalog must
// pass, run by each implementation's tests against real storage. It is for
// tests only and must never be imported by product code.
package catalogtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
)

// Run runs the suite. newCatalog returns a fresh, empty catalog whose
// tables live on local storage; it must implement catalog.LocationProvider.
func Run(t *testing.T, newCatalog func(t *testing.T) catalog.Catalog) {
	RunWith(t, Options{}, newCatalog)
}

// Options adapt the suite to what a kind of catalog can hold.
type Options struct {
	// FlatNamespaces: namespaces have one level (a Hive Metastore's
	// databases). Creating a nested one must fail, and the namespace
	// scenarios use top-level ones only.
	FlatNamespaces bool
}

// RunWith runs the suite with opts.
func RunWith(t *testing.T, opts Options, newCatalog func(t *testing.T) catalog.Catalog) {
	if opts.FlatNamespaces {
		t.Run("Namespaces", func(t *testing.T) { testFlatNamespaces(t, newCatalog(t)) })
		t.Run("DropNamespace", func(t *testing.T) { DropFlatNamespaces(t, newCatalog(t), "r") })
	} else {
		t.Run("Namespaces", func(t *testing.T) { testNamespaces(t, newCatalog(t)) })
		t.Run("DropNamespace", func(t *testing.T) { DropNamespaces(t, newCatalog(t), "r") })
	}
	t.Run("CreateListLoadDrop", func(t *testing.T) { testCreateListLoadDrop(t, newCatalog(t)) })
	t.Run("MissingTable", func(t *testing.T) { testMissingTable(t, newCatalog(t)) })
	t.Run("CommitRequirements", func(t *testing.T) { testCommitRequirements(t, newCatalog(t)) })
	t.Run("RemoveSpecsAndSchemas", func(t *testing.T) { RemoveSpecsAndSchemas(t, newCatalog(t), ident("db", "evolved")) })
	t.Run("CASRace", func(t *testing.T) { testCASRace(t, newCatalog(t)) })
	t.Run("MetadataNumbering", func(t *testing.T) { testNumbering(t, newCatalog(t)) })
	t.Run("GzipMetadata", func(t *testing.T) { testGzip(t, newCatalog(t)) })
	t.Run("DeleteAfterCommit", func(t *testing.T) { testDeleteAfterCommit(t, newCatalog(t)) })
	t.Run("DeleteAfterCommitGuarded", func(t *testing.T) { testDeleteAfterCommitGuarded(t, newCatalog(t)) })
	t.Run("CorruptMetadata", func(t *testing.T) { testCorrupt(t, newCatalog(t)) })
	t.Run("ConcurrentCommits", func(t *testing.T) { testConcurrent(t, newCatalog(t), 20) })
}

// NewTable creates table ns.name (and its namespace when missing), format
// v2, with props.
func NewTable(t testing.TB, c catalog.Catalog, id catalog.Ident, props map[string]string) *catalog.Table {
	t.Helper()
	ctx := context.Background()
	if err := c.CreateNamespace(ctx, id.Namespace, nil); err != nil && !errors.Is(err, catalog.ErrAlreadyExists) {
		t.Fatalf("create namespace: %v", err)
	}
	loc, err := c.(catalog.LocationProvider).DefaultLocation(ctx, id)
	if err != nil {
		t.Fatalf("default location: %v", err)
	}
	schema := spec.Schema{ID: 0, Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "data", Type: spec.StringType{}},
	}}
	md, err := spec.NewTableMetadata(schema, spec.PartitionSpec{ID: 0}, spec.SortOrder{OrderID: 0}, loc, props, 2)
	if err != nil {
		t.Fatalf("new table metadata: %v", err)
	}
	tbl, err := c.CreateTable(ctx, id, md)
	if err != nil {
		t.Fatalf("create table %s: %v", id, err)
	}
	return tbl
}

// AppendSnapshot returns the updates and requirement that add a new
// snapshot on top of main as md stands.
func AppendSnapshot(md *spec.TableMetadata, id int64) ([]spec.Requirement, []spec.Update) {
	var parent *int64
	if cur := md.CurrentSnapshot(); cur != nil {
		p := cur.SnapshotID
		parent = &p
	}
	snap := spec.Snapshot{
		SnapshotID:       id,
		ParentSnapshotID: parent,
		SequenceNumber:   md.LastSequenceNumber + 1,
		TimestampMS:      time.Now().UnixMilli(),
		ManifestList:     fmt.Sprintf("%s/metadata/snap-%d.avro", md.Location, id),
		Summary:          map[string]string{"operation": "append"},
	}
	reqs := []spec.Requirement{spec.AssertRefSnapshotID{Ref: spec.MainBranch, SnapshotID: parent}}
	ups := []spec.Update{
		spec.AddSnapshot{Snapshot: snap},
		spec.SetSnapshotRef{RefName: spec.MainBranch, Ref: spec.SnapshotRef{SnapshotID: id, Type: spec.RefTypeBranch}},
	}
	return reqs, ups
}

// MetadataFiles lists the *.metadata.json files of a table's metadata
// directory.
func MetadataFiles(t testing.TB, tbl *catalog.Table) []string {
	t.Helper()
	lister, ok := tbl.IO.(fileio.Lister)
	if !ok {
		t.Fatalf("table IO %T cannot list", tbl.IO)
	}
	var out []string
	dir := catalog.MetadataDir(tbl.Metadata) + "/"
	err := lister.List(context.Background(), dir, func(fi fileio.FileInfo) error {
		if strings.HasSuffix(fi.Path, ".metadata.json") && !strings.Contains(strings.TrimPrefix(fi.Path, dir), "/") {
			out = append(out, fi.Path)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("list %s: %v", dir, err)
	}
	return out
}

// CheckMetadataLog checks that every metadata-log entry of tbl names an
// existing file and that versions increase along the log.
func CheckMetadataLog(t testing.TB, tbl *catalog.Table) {
	t.Helper()
	ctx := context.Background()
	prev := -1
	for _, e := range append(append([]spec.MetadataLogEntry{}, tbl.Metadata.MetadataLog...), spec.MetadataLogEntry{MetadataFile: tbl.MetadataLocation}) {
		if _, err := fileio.ReadFile(ctx, tbl.IO, e.MetadataFile); err != nil {
			t.Errorf("metadata log entry %s: %v", e.MetadataFile, err)
		}
		v, ok := catalog.MetadataVersion(e.MetadataFile)
		if !ok {
			t.Errorf("metadata file %s has no version in its name", e.MetadataFile)
			continue
		}
		if v <= prev {
			t.Errorf("metadata file %s: version %d after %d", e.MetadataFile, v, prev)
		}
		prev = v
	}
}

func ident(ns, name string) catalog.Ident {
	return catalog.Ident{Namespace: strings.Split(ns, "."), Name: name}
}

func testNamespaces(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	for _, ns := range [][]string{{"db"}, {"a"}, {"a", "b"}, {"a", "b", "c"}} {
		if err := c.CreateNamespace(ctx, ns, nil); err != nil {
			t.Fatalf("create namespace %v: %v", ns, err)
		}
	}
	if err := c.CreateNamespace(ctx, []string{"db"}, nil); !errors.Is(err, catalog.ErrAlreadyExists) {
		t.Errorf("create existing namespace: got %v, want ErrAlreadyExists", err)
	}
	if err := c.CreateNamespace(ctx, []string{"bad.level"}, nil); err == nil {
		t.Errorf("create namespace with a dotted level: no error")
	}
	got, err := c.ListNamespaces(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "[[a] [db]]"; fmt.Sprint(got) != want {
		t.Errorf("top-level namespaces = %v, want %s", got, want)
	}
	got, err = c.ListNamespaces(ctx, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "[[a b]]"; fmt.Sprint(got) != want {
		t.Errorf("namespaces under a = %v, want %s", got, want)
	}
	if _, err := c.ListNamespaces(ctx, []string{"nope"}); !errors.Is(err, catalog.ErrNoSuchNamespace) {
		t.Errorf("list under missing namespace: got %v, want ErrNoSuchNamespace", err)
	}
	if _, err := c.ListTables(ctx, []string{"nope"}); !errors.Is(err, catalog.ErrNoSuchNamespace) {
		t.Errorf("list tables of missing namespace: got %v, want ErrNoSuchNamespace", err)
	}
	tables, err := c.ListTables(ctx, []string{"db"})
	if err != nil || len(tables) != 0 {
		t.Errorf("tables of empty namespace = %v, %v; want none", tables, err)
	}
}

// DropNamespaces checks DropNamespace on namespaces root and root+"_e",
// top-level names unused in c: a namespace with a table or a child
// namespace is refused and stays as it was, an empty one goes, a missing
// one is ErrNoSuchNamespace.
func DropNamespaces(t *testing.T, c catalog.Catalog, root string) {
	t.Helper()
	ctx := context.Background()
	r, sub := []string{root}, []string{root, "sub"}
	e, child := []string{root + "_e"}, []string{root + "_e", "child"}
	tbl := NewTable(t, c, catalog.Ident{Namespace: r, Name: "t"}, nil)
	for _, ns := range [][]string{sub, e, child} {
		if err := c.CreateNamespace(ctx, ns, nil); err != nil {
			t.Fatalf("create namespace %v: %v", ns, err)
		}
	}
	refused := func(ns []string, why string, tables int) {
		t.Helper()
		if err := c.DropNamespace(ctx, ns); !errors.Is(err, catalog.ErrNamespaceNotEmpty) {
			t.Errorf("drop namespace %v with %s: got %v, want ErrNamespaceNotEmpty", ns, why, err)
		}
		if got, err := c.ListTables(ctx, ns); err != nil || len(got) != tables {
			t.Errorf("namespace %v after a refused drop: tables %v, %v; want %d", ns, got, err, tables)
		}
	}
	dropped := func(ns []string) {
		t.Helper()
		if err := c.DropNamespace(ctx, ns); err != nil {
			t.Fatalf("drop empty namespace %v: %v", ns, err)
		}
		if _, err := c.ListTables(ctx, ns); !errors.Is(err, catalog.ErrNoSuchNamespace) {
			t.Errorf("namespace %v after its drop: %v, want ErrNoSuchNamespace", ns, err)
		}
		if err := c.DropNamespace(ctx, ns); !errors.Is(err, catalog.ErrNoSuchNamespace) {
			t.Errorf("drop namespace %v again: got %v, want ErrNoSuchNamespace", ns, err)
		}
	}
	refused(r, "a table and a child", 1)
	dropped(sub)
	refused(r, "a table", 1)
	if got, err := c.ListTables(ctx, []string{tbl.Ident.Namespace[0]}); err != nil || len(got) != 1 || got[0].String() != tbl.Ident.String() {
		t.Errorf("tables of %v after refused drops: %v, %v", r, got, err)
	}
	// A child with nothing in it keeps its parent existing.
	refused(e, "a child namespace", 0)
	dropped(child)
	dropped(e)
	top, err := c.ListNamespaces(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range top {
		if ns[len(ns)-1] == e[0] {
			t.Errorf("namespace %v still listed after its drop: %v", e, top)
		}
	}
}

// testFlatNamespaces is testNamespaces for catalogs whose namespaces have
// one level.
func testFlatNamespaces(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	for _, ns := range [][]string{{"db"}, {"a"}} {
		if err := c.CreateNamespace(ctx, ns, nil); err != nil {
			t.Fatalf("create namespace %v: %v", ns, err)
		}
	}
	if err := c.CreateNamespace(ctx, []string{"db"}, nil); !errors.Is(err, catalog.ErrAlreadyExists) {
		t.Errorf("create existing namespace: got %v, want ErrAlreadyExists", err)
	}
	for _, bad := range [][]string{{"bad.level"}, {"a", "b"}} {
		if err := c.CreateNamespace(ctx, bad, nil); err == nil {
			t.Errorf("create namespace %v: no error", bad)
		}
	}
	got, err := c.ListNamespaces(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "[[a] [db]]"; fmt.Sprint(got) != want {
		t.Errorf("top-level namespaces = %v, want %s", got, want)
	}
	got, err = c.ListNamespaces(ctx, []string{"a"})
	if err != nil || len(got) != 0 {
		t.Errorf("namespaces under a = %v, %v; want none", got, err)
	}
	if _, err := c.ListNamespaces(ctx, []string{"nope"}); !errors.Is(err, catalog.ErrNoSuchNamespace) {
		t.Errorf("list under missing namespace: got %v, want ErrNoSuchNamespace", err)
	}
	if _, err := c.ListTables(ctx, []string{"nope"}); !errors.Is(err, catalog.ErrNoSuchNamespace) {
		t.Errorf("list tables of missing namespace: got %v, want ErrNoSuchNamespace", err)
	}
	tables, err := c.ListTables(ctx, []string{"db"})
	if err != nil || len(tables) != 0 {
		t.Errorf("tables of empty namespace = %v, %v; want none", tables, err)
	}
}

// DropFlatNamespaces is DropNamespaces for catalogs whose namespaces have
// one level: a namespace with a table is refused and stays as it was, an
// empty one goes, a missing one is ErrNoSuchNamespace.
func DropFlatNamespaces(t *testing.T, c catalog.Catalog, root string) {
	t.Helper()
	ctx := context.Background()
	r, e := []string{root}, []string{root + "_e"}
	tbl := NewTable(t, c, catalog.Ident{Namespace: r, Name: "t"}, nil)
	if err := c.CreateNamespace(ctx, e, nil); err != nil {
		t.Fatalf("create namespace %v: %v", e, err)
	}
	if err := c.DropNamespace(ctx, r); !errors.Is(err, catalog.ErrNamespaceNotEmpty) {
		t.Errorf("drop namespace %v with a table: got %v, want ErrNamespaceNotEmpty", r, err)
	}
	if got, err := c.ListTables(ctx, r); err != nil || len(got) != 1 || got[0].String() != tbl.Ident.String() {
		t.Errorf("tables of %v after a refused drop: %v, %v", r, got, err)
	}
	if err := c.DropNamespace(ctx, e); err != nil {
		t.Fatalf("drop empty namespace %v: %v", e, err)
	}
	if _, err := c.ListTables(ctx, e); !errors.Is(err, catalog.ErrNoSuchNamespace) {
		t.Errorf("namespace %v after its drop: %v, want ErrNoSuchNamespace", e, err)
	}
	if err := c.DropNamespace(ctx, e); !errors.Is(err, catalog.ErrNoSuchNamespace) {
		t.Errorf("drop namespace %v again: got %v, want ErrNoSuchNamespace", e, err)
	}
}

func testCreateListLoadDrop(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	id := ident("db", "orders")
	created := NewTable(t, c, id, nil)
	if v, ok := catalog.MetadataVersion(created.MetadataLocation); !ok || v > 1 {
		t.Errorf("first metadata file %s: want version 0 or 1", created.MetadataLocation)
	}
	NewTable(t, c, ident("db", "lines"), nil)
	tables, err := c.ListTables(ctx, []string{"db"})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(tables); got != "[db.lines db.orders]" {
		t.Errorf("tables = %s", got)
	}
	loaded, err := c.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.MetadataLocation != created.MetadataLocation || loaded.Metadata.TableUUID != created.Metadata.TableUUID {
		t.Errorf("loaded %s (uuid %s), created %s (uuid %s)", loaded.MetadataLocation, loaded.Metadata.TableUUID, created.MetadataLocation, created.Metadata.TableUUID)
	}
	if !strings.HasPrefix(loaded.MetadataLocation, loaded.Metadata.Location+"/metadata/") {
		t.Errorf("metadata %s not under table location %s", loaded.MetadataLocation, loaded.Metadata.Location)
	}
	if _, err := c.CreateTable(ctx, id, created.Metadata); !errors.Is(err, catalog.ErrAlreadyExists) {
		t.Errorf("create existing table: got %v, want ErrAlreadyExists", err)
	}
	if _, err := c.CreateTable(ctx, ident("nope", "t"), created.Metadata); !errors.Is(err, catalog.ErrNoSuchNamespace) {
		t.Errorf("create table in missing namespace: got %v, want ErrNoSuchNamespace", err)
	}
	if err := c.DropTable(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.LoadTable(ctx, id); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Errorf("load dropped table: got %v, want ErrNoSuchTable", err)
	}
	if err := c.DropTable(ctx, id); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Errorf("drop dropped table: got %v, want ErrNoSuchTable", err)
	}
	tables, _ = c.ListTables(ctx, []string{"db"})
	if got := fmt.Sprint(tables); got != "[db.lines]" {
		t.Errorf("tables after drop = %s", got)
	}
}

func testMissingTable(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	tbl := NewTable(t, c, ident("db", "t"), nil)
	missing := *tbl
	missing.Ident = ident("db", "missing")
	if _, err := c.LoadTable(ctx, missing.Ident); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Errorf("load: got %v, want ErrNoSuchTable", err)
	}
	_, ups := AppendSnapshot(tbl.Metadata, 1)
	if _, err := c.CommitTable(ctx, &missing, nil, ups); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Errorf("commit: got %v, want ErrNoSuchTable", err)
	}
}

func testCommitRequirements(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	tbl := NewTable(t, c, ident("db", "t"), nil)
	reqs, ups := AppendSnapshot(tbl.Metadata, 101)
	next, err := c.CommitTable(ctx, tbl, reqs, ups)
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	if cur := next.Metadata.CurrentSnapshot(); cur == nil || cur.SnapshotID != 101 {
		t.Fatalf("current snapshot after commit = %v, want 101", cur)
	}
	if len(next.Metadata.MetadataLog) != 1 || next.Metadata.MetadataLog[0].MetadataFile != tbl.MetadataLocation {
		t.Errorf("metadata log = %v, want [%s]", next.Metadata.MetadataLog, tbl.MetadataLocation)
	}
	// The same requirement again is stale: main is at 101 now.
	reqs, ups = AppendSnapshot(tbl.Metadata, 102)
	before := MetadataFiles(t, next)
	_, err = c.CommitTable(ctx, tbl, reqs, ups)
	if !errors.Is(err, catalog.ErrCommitConflict) || !errors.Is(err, spec.ErrRequirementFailed) {
		t.Fatalf("stale commit: got %v, want ErrCommitConflict wrapping ErrRequirementFailed", err)
	}
	loaded, err := c.LoadTable(ctx, tbl.Ident)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.MetadataLocation != next.MetadataLocation {
		t.Errorf("stale commit moved the table from %s to %s", next.MetadataLocation, loaded.MetadataLocation)
	}
	if after := MetadataFiles(t, next); len(after) != len(before) {
		t.Errorf("stale commit left files: %v -> %v", before, after)
	}
	// Requirements are checked against the catalog's current metadata,
	// not the caller's: an up-to-date requirement passes with a stale t.
	reqs, ups = AppendSnapshot(loaded.Metadata, 103)
	if _, err := c.CommitTable(ctx, tbl, reqs, ups); err != nil {
		t.Errorf("commit with current requirements and stale table: %v", err)
	}
}

// RemoveSpecsAndSchemas commits remove-partition-specs and
// remove-schemas (expire --clean-expired-metadata) and reads the table
// back without them; a catalog refuses to remove the default spec or
// the current schema, and changes nothing then.
func RemoveSpecsAndSchemas(t *testing.T, c catalog.Catalog, id catalog.Ident) {
	ctx := context.Background()
	tbl := NewTable(t, c, id, nil)
	wider := spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "data", Type: spec.StringType{}},
		{ID: 3, Name: "day", Type: spec.IntType{}},
	}}
	byDay := spec.PartitionSpec{Fields: []spec.PartitionField{{SourceID: 3, Name: "day", Transform: spec.Transform{Kind: spec.TransformIdentity}, FieldID: -1}}}
	tbl, err := c.CommitTable(ctx, tbl, nil, []spec.Update{spec.AddSchema{Schema: wider}, spec.SetCurrentSchema{SchemaID: spec.LastAdded},
		spec.AddSpec{Spec: byDay}, spec.SetDefaultSpec{SpecID: spec.LastAdded}})
	if err != nil {
		t.Fatalf("evolve: %v", err)
	}
	if len(tbl.Metadata.Schemas) != 2 || len(tbl.Metadata.PartitionSpecs) != 2 {
		t.Fatalf("after evolving: %d schemas, %d specs", len(tbl.Metadata.Schemas), len(tbl.Metadata.PartitionSpecs))
	}
	for _, bad := range []spec.Update{spec.RemovePartitionSpecs{SpecIDs: []int{tbl.Metadata.DefaultSpecID}}, spec.RemoveSchemas{SchemaIDs: []int{tbl.Metadata.CurrentSchemaID}}} {
		if _, err := c.CommitTable(ctx, tbl, nil, []spec.Update{bad}); err == nil {
			t.Errorf("%s of the one in use was committed", bad.Action())
		}
	}
	reqs := []spec.Requirement{spec.AssertDefaultSpecID{ID: tbl.Metadata.DefaultSpecID}, spec.AssertCurrentSchemaID{ID: tbl.Metadata.CurrentSchemaID}}
	next, err := c.CommitTable(ctx, tbl, reqs, []spec.Update{spec.RemovePartitionSpecs{SpecIDs: []int{0}}, spec.RemoveSchemas{SchemaIDs: []int{0}}})
	if err != nil {
		t.Fatalf("remove the unused spec and schema: %v", err)
	}
	loaded, err := c.LoadTable(ctx, tbl.Ident)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.MetadataLocation != next.MetadataLocation {
		t.Fatalf("loaded %s, committed %s", loaded.MetadataLocation, next.MetadataLocation)
	}
	md := loaded.Metadata
	if len(md.Schemas) != 1 || md.Schemas[0].ID != md.CurrentSchemaID || len(md.PartitionSpecs) != 1 || md.PartitionSpecs[0].ID != md.DefaultSpecID {
		t.Errorf("after removing: schemas %d (current %d), specs %d (default %d)", len(md.Schemas), md.CurrentSchemaID, len(md.PartitionSpecs), md.DefaultSpecID)
	}
}

func testCASRace(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	tbl := NewTable(t, c, ident("db", "t"), nil)
	const racers = 2
	start := make(chan struct{})
	errs := make(chan error, racers)
	for i := range racers {
		reqs, ups := AppendSnapshot(tbl.Metadata, int64(200+i))
		go func() {
			<-start
			_, err := c.CommitTable(ctx, tbl, reqs, ups)
			errs <- err
		}()
	}
	close(start)
	wins := 0
	for range racers {
		err := <-errs
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, catalog.ErrCommitConflict):
			t.Errorf("losing commit: %v, want ErrCommitConflict", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d commits won, want exactly 1", wins)
	}
	loaded, err := c.LoadTable(ctx, tbl.Ident)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(loaded.Metadata.Snapshots); n != 1 {
		t.Errorf("%d snapshots after the race, want 1", n)
	}
	if files := MetadataFiles(t, loaded); len(files) != 2 {
		t.Errorf("metadata files after the race = %v, want the first and the winner's", files)
	}
	CheckMetadataLog(t, loaded)
}

func testNumbering(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	tbl := NewTable(t, c, ident("db", "t"), nil)
	first, _ := catalog.MetadataVersion(tbl.MetadataLocation)
	for i := 1; i <= 3; i++ {
		reqs, ups := AppendSnapshot(tbl.Metadata, int64(300+i))
		next, err := c.CommitTable(ctx, tbl, reqs, ups)
		if err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
		if v, ok := catalog.MetadataVersion(next.MetadataLocation); !ok || v != first+i {
			t.Errorf("commit %d wrote %s, want version %d", i, next.MetadataLocation, first+i)
		}
		if path.Dir(next.MetadataLocation) != path.Dir(tbl.MetadataLocation) {
			t.Errorf("commit %d wrote %s outside %s", i, next.MetadataLocation, path.Dir(tbl.MetadataLocation))
		}
		tbl = next
	}
	if len(tbl.Metadata.MetadataLog) != 3 {
		t.Errorf("metadata log has %d entries, want 3", len(tbl.Metadata.MetadataLog))
	}
	CheckMetadataLog(t, tbl)
}

func testGzip(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	tbl := NewTable(t, c, ident("db", "t"), map[string]string{catalog.PropMetadataCompression: "gzip"})
	reqs, ups := AppendSnapshot(tbl.Metadata, 401)
	next, err := c.CommitTable(ctx, tbl, reqs, ups)
	if err != nil {
		t.Fatal(err)
	}
	for _, loc := range []string{tbl.MetadataLocation, next.MetadataLocation} {
		if !strings.HasSuffix(loc, ".gz.metadata.json") {
			t.Errorf("metadata file %s: want a .gz.metadata.json name", loc)
		}
		data, err := fileio.ReadFile(ctx, next.IO, loc)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
			t.Errorf("metadata file %s is not gzip", loc)
		}
	}
	loaded, err := c.LoadTable(ctx, tbl.Ident)
	if err != nil || loaded.Metadata.CurrentSnapshot() == nil {
		t.Fatalf("reload gzip table: %v", err)
	}
}

func testDeleteAfterCommit(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	tbl := NewTable(t, c, ident("db", "t"), map[string]string{
		spec.PropMetadataPreviousVersionsMax: "2",
		catalog.PropDeleteAfterCommit:        "true",
	})
	all := []string{tbl.MetadataLocation}
	for i := 1; i <= 5; i++ {
		next, err := commitAppend(ctx, c, tbl, int64(500+i), nil)
		if err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
		tbl = next
		all = append(all, tbl.MetadataLocation)
	}
	if n := len(tbl.Metadata.MetadataLog); n != 2 {
		t.Fatalf("metadata log has %d entries, want 2", n)
	}
	for i, loc := range all {
		_, err := fileio.ReadFile(ctx, tbl.IO, loc)
		kept := i >= len(all)-3
		if kept && err != nil {
			t.Errorf("%s (still referenced) is gone: %v", loc, err)
		}
		if !kept && !errors.Is(err, fileio.ErrNotFound) {
			t.Errorf("%s fell off the log but was not deleted (err %v)", loc, err)
		}
	}
	if files := MetadataFiles(t, tbl); len(files) != 3 {
		t.Errorf("metadata files = %v, want 3", files)
	}
	CheckMetadataLog(t, tbl)
}

// commitAppend commits AppendSnapshot through the commit loop, which owns
// metadata cleanup; warnings after a landed commit go to warn.
func commitAppend(ctx context.Context, c catalog.Catalog, tbl *catalog.Table, snapID int64, warn func(error)) (*catalog.Table, error) {
	opts := commit.DefaultOptions()
	opts.Warn = warn
	return commit.Run(ctx, c, tbl, func(_ context.Context, base *catalog.Table, _ int) (*commit.Attempt, error) {
		reqs, ups := AppendSnapshot(base.Metadata, snapID)
		return &commit.Attempt{Requirements: reqs, Updates: ups}, nil
	}, opts)
}

// testDeleteAfterCommitGuarded gives a table a metadata log that names
// files it must never delete (a file outside the table, a data file of the
// table, a file named like metadata outside the metadata directory) and
// commits with delete-after-commit on: only the real metadata files that
// fell off the log go, and each refusal is reported.
func testDeleteAfterCommitGuarded(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	tbl := NewTable(t, c, ident("db", "guarded"), map[string]string{
		spec.PropMetadataPreviousVersionsMax: "1",
		catalog.PropDeleteAfterCommit:        "true",
	})
	loc := strings.TrimSuffix(tbl.Metadata.Location, "/")
	outside := loc + "-sibling/metadata/00000-" + uuid.NewString() + ".metadata.json"
	dataFile := loc + "/data/part-0.parquet"
	misplaced := loc + "/data/00001-" + uuid.NewString() + ".metadata.json"
	for _, p := range []string{outside, dataFile, misplaced} {
		if err := fileio.WriteFile(ctx, tbl.IO, p, []byte("keep me")); err != nil {
			t.Fatal(err)
		}
	}
	first := tbl.MetadataLocation
	tbl, err := commitAppend(ctx, c, tbl, 600, nil)
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	// The hostile log is in the base version: the next commit drops it,
	// and the first metadata file with it.
	hostile := *tbl.Metadata
	hostile.MetadataLog = append([]spec.MetadataLogEntry{
		{TimestampMS: 1, MetadataFile: outside},
		{TimestampMS: 2, MetadataFile: dataFile},
		{TimestampMS: 3, MetadataFile: misplaced},
	}, hostile.MetadataLog...)
	base := *tbl
	base.Metadata = &hostile
	var warnings []error
	next, err := commitAppend(ctx, c, &base, 601, func(err error) { warnings = append(warnings, err) })
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	for _, p := range []string{outside, dataFile, misplaced} {
		if _, err := fileio.ReadFile(ctx, tbl.IO, p); err != nil {
			t.Errorf("%s was named by the metadata log and is gone: %v", p, err)
		}
	}
	if _, err := fileio.ReadFile(ctx, tbl.IO, first); !errors.Is(err, fileio.ErrNotFound) {
		t.Errorf("the first metadata file fell off the log but was not deleted (err %v)", err)
	}
	for _, p := range []string{tbl.MetadataLocation, next.MetadataLocation} {
		if _, err := fileio.ReadFile(ctx, next.IO, p); err != nil {
			t.Errorf("metadata file still in use: %v", err)
		}
	}
	if len(warnings) != 1 {
		t.Fatalf("warnings = %v, want one naming the refused files", warnings)
	}
	for _, p := range []string{outside, dataFile, misplaced} {
		if !strings.Contains(warnings[0].Error(), p) {
			t.Errorf("warning %q does not name %s", warnings[0], p)
		}
	}
}

func testCorrupt(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	tbl := NewTable(t, c, ident("db", "t"), nil)
	good, err := fileio.ReadFile(ctx, tbl.IO, tbl.MetadataLocation)
	if err != nil {
		t.Fatal(err)
	}
	if err := fileio.WriteFile(ctx, tbl.IO, tbl.MetadataLocation, []byte(`{"format-version": 2, "table-uuid": `)); err != nil {
		t.Fatal(err)
	}
	_, err = c.LoadTable(ctx, tbl.Ident)
	if !errors.Is(err, catalog.ErrCorruptMetadata) || !strings.Contains(err.Error(), tbl.MetadataLocation) {
		t.Errorf("load corrupt table: got %v, want ErrCorruptMetadata naming %s", err, tbl.MetadataLocation)
	}
	reqs, ups := AppendSnapshot(tbl.Metadata, 601)
	before := MetadataFiles(t, tbl)
	if _, err := c.CommitTable(ctx, tbl, reqs, ups); !errors.Is(err, catalog.ErrCorruptMetadata) {
		t.Errorf("commit on corrupt table: got %v, want ErrCorruptMetadata", err)
	}
	if after := MetadataFiles(t, tbl); len(after) != len(before) {
		t.Errorf("commit on corrupt table wrote files: %v -> %v", before, after)
	}
	if err := fileio.WriteFile(ctx, tbl.IO, tbl.MetadataLocation, good); err != nil {
		t.Fatal(err)
	}
	loaded, err := c.LoadTable(ctx, tbl.Ident)
	if err != nil || loaded.MetadataLocation != tbl.MetadataLocation {
		t.Errorf("after repair: %v, location %v, want %s", err, loaded, tbl.MetadataLocation)
	}
}

// CommitWithRetry adds snapshot id to the table, reloading and retrying on
// ErrCommitConflict until it succeeds.
func CommitWithRetry(ctx context.Context, c catalog.Catalog, id catalog.Ident, snapID int64) error {
	for attempt := 0; ; attempt++ {
		if attempt > 1000 {
			return fmt.Errorf("snapshot %d: gave up after %d attempts", snapID, attempt)
		}
		tbl, err := c.LoadTable(ctx, id)
		if err != nil {
			return err
		}
		reqs, ups := AppendSnapshot(tbl.Metadata, snapID)
		ups = append(ups, spec.SetProperties{Updates: map[string]string{fmt.Sprintf("writer.%d", snapID): "done"}})
		_, err = c.CommitTable(ctx, tbl, reqs, ups)
		if err == nil {
			return nil
		}
		if !errors.Is(err, catalog.ErrCommitConflict) {
			return err
		}
	}
}

// CheckAllCommitted checks that snapshots ids 1..n (offset by base) are all
// in the table, in one parent chain, each with its property, and that the
// metadata log is consistent.
func CheckAllCommitted(t testing.TB, c catalog.Catalog, id catalog.Ident, ids []int64) {
	t.Helper()
	tbl, err := c.LoadTable(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	md := tbl.Metadata
	if len(md.Snapshots) != len(ids) {
		t.Errorf("%d snapshots, want %d", len(md.Snapshots), len(ids))
	}
	for _, sid := range ids {
		if _, ok := md.SnapshotByID(sid); !ok {
			t.Errorf("snapshot %d lost", sid)
		}
		if md.Properties[fmt.Sprintf("writer.%d", sid)] != "done" {
			t.Errorf("property of writer %d lost", sid)
		}
	}
	// Walk the chain from the current snapshot: every snapshot, once.
	seen := 0
	for s := md.CurrentSnapshot(); s != nil; seen++ {
		if s.SequenceNumber != int64(len(ids)-seen) {
			t.Errorf("snapshot %d has sequence number %d, want %d", s.SnapshotID, s.SequenceNumber, len(ids)-seen)
		}
		if s.ParentSnapshotID == nil {
			break
		}
		s, _ = md.SnapshotByID(*s.ParentSnapshotID)
	}
	if seen+1 != len(ids) {
		t.Errorf("parent chain has %d snapshots, want %d", seen+1, len(ids))
	}
	if len(md.MetadataLog) != len(ids) {
		t.Errorf("metadata log has %d entries, want %d (one per commit)", len(md.MetadataLog), len(ids))
	}
	CheckMetadataLog(t, tbl)
	if files := MetadataFiles(t, tbl); len(files) != len(ids)+1 {
		t.Errorf("%d metadata files, want %d: losing commits must remove theirs", len(files), len(ids)+1)
	}
}

func testConcurrent(t *testing.T, c catalog.Catalog, writers int) {
	ctx := context.Background()
	id := ident("db", "t")
	NewTable(t, c, id, nil)
	errs := make(chan error, writers)
	var ids []int64
	for i := range writers {
		sid := int64(1000 + i)
		ids = append(ids, sid)
		go func() { errs <- CommitWithRetry(ctx, c, id, sid) }()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	CheckAllCommitted(t, c, id, ids)
}
