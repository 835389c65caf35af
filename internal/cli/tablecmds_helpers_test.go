package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	icetable "github.com/icectl/icectl/iceberg/table"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// fixture is a SQLite catalog in a temp dir holding table db.events (v2,
// partitioned by region) with two snapshots: an append of three data files
// and a commit of a position delete and an equality delete file.
type fixture struct {
	dir   string
	uri   string // --catalog-uri
	table *catalog.Table
	snaps []int64
	env   map[string]string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	fx := &fixture{dir: dir, uri: "sqlite:///" + filepath.Join(dir, "catalog.db"), env: map[string]string{"HOME": dir}}
	cat, err := sqlcat.Create(ctx, catalog.Config{Name: "default", URI: fx.uri, Warehouse: "file://" + filepath.Join(dir, "wh")})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	if err := cat.CreateNamespace(ctx, []string{"db"}, nil); err != nil {
		t.Fatal(err)
	}
	schema := spec.Schema{ID: 0, Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "region", Type: spec.StringType{}, Required: true},
		{ID: 3, Name: "note", Type: spec.StringType{}},
	}}
	ps := spec.PartitionSpec{ID: 0, Fields: []spec.PartitionField{{SourceID: 2, FieldID: 1000, Name: "region", Transform: spec.Transform{Kind: spec.TransformIdentity}}}}
	loc := "file://" + filepath.Join(dir, "wh", "db", "events")
	md, err := spec.NewTableMetadata(schema, ps, spec.SortOrder{OrderID: 0}, loc,
		map[string]string{"write.target-file-size-bytes": "4194304", "owner": "tests"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, catalog.Ident{Namespace: []string{"db"}, Name: "events"}, md)
	if err != nil {
		t.Fatal(err)
	}
	data := func(name, region string, records, size int64) manifest.DataFile {
		return manifest.DataFile{Content: manifest.ContentData, FilePath: loc + "/data/region=" + region + "/" + name + ".parquet",
			FileFormat: "PARQUET", Partition: []any{region}, RecordCount: records, FileSizeInBytes: size}
	}
	opts := commit.DefaultOptions()
	tbl, s1, err := icetable.CommitChange(ctx, cat, tbl, icetable.Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{
		data("a", "eu", 100, 2000), data("b", "eu", 50, 3<<20), data("c", "us", 10, 5<<20),
	}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	pos := manifest.DataFile{Content: manifest.ContentPositionDeletes, FilePath: loc + "/data/region=eu/pos.parquet", FileFormat: "PARQUET",
		Partition: []any{"eu"}, RecordCount: 30, FileSizeInBytes: 700}
	ref := loc + "/data/region=eu/a.parquet"
	pos.ReferencedDataFile = &ref
	eq := manifest.DataFile{Content: manifest.ContentEqualityDeletes, FilePath: loc + "/data/region=us/eq.parquet", FileFormat: "PARQUET",
		Partition: []any{"us"}, RecordCount: 2, FileSizeInBytes: 600, EqualityIDs: []int{1}}
	tbl, s2, err := icetable.CommitChange(ctx, cat, tbl, icetable.Change{Operation: spec.OperationDelete, AddDeletes: []manifest.DataFile{pos, eq}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	fx.table, fx.snaps = tbl, []int64{s1.SnapshotID, s2.SnapshotID}
	return fx
}

// run runs icectl against the fixture's catalog.
func (fx *fixture) run(t *testing.T, args ...string) result {
	t.Helper()
	return runCLI(t, fx.env, append(args, "--catalog-uri", fx.uri)...)
}

var (
	uuidRe  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	rfc3339 = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z`)
	epochMS = regexp.MustCompile(`\b1[6-9]\d{11}\b`)
)

// normalize replaces what differs between runs (temp dir, uuids, snapshot
// ids, times) with placeholders, so outputs can be compared with golden
// files.
func (fx *fixture) normalize(s string) string {
	s = strings.ReplaceAll(s, fx.dir, "$DIR")
	for i, id := range fx.snaps {
		s = strings.ReplaceAll(s, fmt.Sprint(id), fmt.Sprintf("$SNAP%d", i+1))
	}
	s = uuidRe.ReplaceAllString(s, "$$UUID")
	s = rfc3339.ReplaceAllString(s, "$$TIME")
	return epochMS.ReplaceAllString(s, "$$MS")
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}
