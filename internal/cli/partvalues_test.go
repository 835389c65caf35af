package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/spec"
	icetable "github.com/icectl/icectl/iceberg/table"
	icefx "github.com/icectl/icectl/internal/testing/fixture"
)

type healthFindings struct {
	PartitionValues struct {
		DataFiles  int   `json:"data_files"`
		Rows       int64 `json:"rows"`
		Partitions []struct {
			SpecID    int      `json:"spec_id"`
			Partition string   `json:"partition"`
			DataFiles int      `json:"data_files"`
			Rows      int64    `json:"rows"`
			Fields    []string `json:"fields"`
		} `json:"partitions"`
		Where string `json:"where"`
	} `json:"partition_values_mismatch"`
	Findings []struct {
		Kind           string `json:"kind"`
		Message        string `json:"message"`
		Recommendation string `json:"recommendation"`
	} `json:"findings"`
}

func partitionHealth(t *testing.T, tb *icefx.Table) healthFindings {
	t.Helper()
	r := runCLI(t, nil, append([]string{"health", tb.Name(), "--output", "json"}, tb.CatalogFlags()...)...).mustSucceed(t)
	var h healthFindings
	if err := json.Unmarshal([]byte(r.stdout), &h); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h healthFindings) recommendation(kind string) (string, bool) {
	for _, f := range h.Findings {
		if f.Kind == kind {
			return f.Recommendation, true
		}
	}
	return "", false
}

