package rewritemanifests

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/datafile/datafiletest"
	"github.com/icectl/icectl/iceberg/manifest"
	icescan "github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/iceberg/table/tabletest"
	"github.com/icectl/icectl/internal/testing/testenv"
	"github.com/icectl/icectl/plan/where"
)

// concurrencyRuns is the number of races and of kills.
const concurrencyRuns = 20

// checksum is icectl's scan checksum of the current snapshot, lineage
// included (v3): the cheap check made after every race and kill; the
// independent reader confirms at the end.
func (e *env) checksum(t *testing.T) icescan.ChecksumResult {
	t.Helper()
	tbl := e.Load(t)
	sum, err := icescan.Checksum(e.Ctx, tbl.IO, tbl.Metadata, tbl.Metadata.CurrentSnapshot(), icescan.Options{WithLineage: true})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// checkReachable fails when a file the table's metadata references is
// missing (a kill must never leave a dangling reference).
func (e *env) checkReachable(t *testing.T) {
	t.Helper()
	tbl := e.Load(t)
	missing, err := tabletest.MissingReachable(e.Ctx, tbl.IO, tbl.Metadata)
	if err != nil || len(missing) > 0 {
		t.Fatalf("referenced files missing: %v (%v)", missing, err)
	}
}

// A rewrite and an append run at the same time, 20 times on one table:
// whichever commits first, the other is rebuilt on it, so every append's
// row is there, no earlier row changes or loses its lineage, and the
// manifests end up rewritten.
func TestRewriteManifestsConcurrentAppends(t *testing.T) {
	testenv.Need(t, testenv.IcebergGoReader, "iceberg-go reader (scripts/build-iceberg-go-reader)")
	e, tbl := newTable(t, 3)
	next := int64(0)
	rewrites := 0
	for i := range concurrencyRuns {
		for range 3 {
			tbl = e.appendRows(t, e.Cat.Catalog, tbl, next)
			next++
		}
		before := e.checksum(t)
		appended := next
		next++
		df, err := datafiletest.WriteIDNames(e.Ctx, tbl.IO, fmt.Sprintf("%s/race%d.parquet", tbl.Metadata.DataDir(), i), appended)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var res *Result
		var rerr, aerr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			res, rerr = Run(e.Ctx, e.Cat.Catalog, tbl, Options{Commit: opts()})
		}()
		go func() {
			defer wg.Done()
			_, _, aerr = table.CommitChange(e.Ctx, e.Cat.Catalog, tbl, table.Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{df}}, opts())
		}()
		wg.Wait()
		if err := errors.Join(rerr, aerr); err != nil {
			t.Fatalf("race %d: %v", i, err)
		}
		if res.Committed {
			rewrites++
		}
		after := e.checksum(t)
		if after.RowCount != before.RowCount+1 {
			t.Fatalf("race %d: %d rows after, %d before and one appended", i, after.RowCount, before.RowCount)
		}
		tbl = e.Load(t)
	}
	if rewrites == 0 {
		t.Fatal("no rewrite committed in any race")
	}
	rows := scan(t, e)
	if int64(len(rows)) != next {
		t.Fatalf("iceberg-go reads %d rows, %d were appended", len(rows), next)
	}
	seen := map[int64]bool{}
	for i, r := range rows {
		if r.ID != int64(i) || r.RowID == nil || seen[*r.RowID] || r.LastSeqNo == nil {
			t.Fatalf("row %d: %+v (missing, without lineage or a repeated _row_id)", i, r)
		}
		seen[*r.RowID] = true
	}
	// A last rewrite brings the count down, and changes no row.
	if _, err := Run(e.Ctx, e.Cat.Catalog, e.Load(t), Options{Commit: opts()}); err != nil {
		t.Fatal(err)
	}
	if again := scan(t, e); !reflect.DeepEqual(rows, again) {
		t.Error("the final rewrite changed rows or lineage")
	}
	t.Logf("%d races, %d rewrites committed", concurrencyRuns, rewrites)
}

func (e *env) rewriteCmd(bin string) *exec.Cmd {
	// A killed run leaves its claim on the table until its lease ends: a
	// short lease, and --wait, let the next run take it over.
	cmd := exec.Command(bin, "rewrite-manifests", "ns.t", "--catalog-uri", "sqlite:///"+filepath.Join(e.Cat.Dir, "catalog.db"), "--catalog-name", "test", "--wait", "1m")
	cmd.Env = append(os.Environ(), "ICECTL_CLAIM_LEASE=2s")
	return cmd
}

