package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestStatsColumns runs stats columns on the demo's orders table: a dry
// run changes nothing; a run of two columns registers a file of the head
// with their sketches; a run of every column computes only the others and
// carries the two over; a third run is nothing to do; expiring the
// snapshot deletes its file.
func TestStatsColumns(t *testing.T) {
	d := newDemo(t)
	const name = "shop.orders"
	before := tree(t, d.dir)
	dry := d.run(t, "stats", "columns", name, "--dry-run", "-o", "json").mustSucceed(t).decodeJSON(t)
	if diff := changed(before, tree(t, d.dir)); len(diff) != 0 {
		t.Fatalf("--dry-run changed %v", diff)
	}
	if at(t, dry, "committed") != false || len(dry["columns"].([]any)) != 6 {
		t.Errorf("dry run: %v", dry)
	}
	ndv := map[string]string{}
	for _, c := range dry["columns"].([]any) {
		m := c.(map[string]any)
		ndv[m["name"].(string)] = num(t, m, "ndv")
	}
	// The demo has 500 customers, 3 regions and quantities 1 to 9.
	if ndv["customer"] != "500" || ndv["region"] != "3" || ndv["quantity"] != "9" {
		t.Errorf("dry run estimates %v", ndv)
	}

	first := d.run(t, "stats", "columns", name, "--columns", "region,customer", "-o", "json").mustSucceed(t).decodeJSON(t)
	id := num(t, first, "snapshot_id")
	path, _ := at(t, first, "statistics_path").(string)
	if at(t, first, "committed") != true || !strings.Contains(path, "/metadata/"+id+"-") || !strings.HasSuffix(path, ".stats") {
		t.Fatalf("first run: %v", first)
	}
	stats := registered(t, first)
	if len(stats) != 1 || stats[0].Path != path || len(stats[0].Blobs) != 2 {
		t.Fatalf("registered %+v, want %s with 2 blobs", stats, path)
	}

	all := d.run(t, "stats", "columns", name, "-o", "json").mustSucceed(t).decodeJSON(t)
	if at(t, all, "replaces") != path || num(t, all, "carried_blobs") != "2" || len(all["columns"].([]any)) != 4 {
		t.Errorf("second run: %v", all)
	}
	stats = registered(t, all)
	if len(stats) != 1 || stats[0].Path != at(t, all, "statistics_path") || len(stats[0].Blobs) != 6 {
		t.Fatalf("registered %+v, want one file with 6 blobs", stats)
	}
	for _, b := range stats[0].Blobs {
		if b.Type != "apache-datasketches-theta-v1" || len(b.Fields) != 1 || b.Properties["ndv"] == "" {
			t.Errorf("blob %+v", b)
		}
	}
	if r := d.run(t, "stats", "columns", name); !strings.HasPrefix(r.stdout, name+": nothing to stats columns: snapshot "+id+" has sketches") {
		t.Errorf("third run: %q", r.stdout)
	}

	// A compaction makes a new head; expiring everything older removes
	// the snapshot, its registration and its file.
	d.run(t, "compact", name).mustSucceed(t)
	file := strings.TrimPrefix(stats[0].Path, "file://")
	ex := d.run(t, "expire", name, "--retain-last", "1", "--older-than", "0s", "-o", "json").mustSucceed(t).decodeJSON(t)
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("after expire (%v) the statistics file of the expired snapshot is still there: %v", ex, err)
	}
	if stats := registered(t, ex); len(stats) != 0 {
		t.Errorf("after expire: registered %+v", stats)
	}
}

type registeredStats struct {
	SnapshotID int64  `json:"snapshot-id"`
	Path       string `json:"statistics-path"`
	Blobs      []struct {
		Type       string            `json:"type"`
		Fields     []int             `json:"fields"`
		Properties map[string]string `json:"properties"`
	} `json:"blob-metadata"`
}

// registered is the statistics list of the metadata file a run's JSON
// names in metadata_location.
func registered(t *testing.T, run map[string]any) []registeredStats {
	t.Helper()
	loc, _ := at(t, run, "metadata_location").(string)
	data, err := os.ReadFile(strings.TrimPrefix(loc, "file://"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Stats []registeredStats `json:"statistics"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Stats
}

// TestStatsColumnsBadInput: an unknown table, snapshot or column, a
// nested or non-primitive column, a malformed --snapshot and an
// unreadable previous file are one-line errors with the right exit code,
// and change nothing.
func TestStatsColumnsBadInput(t *testing.T) {
	d := newDemo(t)
	const name = "shop.orders"
	first := d.run(t, "stats", "columns", name, "--columns", "region", "-o", "json").mustSucceed(t).decodeJSON(t)
	path := strings.TrimPrefix(at(t, first, "statistics_path").(string), "file://")
	if err := os.WriteFile(path, []byte("PFA1"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := tree(t, d.dir)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"shop.nope"}, ExitFailure, "shop.nope"},
		{[]string{name, "--snapshot", "42"}, ExitUsage, "no snapshot 42"},
		{[]string{name, "--snapshot", "x"}, ExitUsage, "invalid --snapshot"},
		{[]string{name, "--columns", "nope"}, ExitUsage, `bad column "nope": the schema has no such column`},
		{[]string{name, "--columns", "a.b"}, ExitUsage, "no such field"},
		{[]string{name, "--columns", "customer"}, ExitFailure, "unreadable statistics file"},
	} {
		r := d.run(t, append([]string{"stats", "columns"}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d and one line with %q", c.args, r.code, r.stdout, r.stderr, c.code, c.want)
		}
	}
	if diff := changed(before, tree(t, d.dir)); len(diff) != 0 {
		t.Errorf("a refused run changed %v", diff)
	}
}
