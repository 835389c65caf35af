package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	icetable "github.com/icectl/icectl/iceberg/table"
	icefx "github.com/icectl/icectl/internal/testing/fixture"
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
	c := icefx.NewSQLite(t, icefx.WithName("default"))
	defer c.Close() // the commands under test open it themselves
	fx := &fixture{dir: c.Dir, uri: c.URI, env: map[string]string{"HOME": c.Dir}}
	schema := spec.Schema{ID: 0, Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "region", Type: spec.StringType{}, Required: true},
		{ID: 3, Name: "note", Type: spec.StringType{}},
	}}
	tb := c.Table(t, icefx.TableOptions{Namespace: "db", Name: "events", Schema: &schema, Spec: byRegion(),
		Props: map[string]string{"write.target-file-size-bytes": "4194304", "owner": "tests"}})
	tbl := tb.Load(t)
	loc := tbl.Metadata.Location
	data := func(name, region string, records, size int64) manifest.DataFile {
		return icefx.Listed(loc+"/data/region="+region+"/"+name+".parquet", []any{region}, records, size)
	}
	tbl, s1, err := icetable.CommitChange(c.Ctx, c, tbl, icetable.Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{
		data("a", "eu", 100, 2000), data("b", "eu", 50, 3<<20), data("c", "us", 10, 5<<20),
	}}, tb.Opts)
	if err != nil {
		t.Fatal(err)
	}
	pos := manifest.DataFile{Content: manifest.ContentPositionDeletes, FilePath: loc + "/data/region=eu/pos.parquet", FileFormat: "PARQUET",
		Partition: []any{"eu"}, RecordCount: 30, FileSizeInBytes: 700}
	ref := loc + "/data/region=eu/a.parquet"
	pos.ReferencedDataFile = &ref
	eq := manifest.DataFile{Content: manifest.ContentEqualityDeletes, FilePath: loc + "/data/region=us/eq.parquet", FileFormat: "PARQUET",
		Partition: []any{"us"}, RecordCount: 2, FileSizeInBytes: 600, EqualityIDs: []int{1}}
	tbl, s2, err := icetable.CommitChange(c.Ctx, c, tbl, icetable.Change{Operation: spec.OperationDelete, AddDeletes: []manifest.DataFile{pos, eq}}, tb.Opts)
	if err != nil {
		t.Fatal(err)
	}
	fx.table, fx.snaps = tbl, []int64{s1.SnapshotID, s2.SnapshotID}
	return fx
}

// byRegion is the fixtures' partition spec: identity on field 2, region.
func byRegion() spec.PartitionSpec {
	return spec.PartitionSpec{ID: 0, Fields: []spec.PartitionField{{SourceID: 2, FieldID: 1000, Name: "region", Transform: spec.Transform{Kind: spec.TransformIdentity}}}}
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