// `icectl rewrite-manifests` SIGKILLed at a random moment, 20 times: the
// table reads the same rows and lineage and references no missing file,
// and a re-run finishes the rewrite.
func TestRewriteManifestsKill(t *testing.T) {
	testenv.Need(t, testenv.IcebergGoReader, "iceberg-go reader (scripts/build-iceberg-go-reader)")
	bin := testenv.Icectl(t)
	e, tbl := newTable(t, 3)
	next := int64(0)
	grow := func() {
		for range 8 {
			tbl = e.appendRows(t, e.Cat.Catalog, tbl, next)
			next++
		}
	}
	// Calibrate: how long a whole run takes, so kills spread over it.
	grow()
	full := testenv.Calibrate(t, e.rewriteCmd(bin))
	rng := rand.New(rand.NewPCG(7, 0xdead))
	outcomes := map[bool]int{}
	for i := range concurrencyRuns {
		tbl = e.Load(t)
		grow()
		before := e.checksum(t)
		delay := time.Duration(rng.Int64N(int64(full) * 5 / 4)) // some runs finish first
		finished := testenv.KillAfter(t, e.rewriteCmd(bin), delay)
		outcomes[finished]++
		if got := e.checksum(t); got != before {
			t.Fatalf("kill %d after %s: icectl reads %+v, before %+v", i, delay, got, before)
		}
		e.checkReachable(t)
		if out, err := e.rewriteCmd(bin).CombinedOutput(); err != nil {
			t.Fatalf("kill %d: the re-run failed: %v\n%s", i, err, out)
		}
		if got := e.checksum(t); got != before {
			t.Fatalf("kill %d: after the re-run icectl reads %+v, before %+v", i, got, before)
		}
		if n := dataManifests(t, e, e.Load(t)); n != 1 {
			t.Fatalf("kill %d: %d data manifests after the re-run, want 1", i, n)
		}
	}
	t.Logf("a whole run takes %s; of %d kills, finished first: %d, killed: %d", full, concurrencyRuns, outcomes[true], outcomes[false])
	rows := scan(t, e)
	if int64(len(rows)) != next {
		t.Fatalf("iceberg-go reads %d rows, %d were appended", len(rows), next)
	}
	for i, r := range rows {
		if r.ID != int64(i) || r.RowID == nil || r.LastSeqNo == nil {
			t.Fatalf("row %d: %+v", i, r)
		}
	}
}