// TestPartitionValuesFound: on v2 and v3 tables whose data files store
// their identity partition columns as NULL (or other values) where the
// manifest's partition value is set, health names exactly the damaged
// partitions of each spec by their metrics, with the compaction that
// rewrites them, and verify partitions lists one line per file and field
// (also the file whose metrics say nothing, read), exits 1 and gives the
// same in JSON; neither flags the healthy file nor the Hive-style file
// without the column, and neither changes a byte.
func TestPartitionValuesFound(t *testing.T) {
	for _, v := range []int{2, 3} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			c := icefx.NewSQLite(t, icefx.WithName("default"))
			tb := c.PartitionValuesTable(t, "pv", v).Table
			before := hashTree(t, c.Dir)

			h := partitionHealth(t, tb)
			var parts []string
			for _, p := range h.PartitionValues.Partitions {
				parts = append(parts, fmt.Sprintf("%d %s %d %d %s", p.SpecID, p.Partition, p.DataFiles, p.Rows, strings.Join(p.Fields, ",")))
			}
			want := []string{
				"0 a=9 1 2 a",
				"1 a=2/b=20/s=us/d=19001/m=2.50/st_q=6 1 3 a,b,s,d,m,st_q",
				"1 a=5/b=50/s=eu/d=19004/m=5.50/st_q=9 1 2 s",
			}
			if !slices.Equal(parts, want) {
				t.Errorf("damaged partitions:\n%s\nwant:\n%s", strings.Join(parts, "\n"), strings.Join(want, "\n"))
			}
			if h.PartitionValues.DataFiles != 3 || h.PartitionValues.Rows != 7 {
				t.Errorf("damaged: %d files, %d rows; want 3, 7", h.PartitionValues.DataFiles, h.PartitionValues.Rows)
			}
			// Each damaged partition by the identity columns of its own
			// spec (spec 0 partitions by a alone).
			const wantWhere = "a = 9 OR (a = 2 AND b = 20 AND s = 'us' AND d = DATE '2022-01-09' AND m = 2.50 AND st.q = 6) OR (a = 5 AND b = 50 AND s = 'eu' AND d = DATE '2022-01-12' AND m = 5.50 AND st.q = 9)"
			if h.PartitionValues.Where != wantWhere {
				t.Errorf("where %q", h.PartitionValues.Where)
			}
			rec, ok := h.recommendation("partition-values-mismatch")
			wantRec := "icectl compact ns.pv --rewrite-all --where " + shellQuote(wantWhere) + " --catalog-uri " + c.URI + " --catalog-name default"
			if !ok || rec != wantRec {
				t.Errorf("recommendation %q (found %v), want %q", rec, ok, wantRec)
			}
			text := runCLI(t, nil, append([]string{"health", tb.Name()}, tb.CatalogFlags()...)...).mustSucceed(t).stdout
			for _, w := range []string{"partition-values-mismatch: 3 data files (7 rows) in 3 partitions store identity partition columns otherwise than their partition values",
				"1 a=2/b=20/s=us/d=19001/m=2.50/st_q=6 1 3 a,b,s,d,m,st_q"} {
				if !strings.Contains(squash(text), w) {
					t.Errorf("health text lacks %q:\n%s", w, text)
				}
			}

			r := runCLI(t, nil, append([]string{"verify", "partitions", tb.Name(), "--max-violations", "100"}, tb.CatalogFlags()...)...)
			if r.code != ExitFailure || !strings.Contains(r.stderr, "16 violation(s) in 5 data file(s)") {
				t.Errorf("verify partitions: exit %d, stderr %q", r.code, r.stderr)
			}
			var lines []string
			for _, l := range strings.Split(r.stdout, "\n") {
				if strings.HasPrefix(l, "  partition-values-mismatch: ") {
					file := l[strings.LastIndex(l[:strings.Index(l, " (spec")], "/")+1 : strings.Index(l, " (spec")]
					field := l[strings.Index(l, "partition field ")+len("partition field "):]
					lines = append(lines, file+" "+field[:strings.Index(field, ":")])
				}
			}
			slices.Sort(lines)
			var wantLines []string
			for _, f := range []string{"a", "b", "d", "m", "s", "st_q"} {
				wantLines = append(wantLines, "damaged.parquet "+f, "unmeasured.parquet "+f)
			}
			wantLines = append(wantLines, "bounds.parquet s", "old-damaged.parquet a", "damaged-noids.parquet a", "damaged-noids.parquet st_q")
			slices.Sort(wantLines)
			if !slices.Equal(lines, wantLines) {
				t.Errorf("verify lines:\n%s\nwant:\n%s\n%s", strings.Join(lines, "\n"), strings.Join(wantLines, "\n"), r.stdout)
			}
			verifyWhere := "a = 9 OR (a = 2 AND b = 20 AND s = 'us' AND d = DATE '2022-01-09' AND m = 2.50 AND st.q = 6) OR (a = 4 AND b = 40 AND s = 'af' AND d = DATE '2022-01-11' AND m = 5.00 AND st.q = 8) OR (a = 5 AND b = 50 AND s = 'eu' AND d = DATE '2022-01-12' AND m = 5.50 AND st.q = 9) OR (a = 8 AND b = 80 AND s = 'eu' AND d = DATE '2022-01-15' AND m = 8.00 AND st.q = 12)"
			if !strings.Contains(squash(r.stdout), squash("repair icectl compact ns.pv --rewrite-all --where "+shellQuote(verifyWhere))) {
				t.Errorf("verify names no repair:\n%s", r.stdout)
			}
			r = runCLI(t, nil, append([]string{"verify", "partitions", tb.Name(), "-o", "json"}, tb.CatalogFlags()...)...)
			m := r.decodeJSON(t)
			if r.code != ExitFailure || m["ok"] != false || fmt.Sprint(m["damaged_files"]) != "5" || fmt.Sprint(m["files_read"]) != "5" ||
				len(m["problems"].([]any)) != 16 || !strings.Contains(fmt.Sprint(m["repair"]), "--where") {
				t.Errorf("verify partitions json: exit %d, %v", r.code, m)
			}
			r = runCLI(t, nil, append([]string{"verify", "partitions", tb.Name(), "--metrics-only"}, tb.CatalogFlags()...)...)
			if r.code != ExitFailure || !strings.Contains(squash(r.stdout), "undecided (--metrics-only) 30") {
				t.Errorf("verify partitions --metrics-only: exit %d\n%s", r.code, r.stdout)
			}
			checkSameTree(t, before, hashTree(t, c.Dir))
		})
	}
}

