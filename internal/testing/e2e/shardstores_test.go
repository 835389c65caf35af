package e2e

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/faultproxy"
	"github.com/icectl/icectl/internal/testing/killrun"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// The Kubernetes sharded compaction (a plan, workers staging, one
// committer) with its plan and stage on Google Cloud Storage, on Azure
// (written wasbs:// and abfss://, as Hadoop-era configurations have them)
// and on S3, the table on each store: the stage is a URI, reached with the
// table's FileIO when on the table's store, else with one made from the
// catalog's properties. iceberg-go reads the same rows before and after;
// a worker killed mid-shard (its next result's upload held until the kill)
// leaves the table as it was and its rerun finishes the shard; a group
// another commit overtook is dropped, its staged result and outputs
// removed from the stage's and the table's store.
func TestShardedCompactStores(t *testing.T) {
	t.Parallel()
	readerBin(t)
	for _, c := range []struct {
		name  string
		table func(*testing.T) backend
		stage string // the stage's scheme
		kill  bool   // kill a worker mid-shard (its stage behind a proxy)
	}{
		{"gcs-stage-wasbs", sqliteGCSBackend, "wasbs", true},
		{"s3-stage-gcs", sqliteS3Backend, "gs", true},
		{"azure-stage-s3", sqliteAzureBackend, "s3", false},
	} {
		t.Run(c.name, func(t *testing.T) { shardedOnStore(t, c.table(t), c.stage, c.kill) })
	}
}

// stageOn returns a fresh location on the store of scheme and the
// properties that reach it.
func stageOn(t *testing.T, scheme string) (string, map[string]string) {
	switch scheme {
	case "gs":
		props, base := testenv.GCS(t)
		return base, props
	case "abfss", "wasbs":
		pyProps, base := testenv.Azure(t)
		account := testenv.Need(t, testenv.AzureAccount, "Azure account")
		props := map[string]string{fileio.ADLSConnectionStringPrefix + account: pyProps[fileio.ADLSConnectionString]}
		// abfs://CTR@ACCT.dfs.core.windows.net/P, the same blobs as
		// wasbs://CTR@ACCT.blob.core.windows.net/P.
		rest := strings.TrimPrefix(base, "abfs://")
		if scheme == "wasbs" {
			rest = strings.Replace(rest, ".dfs.", ".blob.", 1)
		}
		return scheme + "://" + rest, props
	case "s3":
		s3 := sqliteS3Backend(t)
		return strings.TrimSuffix(s3.cfg.Warehouse, "/") + "-stage", s3.cfg.Props
	}
	t.Fatalf("no store %q", scheme)
	return "", nil
}

// shardWorkerView is what the test reads of a worker's JSON report.
type shardWorkerView struct {
	PlanID        string `json:"plan_id"`
	Groups        []any  `json:"groups"`
	Staged        int    `json:"staged"`
	AlreadyStaged int    `json:"already_staged"`
	Failed        int    `json:"failed"`
}