// --where on a table with two partition specs (identity(name), then
// identity(name) and identity(id)) selects the manifests of both specs
// that hold a matching partition, rewrites them per spec, and leaves the
// others alone.
func TestRewriteManifestsWhereTwoSpecs(t *testing.T) {
	e, tbl := newTable(t, 2)
	byName := spec.PartitionField{SourceID: 2, FieldID: 1000, Name: "name", Transform: spec.Transform{Kind: spec.TransformIdentity}}
	byID := spec.PartitionField{SourceID: 1, FieldID: 1001, Name: "id", Transform: spec.Transform{Kind: spec.TransformIdentity}}
	commitSpec := func(fields ...spec.PartitionField) int32 {
		t.Helper()
		var err error
		tbl, err = e.Cat.Catalog.CommitTable(e.Ctx, tbl, nil, []spec.Update{
			spec.AddSpec{Spec: spec.PartitionSpec{Fields: fields}}, spec.SetDefaultSpec{SpecID: spec.LastAdded}})
		if err != nil {
			t.Fatal(err)
		}
		return int32(tbl.Metadata.DefaultSpecID)
	}
	add := func(specID int32, name string, id int64) {
		t.Helper()
		e.n++
		df := e.WriteIDs(t, tbl, fmt.Sprintf("f%d", e.n), []any{name}, id)
		df.SpecID = specID
		// The fixture's rows are named "n<id>", not the partition's name:
		// without their name bounds, --where judges these files by the
		// partition alone, as it would a file with no column stats.
		delete(df.LowerBounds, 2)
		delete(df.UpperBounds, 2)
		if specID == 2 {
			df.Partition = []any{name, id}
		}
		var err error
		if tbl, _, err = table.CommitChange(e.Ctx, e.Cat.Catalog, tbl, table.Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{df}}, opts()); err != nil {
			t.Fatal(err)
		}
	}
	s1 := commitSpec(byName)
	for i := range int64(3) {
		add(s1, "a", i)
		add(s1, "b", 10+i)
	}
	s2 := commitSpec(byName, byID)
	if s1 == s2 || s2 != 2 {
		t.Fatalf("spec ids %d, %d", s1, s2)
	}
	for i := range int64(3) {
		add(s2, "a", 20+i)
		add(s2, "b", 30+i)
	}
	before := e.checksum(t)
	w, err := where.Compile("name = 'a'", tbl.Metadata.CurrentSchema())
	if err != nil {
		t.Fatal(err)
	}
	p, err := PlanRewrite(e.Ctx, tbl, Options{Where: w})
	if err != nil {
		t.Fatal(err)
	}
	if p.DataManifests != 12 || p.Selected != 6 || p.Planned != 2 {
		t.Fatalf("plan %+v: want the 6 manifests of name=a (3 per spec) into one per spec", p)
	}
	res, err := Run(e.Ctx, e.Cat.Catalog, tbl, Options{Where: w, Commit: opts()})
	if err != nil || !res.Committed {
		t.Fatalf("run %+v, %v", res, err)
	}
	tbl = e.Load(t)
	if n := dataManifests(t, e, tbl); n != 8 {
		t.Errorf("%d data manifests after, want 8 (6 of name=b kept, 2 written)", n)
	}
	if got := e.checksum(t); got != before {
		t.Errorf("rows changed: %+v, before %+v", got, before)
	}
	mfs, err := table.ManifestFiles(e.Ctx, tbl.IO, tbl.Metadata.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	perSpec := map[int32]int{}
	for _, mf := range mfs {
		if mf.AddedSnapshotID == *tbl.Metadata.CurrentSnapshotID {
			perSpec[mf.SpecID]++
		}
	}
	if perSpec[s1] != 1 || perSpec[s2] != 1 {
		t.Errorf("manifests written per spec %v, want one for each of %d and %d", perSpec, s1, s2)
	}
	if s := res.Snapshot.Summary; s["manifests-created"] != "2" || s["manifests-replaced"] != "6" || s["manifests-kept"] != "6" || s["entries-processed"] != "6" {
		t.Errorf("summary %v: want 2 created, 6 replaced, 6 kept, 6 entries processed", s)
	}
}

// The reachability check the kill tests rely on finds a removed data file
// and a removed manifest, and nothing on an intact table.
func TestMissingReachableFindsRemovedFiles(t *testing.T) {
	e, tbl := newTable(t, 3)
	tbl = e.appendRows(t, e.Cat.Catalog, tbl, 1, 2)
	tbl = e.appendRows(t, e.Cat.Catalog, tbl, 3)
	if missing, err := tabletest.MissingReachable(e.Ctx, tbl.IO, tbl.Metadata); err != nil || len(missing) != 0 {
		t.Fatalf("intact table: missing %v, err %v", missing, err)
	}
	live, err := table.LiveFiles(e.Ctx, tbl.IO, tbl.Metadata.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	mfs, err := table.ManifestFiles(e.Ctx, tbl.IO, tbl.Metadata.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	// A deleted data file is named, and only it.
	dataPath := live.Data[0].Entry.DataFile.FilePath
	if err := tbl.IO.Remove(e.Ctx, dataPath); err != nil {
		t.Fatal(err)
	}
	missing, err := tabletest.MissingReachable(e.Ctx, tbl.IO, tbl.Metadata)
	if err != nil || !slices.Equal(missing, []string{dataPath}) {
		t.Fatalf("data file removed: missing %v, err %v; want [%s]", missing, err, dataPath)
	}
	// A deleted manifest cannot be walked: the check fails with an error
	// or names it, never passes.
	mfPath := mfs[len(mfs)-1].Path
	if err := tbl.IO.Remove(e.Ctx, mfPath); err != nil {
		t.Fatal(err)
	}
	missing, err = tabletest.MissingReachable(e.Ctx, tbl.IO, tbl.Metadata)
	if err == nil && !slices.Contains(missing, mfPath) {
		t.Fatalf("manifest removed, but the check passed: missing %v", missing)
	}
}