// TestVerifyPartitionsClean: a table whose files all store their
// partition values, or not the column, passes with exit 0.
func TestVerifyPartitionsClean(t *testing.T) {
	c := icefx.NewSQLite(t, icefx.WithName("default"))
	pv := c.PartitionValuesTable(t, "pv", 2)
	tb := pv.Table
	keep := []string{pv.Healthy.FilePath, pv.HealthyUnmeasured.FilePath, pv.Hive.FilePath, pv.HiveNoIDs.FilePath}
	ch := icetable.Change{Operation: spec.OperationDelete}
	for _, e := range tb.LiveFiles(t, nil).Data {
		if !slices.Contains(keep, e.Entry.DataFile.FilePath) {
			ch.Remove = append(ch.Remove, e.Key())
		}
	}
	tb.Commit(t, nil, ch)
	r := runCLI(t, nil, append([]string{"verify", "partitions", tb.Name()}, tb.CatalogFlags()...)...).mustSucceed(t)
	if !strings.Contains(r.stdout, "every data file stores its identity partition values") || !strings.Contains(squash(r.stdout), "files read (metrics did not decide) 3") {
		t.Errorf("verify partitions:\n%s", r.stdout)
	}
	if _, ok := partitionHealth(t, tb).recommendation("partition-values-mismatch"); ok {
		t.Error("health finds damage in a clean table")
	}
}

// TestPartitionValuesRepair runs the compaction health recommends for
// damaged partition values, as printed, then the one verify partitions
// recommends for what only reading finds: after them no finding is left,
// every data file stores its identity partition values (null count 0,
// lower = upper = the value, and the values as stored), and the table has
// the same rows. It needs the read path to take an identity column's value
// from the partition (spec rule 1), as the fixed compaction does.
func TestPartitionValuesRepair(t *testing.T) {
	for _, v := range []int{2, 3} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			c := icefx.NewSQLite(t, icefx.WithName("default"))
			pv := c.PartitionValuesTable(t, "pv", v)
			tb := pv.Table
			before := tb.Checksum(t, nil)
			rec, ok := partitionHealth(t, tb).recommendation("partition-values-mismatch")
			if !ok {
				t.Fatal("no partition-values-mismatch finding")
			}
			runRecommended(t, rec)
			if rec, ok := partitionHealth(t, tb).recommendation("partition-values-mismatch"); ok {
				t.Errorf("after the repair the finding is still there: %s", rec)
			}
			r := runCLI(t, nil, append([]string{"verify", "partitions", tb.Name(), "-o", "json"}, tb.CatalogFlags()...)...)
			if r.code == ExitFailure {
				repair := fmt.Sprint(r.decodeJSON(t)["repair"])
				runRecommended(t, repair)
			}
			runCLI(t, nil, append([]string{"verify", "partitions", tb.Name()}, tb.CatalogFlags()...)...).mustSucceed(t)

			tbl := tb.Load(t)
			md := tbl.Metadata
			s := icefx.PartitionValuesSchema()
			for _, e := range tb.LiveFiles(t, tbl).Data {
				df := e.Entry.DataFile
				if df.FilePath == pv.Hive.FilePath || df.FilePath == pv.HiveNoIDs.FilePath || df.FilePath == pv.Healthy.FilePath || df.FilePath == pv.HealthyUnmeasured.FilePath {
					continue
				}
				ps, _ := md.SpecByID(int(df.SpecID))
				f, err := tbl.IO.Open(context.Background(), df.FilePath)
				if err != nil {
					t.Fatal(err)
				}
				rows, err := datafile.ReadRows(context.Background(), f, f.Size(), &s)
				f.Close()
				if err != nil {
					t.Fatal(err)
				}
				for i, pf := range ps.Fields {
					want := df.Partition[i]
					enc, err := spec.EncodeValue(fieldType(s, pf.SourceID), want)
					if err != nil {
						t.Fatal(err)
					}
					id := pf.SourceID
					if df.NullValueCounts[id] != 0 || string(df.LowerBounds[id]) != string(enc) || string(df.UpperBounds[id]) != string(enc) {
						t.Errorf("%s field %s: null count %d, bounds %x..%x, want 0 and %x", df.FilePath, pf.Name, df.NullValueCounts[id], df.LowerBounds[id], df.UpperBounds[id], enc)
					}
					for _, row := range rows {
						got := storedValue(row, id)
						if fmt.Sprint(got) != fmt.Sprint(want) {
							t.Errorf("%s field %s: a row stores %v, want %v", df.FilePath, pf.Name, got, want)
							break
						}
					}
				}
			}
			if after := tb.Checksum(t, nil); after != before {
				t.Errorf("rows %+v after, %+v before", after, before)
			}
		})
	}
}

