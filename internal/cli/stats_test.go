package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestStatsPartitions runs stats partitions on the demo's orders table: a
// dry run changes nothing; a run registers a file of the head; after a
// compaction the next run computes incrementally from it, with the totals
// of a full computation; a snapshot that has a file is nothing to do.
func TestStatsPartitions(t *testing.T) {
	d := newDemo(t)
	const name = "shop.orders"
	before := tree(t, d.dir)
	dry := d.run(t, "stats", "partitions", name, "--dry-run", "-o", "json").mustSucceed(t).decodeJSON(t)
	if diff := changed(before, tree(t, d.dir)); len(diff) != 0 {
		t.Fatalf("--dry-run changed %v", diff)
	}
	if at(t, dry, "mode") != "full" || at(t, dry, "committed") != false || num(t, dry, "partitions") == "0" {
		t.Errorf("dry run: %v", dry)
	}
	first := d.run(t, "stats", "partitions", name, "-o", "json").mustSucceed(t).decodeJSON(t)
	path, _ := at(t, first, "statistics_path").(string)
	if at(t, first, "committed") != true || !strings.Contains(path, "/metadata/partition-stats-"+num(t, first, "snapshot_id")+"-") {
		t.Fatalf("first run: %v", first)
	}
	loc, _ := at(t, first, "metadata_location").(string)
	md, err := os.ReadFile(strings.TrimPrefix(loc, "file://"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Stats []struct {
			SnapshotID int64  `json:"snapshot-id"`
			Path       string `json:"statistics-path"`
			Size       int64  `json:"file-size-in-bytes"`
		} `json:"partition-statistics"`
	}
	if err := json.Unmarshal(md, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Stats) != 1 || doc.Stats[0].Path != path || fmt.Sprint(doc.Stats[0].SnapshotID) != num(t, first, "snapshot_id") ||
		fmt.Sprint(doc.Stats[0].Size) != num(t, first, "file_size_in_bytes") {
		t.Errorf("%s registers %+v, want %s", loc, doc.Stats, path)
	}

	d.run(t, "compact", name).mustSucceed(t)
	full := d.run(t, "stats", "partitions", name, "--full", "--dry-run", "-o", "json").mustSucceed(t).decodeJSON(t)
	inc := d.run(t, "stats", "partitions", name, "-o", "json").mustSucceed(t).decodeJSON(t)
	if at(t, inc, "mode") != "incremental" || num(t, inc, "base_snapshot_id") != num(t, first, "snapshot_id") {
		t.Errorf("after compaction: %v, want incremental from snapshot %s", inc, num(t, first, "snapshot_id"))
	}
	for _, k := range []string{"partitions", "data_files", "data_records", "data_bytes", "position_delete_files", "deletion_vectors", "equality_delete_files"} {
		if num(t, inc, k) != num(t, full, k) {
			t.Errorf("%s: incremental %s, full %s", k, num(t, inc, k), num(t, full, k))
		}
	}
	if r := d.run(t, "stats", "partitions", name); !strings.HasPrefix(r.stdout, name+": nothing to stats partitions: snapshot ") {
		t.Errorf("again: %q", r.stdout)
	}
}

// TestStatsPartitionsBadInput: an unknown table, an unknown snapshot, a
// malformed --snapshot and a truncated previous file are one-line errors
// with the right exit code, and change nothing.
func TestStatsPartitionsBadInput(t *testing.T) {
	d := newDemo(t)
	const name = "shop.orders"
	first := d.run(t, "stats", "partitions", name, "-o", "json").mustSucceed(t).decodeJSON(t)
	d.run(t, "compact", name).mustSucceed(t)
	path := strings.TrimPrefix(at(t, first, "statistics_path").(string), "file://")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data[:len(data)/2], 0o644); err != nil {
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
		{[]string{name}, ExitFailure, "--full computes without it"},
		{[]string{name, "--dry-run"}, ExitFailure, "the file has"},
	} {
		r := d.run(t, append([]string{"stats", "partitions"}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d and one line with %q", c.args, r.code, r.stdout, r.stderr, c.code, c.want)
		}
	}
	if diff := changed(before, tree(t, d.dir)); len(diff) != 0 {
		t.Errorf("a refused run changed %v", diff)
	}
	r := d.run(t, "stats", "partitions", name, "--full", "-o", "json").mustSucceed(t).decodeJSON(t)
	if at(t, r, "mode") != "full" || at(t, r, "committed") != true {
		t.Errorf("--full past the bad file: %v", r)
	}
}

// TestHealthWithPartitionStats: health reports the same (findings,
// partitions, every count) with and without a partition statistics file
// of the current snapshot, naming the file when it agrees with the
// manifests; a truncated file is a note on stderr and the same report,
// never an error.
func TestHealthWithPartitionStats(t *testing.T) {
	d := newDemo(t)
	const name = "shop.orders"
	report := func(wantNote bool) (map[string]any, string) {
		t.Helper()
		r := d.run(t, "health", name, "-o", "json")
		if r.code != ExitOK {
			t.Fatalf("health: exit %d: %s", r.code, r.stderr)
		}
		if hasNote := strings.Contains(r.stderr, "icectl: note: "); hasNote != wantNote || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("health stderr %q; want a note: %v", r.stderr, wantNote)
		}
		m := r.decodeJSON(t)
		path, _ := m["partition_statistics"].(string)
		delete(m, "partition_statistics")
		delete(m, "now_ms")
		delete(m["snapshots"].(map[string]any), "oldest_age_ms")
		return m, path
	}
	without, path := report(false)
	if path != "" {
		t.Fatalf("partition_statistics %q before any file", path)
	}
	st := d.run(t, "stats", "partitions", name, "-o", "json").mustSucceed(t).decodeJSON(t)
	file := at(t, st, "statistics_path").(string)
	with, path := report(false)
	if path != file {
		t.Errorf("partition_statistics %q, want %q", path, file)
	}
	// The registration is one more metadata file in the log.
	without["metadata_files"], with["metadata_files"] = nil, nil
	a, _ := json.Marshal(without)
	b, _ := json.Marshal(with)
	if string(a) != string(b) {
		t.Errorf("health with the file\n%s\nwithout\n%s", b, a)
	}
	if err := os.WriteFile(strings.TrimPrefix(file, "file://"), []byte("PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	corrupt, path := report(true)
	corrupt["metadata_files"] = nil
	if c, _ := json.Marshal(corrupt); path != "" || string(c) != string(a) {
		t.Errorf("health with a truncated file: partition_statistics %q\n%s\nwant\n%s", path, c, a)
	}
}
