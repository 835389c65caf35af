package compact

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/testenv"
	"github.com/icectl/icectl/plan"
)

// dayOf is day(ts) of a timestamp given as JSON text, computed here
// rather than by the code under test.
func dayOf(t *testing.T, ts string) int32 {
	t.Helper()
	tm, err := time.Parse("2006-01-02T15:04:05", ts)
	if err != nil {
		t.Fatal(err)
	}
	return int32(tm.Unix() / 86400)
}

// TestCompactOutputSpec moves data written under older partition specs
// into the current one (compact --output-spec current): a file of
// identity(cat) holds rows of several days, so its rows are fanned out to
// files of day(ts), bucket[4](id); an unpartitioned table's files go to
// bucket[4](id). With position deletes (v2) or DVs (v3) on old files,
// nulls in the partition sources, and (v3) lineage: icectl's scan and
// iceberg-go read the same rows (and lineage) before and after, every
// live data file is then in the current spec, and every row of every
// file has the partition values the spec's transforms give it.
func TestCompactOutputSpec(t *testing.T) {
	s := schemaOf(fID, field(2, "cat", spec.StringType{}), field(3, "ts", spec.TimestampType{}))
	newSpec := []spec.PartitionField{
		{SourceID: 3, FieldID: 1001, Name: "ts_day", Transform: spec.ParseTransform("day")},
		{SourceID: 1, FieldID: 1002, Name: "id_bucket", Transform: spec.ParseTransform("bucket[4]")},
	}
	row := func(id int, cat, ts string) string {
		c, tv := "null", "null"
		if cat != "" {
			c = fmt.Sprintf("%q", cat)
		}
		if ts != "" {
			tv = fmt.Sprintf("%q", ts)
		}
		return fmt.Sprintf(`{"id":%d,"cat":%s,"ts":%s}`, id, c, tv)
	}
	cases := []struct {
		name  string
		old   spec.PartitionSpec
		build func(t *testing.T, b *evo)
	}{{
		name: "identity-to-day-bucket",
		old:  spec.PartitionSpec{Fields: []spec.PartitionField{{SourceID: 2, FieldID: 1000, Name: "cat", Transform: spec.ParseTransform("identity")}}},
		build: func(t *testing.T, b *evo) {
			f1 := b.write(s, []any{"a"}, "["+strings.Join([]string{
				row(1, "a", "2024-03-01T10:00:00"), row(2, "a", "2024-03-01T23:59:59"),
				row(3, "a", "2024-03-02T00:00:00"), row(4, "a", ""), row(5, "a", "1969-12-31T23:00:00")}, ",")+"]")
			f2 := b.write(s, []any{"b"}, "["+row(6, "b", "2024-03-02T08:00:00")+","+row(7, "b", "2024-03-05T08:00:00")+"]")
			b.write(s, []any{nil}, "["+row(8, "", "2024-03-01T01:00:00")+","+row(9, "", "")+"]")
			b.del(f1, 1)
			b.del(f2, 0)
		},
	}, {
		name: "unpartitioned-to-day-bucket",
		old:  unpartitioned,
		build: func(t *testing.T, b *evo) {
			f1 := b.write(s, nil, "["+row(1, "a", "2024-03-01T10:00:00")+","+row(2, "b", "")+","+row(3, "", "2024-03-04T10:00:00")+"]")
			b.write(s, nil, "["+row(4, "a", "2024-03-01T11:00:00")+","+row(5, "c", "2024-03-09T10:00:00")+"]")
			b.del(f1, 2)
		},
	}}
	for _, c := range cases {
		for _, v := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s/v%d", c.name, v), func(t *testing.T) {
				b := newEvo(t, v, s, c.old, spec.SortOrder{})
				c.build(t, b)
				b.partitionBy(newSpec...)
				// A file already in the new spec stays where it is.
				ts := "2024-03-03T12:00:00"
				b.write(s, []any{dayOf(t, ts), bucketLong(10, 4)}, "["+row(10, "z", ts)+"]")
				e := b.e
				lineage := v >= 3
				own := ownRows(t, e.Load(t), lineage)
				goBefore := goRowsLineage(t, e, lineage)
				sum := checksum(t, e.Load(t))
				var from *spec.Snapshot
				if lineage {
					from = e.Load(t).Metadata.CurrentSnapshot()
				}
				cur := e.Load(t).Metadata.DefaultSpecID
				var oldFiles int
				for _, fe := range liveFiles(t, e.Load(t)).Data {
					if int(fe.Entry.DataFile.SpecID) != cur {
						oldFiles++
					}
				}

				opts := e.options()
				opts.Plan.OutputSpec = "current"
				p, err := PlanTable(e.Ctx, e.Load(t), opts)
				if err != nil {
					t.Fatal(err)
				}
				planned := 0
				for _, g := range p.Groups {
					planned += g.InputFiles
				}
				if planned != oldFiles {
					t.Errorf("the plan rewrites %d files, want the %d of the old spec", planned, oldFiles)
				}
				rep, err := e.compact(t, opts)
				if err != nil {
					t.Fatalf("compaction: %v", err)
				}
				if rep.Committed() == 0 || rep.Failed() != 0 {
					t.Fatalf("compaction: %d groups committed, %d failed", rep.Committed(), rep.Failed())
				}
				tbl := e.Load(t)
				verifyTable(t, "compaction", tbl, from)
				if got := ownRows(t, tbl, lineage); !slices.Equal(got, own) {
					t.Errorf("icectl reads other rows:\n%s\nbefore:\n%s", strings.Join(got, "\n"), strings.Join(own, "\n"))
				}
				if got := goRowsLineage(t, e, lineage); !slices.Equal(got, goBefore) {
					t.Errorf("iceberg-go reads other rows:\n%s\nbefore:\n%s", strings.Join(got, "\n"), strings.Join(goBefore, "\n"))
				}
				if got := checksum(t, tbl); got != sum {
					t.Errorf("checksum %+v, before %+v", got, sum)
				}
				live := liveFiles(t, tbl)
				if n := len(live.Deletes); n != 0 {
					t.Errorf("%d delete files left; every file they applied to was rewritten", n)
				}
				for _, fe := range live.Data {
					if int(fe.Entry.DataFile.SpecID) != cur {
						t.Errorf("%s is still in spec %d", fe.Entry.DataFile.FilePath, fe.Entry.DataFile.SpecID)
					}
				}
				if len(checkDayBucket(t, tbl)) < 2 {
					t.Error("the rows were not fanned out to several partitions: the test proves too little")
				}
			})
		}
	}
}