// runRecommended runs a recommended command line as printed.
func runRecommended(t *testing.T, line string) {
	t.Helper()
	args := splitShell(t, line)
	if len(args) < 2 || args[0] != "icectl" {
		t.Fatalf("recommendation %q", line)
	}
	runCLI(t, nil, args[1:]...).mustSucceed(t)
}

func fieldType(s spec.Schema, id int) spec.Type {
	f, _ := s.FindField(id)
	return f.Type
}

// storedValue is the value of field id in a row of PartitionValuesSchema
// (st.q is inside st).
func storedValue(row []any, id int) any {
	switch id {
	case 8:
		st, _ := row[6].([]any)
		if st == nil {
			return nil
		}
		return st[0]
	default:
		return row[id-1]
	}
}

// squash joins the words of s with single spaces, for text tables.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestPartitionValuesRepairSelects: the compaction health recommends, and
// the one verify partitions recommends, plan exactly the damaged files
// (--dry-run); a --where naming a column that not every spec partitions
// by identity selects them as well, since the metrics of a column the
// file's partition gives are not judged.
func TestPartitionValuesRepairSelects(t *testing.T) {
	c := icefx.NewSQLite(t, icefx.WithName("default"))
	pv := c.PartitionValuesTable(t, "pv", 3)
	tb := pv.Table
	before := hashTree(t, c.Dir)
	planned := func(line string) []string {
		t.Helper()
		args := splitShell(t, line)
		r := runCLI(t, nil, append(args[1:], "--dry-run", "-o", "json")...).mustSucceed(t)
		var p struct {
			Groups []struct {
				Inputs []struct {
					Path string `json:"path"`
				} `json:"inputs"`
			} `json:"groups"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, g := range p.Groups {
			for _, in := range g.Inputs {
				out = append(out, in.Path)
			}
		}
		slices.Sort(out)
		return out
	}
	sorted := func(paths ...string) []string { slices.Sort(paths); return paths }

	rec, _ := partitionHealth(t, tb).recommendation("partition-values-mismatch")
	if got, want := planned(rec), sorted(pv.OldDamaged.FilePath, pv.Damaged.FilePath, pv.Bounds.FilePath); !slices.Equal(got, want) {
		t.Errorf("health's repair %q plans %v, want %v", rec, got, want)
	}
	r := runCLI(t, nil, append([]string{"verify", "partitions", tb.Name(), "-o", "json"}, tb.CatalogFlags()...)...)
	repair := fmt.Sprint(r.decodeJSON(t)["repair"])
	if got, want := planned(repair), sorted(pv.OldDamaged.FilePath, pv.Damaged.FilePath, pv.Bounds.FilePath, pv.Unmeasured.FilePath, pv.DamagedNoIDs.FilePath); !slices.Equal(got, want) {
		t.Errorf("verify's repair %q plans %v, want %v", repair, got, want)
	}
	// A --where on any column of the file's identity partition selects
	// the damaged file too: its metrics (all NULL) are not judged for a
	// column the partition gives (where.Filter.MatchMetricsIn).
	naive := "icectl compact ns.pv --rewrite-all --where 'a = 2 AND b = 20' --catalog-uri " + c.URI + " --catalog-name default"
	if got := planned(naive); !slices.Contains(got, pv.Damaged.FilePath) {
		t.Errorf("%s plans %v, not the damaged file %s", naive, got, pv.Damaged.FilePath)
	}
	checkSameTree(t, before, hashTree(t, c.Dir))
}
