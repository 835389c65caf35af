package sparkinterop

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/internal/testing/fixture"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// TestPartitionValuesWithSpark: on tables whose data files store their
// identity partition columns as NULL (or other values) where their
// partition says otherwise (fixture.PartitionValues: what icectl's
// compaction of Hive-migrated tables left before issue 36 was fixed),
// Spark's filters prune those files on their metrics and miss their rows,
// which is what health's partition-values-mismatch finding names. The
// repairs health and verify partitions print, run as printed, give Spark
// the rows back, and Spark (with iceberg-go) reads the same table as
// before. It needs the read path to take an identity column's value from
// the partition (spec rule 1), as the fixed compaction does.
func TestPartitionValuesWithSpark(t *testing.T) {
	t.Parallel()
	forVersions(t, "pvals", func(t *testing.T, w *wapTable, dir string, v int) {
		wh := "file://" + filepath.Join(dir, "wh")
		cat, err := sqlcat.Open(w.ctx, catalog.Config{Name: w.name, URI: w.uri, Warehouse: wh})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cat.Close() })
		w.cat = cat
		(&fixture.Catalog{Catalog: cat, Ctx: w.ctx, Dir: dir, URI: w.uri, Warehouse: wh}).PartitionValuesTable(t, "t", v)

		count := func(where string) string {
			t.Helper()
			rows := w.mustSQL(nil, "SELECT count(*) AS n FROM {cat}.ns.t WHERE "+where)
			return fmt.Sprint(rows[0]["n"])
		}
		counts := func() string {
			return fmt.Sprintf("a=2: %s, a=9: %s, s='eu': %s", count("a = 2"), count("a = 9"), count("s = 'eu'"))
		}
		before := w.read("")
		dump := func() string {
			rows := w.mustSQL(nil, "SELECT to_json(struct(*)) AS j FROM {cat}.ns.t ORDER BY id")
			var b strings.Builder
			for _, r := range rows {
				fmt.Fprintln(&b, r["j"])
			}
			return b.String()
		}
		dumpBefore := dump()
		// Pruned on their metrics: the damaged files of a=2 and a=9 (all
		// NULL) and a=5 (s stored as 'other'); the eu rows of a=1 and the
		// files without metrics of a=7 and a=8 remain.
		if got, want := counts(), "a=2: 0, a=9: 0, s='eu': 7"; got != want {
			t.Errorf("Spark before the repair: %s, want %s", got, want)
		}

		out, stderr, code := w.icectl("health", "ns.t", "-o", "json")
		if code != 0 {
			t.Fatalf("health: %s", stderr)
		}
		var h struct {
			Findings []struct {
				Kind           string `json:"kind"`
				Recommendation string `json:"recommendation"`
			} `json:"findings"`
		}
		if err := json.Unmarshal([]byte(out), &h); err != nil {
			t.Fatal(err)
		}
		rec := ""
		for _, f := range h.Findings {
			if f.Kind == "partition-values-mismatch" {
				rec = f.Recommendation
			}
		}
		runPrinted(t, w, rec)
		out, _, code = w.icectl("verify", "partitions", "ns.t", "-o", "json")
		if code != 0 {
			var vr struct {
				Repair string `json:"repair"`
			}
			if err := json.Unmarshal([]byte(out), &vr); err != nil {
				t.Fatal(err)
			}
			runPrinted(t, w, vr.Repair)
		}
		if _, stderr, code := w.icectl("verify", "partitions", "ns.t"); code != 0 {
			t.Errorf("verify partitions after the repairs: %s", stderr)
		}

		if got, want := counts(), "a=2: 3, a=9: 2, s='eu': 9"; got != want {
			t.Errorf("Spark after the repair: %s, want %s", got, want)
		}
		if after := w.read(""); after != before {
			t.Errorf("Spark reads %s after the repair, %s before\n%s\n%s", after, before, dumpBefore, dump())
		}
		if n := w.goRows(); n != 19 {
			t.Errorf("iceberg-go reads %d rows, want 19", n)
		}
	})
}

// runPrinted runs a command line icectl printed, as printed (through the
// shell), with the binary under test for icectl.
func runPrinted(t *testing.T, w *wapTable, line string) {
	t.Helper()
	rest, ok := strings.CutPrefix(line, "icectl ")
	if !ok {
		t.Fatalf("printed command %q", line)
	}
	cmd := exec.CommandContext(w.ctx, "sh", "-c", "\"$ICECTL\" "+rest)
	cmd.Env = append(cmd.Environ(), "ICECTL="+testenv.Icectl(t))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
}