// checkDayBucket reads every row of every live data file of tbl (no delete
// applied) and checks it against its file's partition (day(ts),
// bucket[4](id)), computed here; it returns the partitions seen.
func checkDayBucket(t *testing.T, tbl *catalog.Table) map[string]int {
	t.Helper()
	md := tbl.Metadata
	seen := map[string]int{}
	for _, fe := range liveFiles(t, tbl).Data {
		df := fe.Entry.DataFile
		if len(df.Partition) != 2 {
			t.Fatalf("%s: partition %v", df.FilePath, df.Partition)
		}
		seen[fmt.Sprint(df.Partition)]++
		err := scan.ReadFile(t.Context(), tbl.IO, md, fe, table.Applicable{}, scan.Options{}, func(rec arrow.RecordBatch) error {
			ids := rec.Column(0).(*array.Int64)
			ts := rec.Column(2).(*array.Timestamp)
			for i := range int(rec.NumRows()) {
				var day any
				if ts.IsValid(i) {
					us := int64(ts.Value(i))
					d := us / 86400e6
					if us%86400e6 < 0 {
						d--
					}
					day = int32(d)
				}
				want := []any{day, bucketLong(ids.Value(i), 4)}
				if !slices.Equal(want, df.Partition) {
					t.Errorf("%s: row id %d belongs in %v, the file is in %v", df.FilePath, ids.Value(i), want, df.Partition)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return seen
}

// TestCompactOutputSpecDryRun: `compact --output-spec current --dry-run`
// plans the move of the old spec's files and changes no byte; a spec the
// table does not have is refused before anything is read.
func TestCompactOutputSpecDryRun(t *testing.T) {
	bin := testenv.Icectl(t)
	s := schemaOf(fID, field(2, "cat", spec.StringType{}))
	b := newEvo(t, 3, s, spec.PartitionSpec{Fields: []spec.PartitionField{{SourceID: 2, FieldID: 1000, Name: "cat", Transform: spec.ParseTransform("identity")}}}, spec.SortOrder{})
	f := b.write(s, []any{"a"}, `[{"id":1,"cat":"a"},{"id":2,"cat":"a"}]`)
	b.del(f, 0)
	b.partitionBy(spec.PartitionField{SourceID: 1, FieldID: 1001, Name: "id_bucket", Transform: spec.ParseTransform("bucket[4]")})
	dir := b.e.Cat.Dir
	before := readTree(t, dir)
	base := []string{"compact", "ns.t", "--catalog-uri", b.e.Cat.URI, "--catalog-name", "test"}
	out, err := exec.Command(bin, append(base, "--output-spec", "current", "--dry-run", "--output", "json")...).Output()
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	var doc struct {
		Groups  []json.RawMessage `json:"groups"`
		Options plan.Resolved     `json:"options"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	if len(doc.Groups) != 1 || doc.Options.OutputSpecID == nil || *doc.Options.OutputSpecID != 1 {
		t.Errorf("dry run planned %d groups, output spec %v; want 1 group into spec 1", len(doc.Groups), doc.Options.OutputSpecID)
	}
	cmd := exec.Command(bin, append(base, "--output-spec-id", "7")...)
	msg, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "output spec 7 is not a partition spec of the table") {
		t.Errorf("--output-spec-id 7: %v\n%s", err, msg)
	}
	if after := readTree(t, dir); !maps.Equal(before, after) {
		t.Error("the dry run or the refused run changed the catalog or warehouse")
	}
}

// readTree is every file under dir with its bytes.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		out[p] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
