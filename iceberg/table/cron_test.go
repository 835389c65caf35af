package table

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// cronRuns is how many append-then-compact rounds TestCronCompactionsBoundManifests
// makes: the brief's "100 cron-style compactions in a row".
const cronRuns = 100

// A cron job compacts what was appended since its last run, 100 times in
// a row, at the default commit.manifest.min-count-to-merge (100): every
// append and every compaction adds a manifest, yet the data manifest count
// never passes the merge threshold by more than the commit's own manifest,
// and the independent reader reads every row once.
func TestCronCompactionsBoundManifests(t *testing.T) {
	testenv.Need(t, testenv.IcebergGoReader, "iceberg-go reader (scripts/build-iceberg-go-reader)")
	e, tbl := newEnv(t, 2)
	if c, err := MergeConfigOf(tbl.Metadata); err != nil || c.MinCount != DefaultManifestMinMergeCount || !c.Enabled {
		t.Fatalf("merge config %+v, %v: the test is about the defaults", c, err)
	}
	const bound = DefaultManifestMinMergeCount + 1
	most, merges, prev := 0, 0, 0
	var snap *spec.Snapshot
	// commit commits ch and checks the manifest count and the summary's
	// manifest keys; unmerged, the commit creates created manifests and
	// replaces replaced.
	commit := func(i int64, ch Change, created, replaced int) {
		t.Helper()
		tbl, snap = e.commit(t, tbl, ch)
		n, deletes := manifestCount(t, e, tbl, snap)
		most = max(most, n)
		if n > bound {
			t.Fatalf("round %d: %d data manifests, want at most %d", i, n, bound)
		}
		c, k, r := atoiSummary(t, snap, "manifests-created"), atoiSummary(t, snap, "manifests-kept"), atoiSummary(t, snap, "manifests-replaced")
		if c+k != n+deletes {
			t.Errorf("round %d %s: manifests-created %d + manifests-kept %d, but the list has %d", i, ch.Operation, c, k, n+deletes)
		}
		switch {
		case n < prev:
			merges++
			if r < prev-k || c != 1 {
				t.Errorf("round %d %s merged %d manifests into %d: created %d, kept %d, replaced %d", i, ch.Operation, prev, n, c, k, r)
			}
		case c != created || r != replaced:
			t.Errorf("round %d %s: created %d, replaced %d; want %d, %d", i, ch.Operation, c, r, created, replaced)
		}
		prev = n
	}
	for i := range int64(cronRuns) {
		// What the compaction replaces is never read again: manifest
		// entries are enough, which keeps the test quick.
		a, b := unwritten(tbl, fmt.Sprintf("a%d", i), 1), unwritten(tbl, fmt.Sprintf("b%d", i), 2)
		commit(i, appendFiles(a, b), 1, 0)
		c := e.writeData(t, tbl, fmt.Sprintf("c%d", i), 3*i, 3*i+1, 3*i+2)
		// The compaction adds c's manifest and rewrites the one listing a
		// and b (their entries DELETED), which the next commit drops.
		commit(i, Change{Operation: spec.OperationReplace, AddData: []manifest.DataFile{c},
			Remove: []FileKey{KeyOf(&a), KeyOf(&b)}}, 2, 1)
	}
	if merges == 0 {
		t.Fatalf("%d rounds and no merge: the count peaked at %d", cronRuns, most)
	}
	t.Logf("%d rounds: at most %d data manifests, %d merges", cronRuns, most, merges)
	fs, err := LiveFiles(e.ctx, tbl.IO, snap)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs.Data) != cronRuns {
		t.Errorf("%d live data files, want %d (one per compaction)", len(fs.Data), cronRuns)
	}
	ids := make([]int64, 3*cronRuns)
	for i := range ids {
		ids[i] = int64(i)
	}
	checkIDs(t, "after the compactions", scanWithIcebergGo(t, e, false), ids...)
	checkTotals(t, e.ctx, tbl, snap)
}

func atoiSummary(t *testing.T, snap *spec.Snapshot, key string) int {
	t.Helper()
	n, err := strconv.Atoi(snap.Summary[key])
	if err != nil {
		t.Fatalf("snapshot %d summary %s = %q", snap.SnapshotID, key, snap.Summary[key])
	}
	return n
}

// unwritten describes a data file of rows rows at name that is never
// written: for commits whose files no reader opens.
func unwritten(tbl *catalog.Table, name string, rows int64) manifest.DataFile {
	return manifest.DataFile{Content: manifest.ContentData, FilePath: DataLocation(tbl.Metadata) + "/" + name + ".parquet",
		FileFormat: "PARQUET", Partition: []any{}, RecordCount: rows, FileSizeInBytes: 100 * rows}
}