func shardedOnStore(t *testing.T, b backend, stageScheme string, kill bool) {
	ctx := context.Background()
	const name = "sharded"
	ident := b.ns + "." + name
	writeStoreFixture(t, b, name, 40)
	base, props := stageOn(t, stageScheme)
	b.cfg.Props = maps.Clone(b.cfg.Props)
	maps.Copy(b.cfg.Props, props)
	stageIO, err := fileio.Load(ctx, base, b.cfg.Props)
	if err != nil {
		t.Fatal(err)
	}
	planPath, stage := base+"/plan.json", base+"/run"
	cat := b.open(t)
	before := goScanTable(t, b, name, false)
	run := func(wantCode int, args ...string) string {
		t.Helper()
		start := time.Now()
		out, stderr, code := runICECTLOn(t, b, append([]string{"compact", ident}, args...)...)
		t.Logf("compact %s: exit %d in %v", strings.Join(args, " "), code, time.Since(start).Round(time.Millisecond))
		if code != wantCode {
			t.Fatalf("compact %s: exit %d, want %d: %s%s", strings.Join(args, " "), code, wantCode, out, stderr)
		}
		return out
	}
	worker := func(shard string) shardWorkerView {
		t.Helper()
		var v shardWorkerView
		if err := json.Unmarshal([]byte(run(0, "--plan", planPath, "--shard", shard, "--stage", stage, "--output", "json")), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	staged := func() int {
		t.Helper()
		n := 0
		if err := stageIO.(fileio.Lister).List(ctx, stage+"/groups/", func(fileio.FileInfo) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}

	run(0, "--rewrite-all", "--dry-run", "--plan-out", planPath)
	head := loadIdent(t, cat, b.ns, name).MetadataLocation
	if kill {
		killWorker(t, b, props, ident, planPath, stage)
		if n := staged(); n != 1 {
			t.Fatalf("the killed worker staged %d results, want 1 (the rule lets one through)", n)
		}
		if loc := loadIdent(t, cat, b.ns, name).MetadataLocation; loc != head {
			t.Fatalf("a killed worker committed: %s", loc)
		}
		if got := goScanTable(t, b, name, false); got.Checksum != before.Checksum || got.RowCount != before.RowCount {
			t.Fatalf("after a worker's kill iceberg-go reads %d rows (%s), before %d (%s)", got.RowCount, got.Checksum, before.RowCount, before.Checksum)
		}
	}
	w0 := worker("0/2")
	if kill && (w0.AlreadyStaged != 1 || w0.Staged == 0) {
		t.Errorf("the rerun of the killed worker: %+v, want 1 already staged and the rest staged", w0)
	}
	w1 := worker("1/2")
	if again := worker("1/2"); again.Staged != 0 || again.AlreadyStaged != len(again.Groups) {
		t.Errorf("worker 1 run twice rewrote again: %+v", again)
	}
	groups := len(w0.Groups) + len(w1.Groups)
	if n := staged(); n != groups || groups < 2 {
		t.Fatalf("%d results staged at %s, the workers' groups are %d", n, stage, groups)
	}
	if loc := loadIdent(t, cat, b.ns, name).MetadataLocation; loc != head {
		t.Fatalf("a worker committed: %s", loc)
	}

	// Another compaction overtakes the first day's group (the fixture's
	// rows are 7 hours apart from 2024-03-01): the committer drops it,
	// commits the others (exit 3, partial) and removes the dropped
	// group's result and outputs.
	run(0, "--rewrite-all", "--where", "ts < '2024-03-02'")
	run(3, "--commit", stage, "--max-commits", "1")
	if n := staged(); n != groups-1 {
		t.Errorf("%d results left in the stage after the commit, want %d (those of the committed groups)", n, groups-1)
	}
	after := goScanTable(t, b, name, false)
	if after.RowCount != before.RowCount || after.Checksum != before.Checksum {
		t.Errorf("iceberg-go reads %d rows %s after the sharded compaction, %d rows %s before", after.RowCount, after.Checksum, before.RowCount, before.Checksum)
	}
	tbl := loadIdent(t, cat, b.ns, name)
	checkShardFiles(t, tbl, w0.PlanID)
	// A committer run again (a retried Job) changes nothing.
	run(0, "--commit", stage)
	if again := loadIdent(t, cat, b.ns, name).Metadata; len(again.Snapshots) != len(tbl.Metadata.Snapshots) {
		t.Errorf("a second commit of the same stage committed again: %d snapshots, were %d", len(again.Snapshots), len(tbl.Metadata.Snapshots))
	}
}

// killWorker runs worker 0 of 2 as a process with the stage's store behind
// a proxy that lets its first staged result through, holds the next
// upload of a result (cutting it, and every later one) and has the
// process killed then.
func killWorker(t *testing.T, b backend, stageProps map[string]string, ident, planPath, stage string) {
	t.Helper()
	st := backend{cfg: catalog.Config{Props: stageProps}}
	proxy := faultproxy.New(t, storeEndpoint(t, st))
	via := b
	via.cfg.Props = maps.Clone(b.cfg.Props)
	maps.Copy(via.cfg.Props, throughEndpoint(st, proxy.URL).cfg.Props)
	results, held := 0, make(chan struct{})
	proxy.SetRule(func(r faultproxy.Request) faultproxy.Fault {
		if !r.Upload || !strings.Contains(objectName(r)+string(r.Head), "/run/groups/") {
			return faultproxy.Fault{}
		}
		if results++; results == 2 {
			close(held)
		}
		return faultproxy.Fault{Cut: results > 1}
	})
	cmd := exec.Command(testenv.Icectl(t), "compact", ident, "--plan", planPath, "--shard", "0/2", "--stage", stage, "--max-concurrent-groups", "1", "--catalog", via.cfg.Name)
	cmd.Env = os.Environ()
	for k, v := range catalogVars(via) {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	finished, out := killrun.Run(t, cmd, func() { <-held })
	if finished {
		t.Fatalf("the worker finished before its kill:\n%s", out)
	}
}

// catalogVars is the ICECTL_CATALOG__NAME__* variables that configure b's
// catalog, as runICECTLOn sets them.
func catalogVars(b backend) map[string]string {
	key := func(k string) string { return strings.ToUpper(strings.NewReplacer(".", "__", "-", "_").Replace(k)) }
	prefix := "ICECTL_CATALOG__" + key(b.cfg.Name) + "__"
	env := map[string]string{prefix + "URI": b.cfg.URI, prefix + "WAREHOUSE": b.cfg.Warehouse}
	for k, v := range b.cfg.Props {
		env[prefix+key(k)] = v
	}
	return env
}

// checkShardFiles fails as checkStored does, and for every file named as
// a sharded run's output (the plan id's prefix) that no snapshot reaches:
// a killed worker's, a dropped group's.
func checkShardFiles(t *testing.T, tbl *catalog.Table, planID string) {
	t.Helper()
	stored, live := checkStored(t, tbl)
	outputs := 0
	for p := range stored {
		if strings.HasPrefix(path.Base(p), planID+"-") {
			outputs++
			if !live[p] {
				t.Errorf("output %s of the sharded run is left behind, not in the table", p)
			}
		}
	}
	if outputs == 0 {
		t.Errorf("no output of plan %s in the table", planID)
	}
}

// checkStored fails for every file a snapshot of tbl reads (its manifest
// list, manifests, and their ADDED and EXISTING entries) that is not on
// the store whole: missing, or of another size than the metadata records.
// It lists the table's location once rather than opening each file, and
// returns the sizes listed and the files the snapshots reach.
func checkStored(t *testing.T, tbl *catalog.Table) (map[string]int64, map[string]bool) {
	t.Helper()
	ctx := context.Background()
	stored := map[string]int64{}
	if err := tbl.IO.(fileio.Lister).List(ctx, strings.TrimSuffix(tbl.Metadata.Location, "/")+"/", func(fi fileio.FileInfo) error {
		stored[fi.Path] = fi.Size
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	reached := map[string]bool{}
	ids := make([]int64, len(tbl.Metadata.Snapshots))
	for i, s := range tbl.Metadata.Snapshots {
		ids[i] = s.SnapshotID
	}
	if err := table.WalkReachable(ctx, tbl.IO, tbl.Metadata, ids, func(f table.ReachableFile) error {
		reached[f.Path] = true
		size, ok := stored[f.Path]
		switch {
		case !f.Live():
		case !ok:
			t.Errorf("referenced file %s is not on the store", f.Path)
		case f.Size > 0 && size != f.Size:
			t.Errorf("referenced file %s is %d bytes on the store, %d in the metadata", f.Path, size, f.Size)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return stored, reached
}
