package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestHealthFromStats: health --from-stats judges the table from its
// partition statistics file: refused (one line saying what to type)
// before there is one; after `stats partitions`, the same files, rows,
// bytes, delete counts and partitions as the manifests' report, the exact
// findings the same, the basis and a note saying what it cannot judge;
// it changes no byte and reads no manifest: with every manifest gone,
// health fails and health --from-stats still answers, the same.
func TestHealthFromStats(t *testing.T) {
	d := newDemo(t)
	const name = "shop.orders"
	r := d.run(t, "health", name, "--from-stats")
	if r.code != ExitFailure || !strings.Contains(r.stderr, "no partition statistics file") ||
		!strings.Contains(r.stderr, "icectl stats partitions "+name) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
		t.Fatalf("--from-stats without a file: exit %d, stderr %q", r.code, r.stderr)
	}
	d.run(t, "stats", "partitions", name).mustSucceed(t)

	exact := d.run(t, "health", name, "-o", "json").mustSucceed(t).decodeJSON(t)
	before := tree(t, d.dir)
	fs := d.run(t, "health", name, "--from-stats", "-o", "json").mustSucceed(t)
	if got := changed(before, tree(t, d.dir)); len(got) != 0 {
		t.Errorf("health --from-stats changed %v", got)
	}
	if !strings.Contains(fs.stderr, "judged from partition statistics") {
		t.Errorf("no note on what --from-stats cannot judge: %q", fs.stderr)
	}
	stats := fs.decodeJSON(t)
	if at(t, stats, "basis") != "partition-statistics" || at(t, stats, "partition_statistics") == "" {
		t.Errorf("basis %v, file %v", stats["basis"], stats["partition_statistics"])
	}
	for _, path := range [][]any{
		{"data_files", "files"}, {"data_files", "records"}, {"data_files", "bytes"},
		{"delete_files", "position_deletes", "count"}, {"delete_files", "deletion_vectors", "count"},
		{"delete_files", "equality_deletes", "count"}, {"delete_files", "equality_deletes", "records"},
		{"delete_files", "deleted_rows"}, {"manifests"}, {"snapshots", "count"}, {"snapshots", "older_than_max_age"},
	} {
		a, _ := json.Marshal(at(t, exact, path...))
		b, _ := json.Marshal(at(t, stats, path...))
		if string(a) != string(b) {
			t.Errorf("%v: %s from the manifests, %s from the statistics", path, a, b)
		}
	}
	type part struct {
		Spec              any
		Partition         any
		Files, Rows, Size any
	}
	parts := func(m map[string]any) []part {
		var out []part
		for _, p := range at(t, m, "partitions").([]any) {
			out = append(out, part{at(t, p, "spec_id"), at(t, p, "partition"), at(t, p, "data_files", "files"),
				at(t, p, "data_files", "records"), at(t, p, "data_files", "bytes")})
		}
		return out
	}
	if a, b := parts(exact), parts(stats); !slices.Equal(a, b) || len(a) == 0 {
		t.Errorf("partitions from the manifests %v, from the statistics %v", a, b)
	}
	kinds := func(m map[string]any) []string {
		var out []string
		for _, f := range at(t, m, "findings").([]any) {
			switch k := at(t, f, "kind").(string); k {
			case "small-files", "small-position-deletes", "delete-ratio", "unsorted-files", "resurrected-rows":
				// judged from averages, or not at all
			default:
				out = append(out, k)
			}
		}
		return out
	}
	if a, b := kinds(exact), kinds(stats); !slices.Equal(a, b) {
		t.Errorf("exact findings from the manifests %v, from the statistics %v", a, b)
	}

	// Every manifest gone (not the manifest lists): only --from-stats
	// can answer, as before.
	var gone int
	err := filepath.Walk(d.dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".avro") && !strings.HasPrefix(filepath.Base(p), "snap-") {
			gone++
			return os.Remove(p)
		}
		return err
	})
	if err != nil || gone == 0 {
		t.Fatalf("removing manifests: %d, %v", gone, err)
	}
	if r := d.run(t, "health", name); r.code == ExitOK {
		t.Fatal("health read a table whose manifests are gone")
	}
	again := d.run(t, "health", name, "--from-stats", "-o", "json").mustSucceed(t).decodeJSON(t)
	delete(again, "now_ms")
	delete(stats, "now_ms")
	delete(again["snapshots"].(map[string]any), "oldest_age_ms")
	delete(stats["snapshots"].(map[string]any), "oldest_age_ms")
	a, _ := json.Marshal(stats)
	b, _ := json.Marshal(again)
	if string(a) != string(b) {
		t.Errorf("--from-stats without manifests\n%s\nwith\n%s", b, a)
	}
}
