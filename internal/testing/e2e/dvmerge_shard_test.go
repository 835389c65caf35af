package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/icectl/icectl/upgrade"
)

func TestDVMergeShardedSQLite(t *testing.T) {
	t.Parallel()
	dvMergeSharded(t, sqliteBackend)
}

func TestDVMergeShardedPostgres(t *testing.T) {
	t.Parallel()
	dvMergeSharded(t, postgresBackend)
}

func TestDVMergeShardedREST(t *testing.T) {
	t.Parallel()
	dvMergeSharded(t, restBackend)
}

// dvMergeSharded merges an upgraded v2 table's deletes as a sharded run
// (a plan, two workers staging on the backend's storage, one committer):
// iceberg-go reads the same rows before and after, every data file has
// at most one DV and no position-delete file is left; a worker run twice
// is harmless and a second commit changes nothing.
func dvMergeSharded(t *testing.T, mk func(*testing.T) backend) {
	readerBin(t)
	b := mk(t)
	cat := b.open(t)
	ctx := context.Background()
	const name = "dvshard"
	x := buildV2Table(t, b, cat, name)
	w := x.w
	w.commit(t, nil, w.positionDeletes(t, []any{"us"}, map[string][]int64{x.us1.FilePath: {0, 2}}))
	if _, err := upgrade.Run(ctx, cat, w.tbl, upgrade.Options{To: 3, AssignRowIDs: true, Commit: noWait()}); err != nil {
		t.Fatal(err)
	}
	before := goScanTable(t, b, name, false)
	ident := b.ns + "." + name

	planPath := filepath.Join(t.TempDir(), "plan.json")
	stage := filepath.Join(t.TempDir(), "stage")
	if b.scheme == "s3://" {
		stage = strings.TrimSuffix(b.cfg.Warehouse, "/") + "/" + b.ns + "-stage"
	}
	run := func(args ...string) string {
		t.Helper()
		out, stderr, code := runICECTLOn(t, b, append([]string{"dv", "merge", ident}, args...)...)
		if code != 0 {
			t.Fatalf("dv merge %v: exit %d: %s", args, code, stderr)
		}
		return out
	}
	run("--dry-run", "--plan-out", planPath)
	head := loadIdent(t, cat, b.ns, name).MetadataLocation
	for _, shard := range []string{"0/2", "1/2", "1/2"} {
		run("--plan", planPath, "--shard", shard, "--stage", stage)
	}
	if loc := loadIdent(t, cat, b.ns, name).MetadataLocation; loc != head {
		t.Fatalf("a worker committed: %s", loc)
	}
	run("--commit", stage)

	after := goScanTable(t, b, name, false)
	if after.RowCount != before.RowCount || after.Checksum != before.Checksum {
		t.Errorf("iceberg-go reads %d rows %s after the sharded merge, %d rows %s before", after.RowCount, after.Checksum, before.RowCount, before.Checksum)
	}
	rows, sum := icectlScan(t, b, cat, name, false)
	agree(t, after, rows, sum)
	merged := loadIdent(t, cat, b.ns, name)
	checkOneDVPerFile(t, merged)
	if merged.MetadataLocation == head {
		t.Fatal("the commit committed nothing")
	}
	// A committer run again (a retried job) has nothing to commit and
	// takes no claim: not one metadata version.
	run("--commit", stage)
	if loc := loadIdent(t, cat, b.ns, name).MetadataLocation; loc != merged.MetadataLocation {
		t.Errorf("a second commit of the same stage changed the table: %s", loc)
	}
}
