package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/expire"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/iceberg/table/tabletest"
	"github.com/icectl/icectl/internal/testing/testenv"
	"github.com/icectl/icectl/orphan"
	"github.com/icectl/icectl/refs"
)

// Expire, orphan removal, tags and rollback on every backend where the
// table's files live somewhere else than local disk, checked against
// iceberg-go: every snapshot kept reads as it did, no file a kept
// snapshot references is gone, planted orphans go and nothing else.

func TestMaintenanceSQLite(t *testing.T) {
	t.Parallel()
	maintenance(t, sqliteBackend)
}

func TestMaintenanceSQLiteS3(t *testing.T) {
	t.Parallel()
	maintenance(t, sqliteS3Backend)
}

func TestMaintenanceREST(t *testing.T) {
	t.Parallel()
	maintenance(t, restBackend)
}

// sqliteS3Backend is a SQLite catalog with its warehouse on the S3 server
// (versitygw), under a prefix no other test uses.
func sqliteS3Backend(t *testing.T) backend {
	endpoint := testenv.Need(t, testenv.S3Endpoint, "S3 server (versitygw)")
	key := testenv.Need(t, testenv.S3AccessKey, "S3 access key")
	secret := testenv.Need(t, testenv.S3SecretKey, "S3 secret key")
	bucket := testenv.Need(t, testenv.S3Bucket, "S3 bucket")
	uri := "sqlite:///" + filepath.Join(t.TempDir(), "catalog.db")
	wh := "s3://" + bucket + "/" + uniqueName(t, "expire-e2e-")
	props := map[string]string{
		fileio.S3Endpoint:        endpoint,
		fileio.S3AccessKeyID:     key,
		fileio.S3SecretAccessKey: secret,
		fileio.S3PathStyleAccess: "true",
		fileio.ClientRegion:      "us-east-1",
	}
	args := []string{"--catalog-uri", uri, "--catalog-name", "e2e", "--warehouse", wh, "--prop", "s3.region=us-east-1"}
	for k, v := range props {
		args = append(args, "--prop", k+"="+v)
	}
	return backend{cfg: catalog.Config{Name: "e2e", URI: uri, Warehouse: wh, Props: props}, goArgs: args, ns: "e2e", scheme: "s3://"}
}

// scanSnapshot is iceberg-go's scan of one snapshot of ns.name.
func scanSnapshot(t *testing.T, b backend, name string, id int64) goScan {
	t.Helper()
	args := append([]string{"scan", "--table", b.ns + "." + name, "--snapshot", fmt.Sprint(id)}, b.goArgs...)
	return icebergRead(t, args...)
}

// checkReachableExist fails for every file a snapshot of tbl reaches that
// its FileIO cannot open.
func checkReachableExist(t *testing.T, tbl *catalog.Table) {
	t.Helper()
	missing, err := tabletest.MissingReachable(context.Background(), tbl.IO, tbl.Metadata)
	if err != nil {
		t.Fatalf("%s: %v", tbl.Ident, err)
	}
	for _, p := range missing {
		t.Errorf("referenced file %s cannot be opened", p)
	}
}

func maintenance(t *testing.T, mk func(*testing.T) backend) {
	readerBin(t)
	b := mk(t)
	cat := b.open(t)
	ctx := context.Background()
	const name = "expire_e2e"
	w := newWriter(t, b, cat, name, 3)

	// Six snapshots: appends, a DV, an overwrite that replaces a file;
	// a tag on the second.
	d1 := w.data(t, mkRows("eu", span(0, 10)...))
	w.commit(t, []manifest.DataFile{d1})
	d2 := w.data(t, mkRows("us", span(10, 20)...))
	w.commit(t, []manifest.DataFile{d2})
	tagged := *w.tbl.Metadata.CurrentSnapshotID
	w.commit(t, nil, w.dv(t, d1, 1, 4))
	d3 := w.data(t, mkRows("eu", span(20, 30)...))
	w.commit(t, []manifest.DataFile{d3})
	d4 := w.data(t, mkRows("us", span(10, 15)...))
	tbl, _, err := table.CommitChange(ctx, cat, w.tbl, table.Change{Operation: spec.OperationOverwrite,
		AddData: []manifest.DataFile{d4}, Remove: []table.FileKey{table.PathKey(d2.FilePath)}}, w.opts)
	if err != nil {
		t.Fatalf("overwrite: %v", err)
	}
	w.tbl = tbl
	d5 := w.data(t, mkRows("eu", span(30, 35)...))
	w.commit(t, []manifest.DataFile{d5})
	if w.tbl, err = refs.Commit(ctx, cat, w.tbl, refs.Create(spec.RefTypeTag, "month-end", &tagged, refs.Retention{}), w.opts); err != nil {
		t.Fatal(err)
	}

	before := map[int64]goScan{}
	for _, s := range w.tbl.Metadata.Snapshots {
		before[s.SnapshotID] = scanSnapshot(t, b, name, s.SnapshotID)
	}

	// Expire everything but main's head and the tag; the sets spill.
	last := w.tbl.Metadata.Snapshots[len(w.tbl.Metadata.Snapshots)-1].TimestampMS
	ot := time.UnixMilli(last)
	noWait := commit.DefaultOptions()
	noWait.Sleep = func(context.Context, time.Duration) error { return nil }
	rep, err := expire.Run(ctx, cat, w.tbl, expire.Options{Policy: expire.Policy{Now: ot.Add(time.Hour), OlderThan: &ot},
		Commit: noWait, SpillDir: t.TempDir(), SpillBudget: 1, BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Committed || len(rep.Plan.Remove) != 4 || rep.Deletion.Deleted == 0 {
		t.Fatalf("expire: committed %v, %d removed, %d deleted", rep.Committed, len(rep.Plan.Remove), rep.Deletion.Deleted)
	}
	if len(rep.Deletion.Refused)+len(rep.Deletion.Failed) > 0 {
		t.Errorf("deletion: %+v", rep.Deletion)
	}
	got, err := cat.LoadTable(ctx, w.tbl.Ident)
	if err != nil {
		t.Fatal(err)
	}
	var kept []int64
	for _, s := range got.Metadata.Snapshots {
		kept = append(kept, s.SnapshotID)
	}
	head := *got.Metadata.CurrentSnapshotID
	if slices.Sort(kept); !slices.Equal(kept, sortedIDs(head, tagged)) {
		t.Fatalf("kept %v, want main's head %d and the tag's %d", kept, head, tagged)
	}
	for _, id := range kept {
		if g := scanSnapshot(t, b, name, id); g.Checksum != before[id].Checksum || g.RowCount != before[id].RowCount {
			t.Errorf("snapshot %d reads %d rows (%s) after expire, %d (%s) before", id, g.RowCount, g.Checksum, before[id].RowCount, before[id].Checksum)
		}
	}
	checkReachableExist(t, got)
	// d2 is the tag's, d1's DV only expired snapshots': gone and kept
	// accordingly.
	if _, err := got.IO.Open(ctx, d2.FilePath); err != nil {
		t.Errorf("the tag's data file: %v", err)
	}

	// Orphans: two planted files go, nothing else.
	loc := strings.TrimRight(got.Metadata.Location, "/")
	// Table buckets (weed's, S3 Tables) accept only table files' names.
	planted := []string{loc + "/data/orphan-1.parquet", loc + "/data/x/orphan-2.avro"}
	for _, p := range planted {
		if err := fileio.WriteFile(ctx, got.IO, p, []byte("orphan "+p)); err != nil {
			t.Fatal(err)
		}
	}
	load := func(ctx context.Context) (*catalog.Table, error) { return cat.LoadTable(ctx, w.tbl.Ident) }
	later := func() time.Time { return time.Now().Add(96 * time.Hour) }
	var s orphanSink
	if _, err := orphan.Run(ctx, load, orphan.Options{Now: later, MemoryBudget: 1 << 10}, &s); err != nil {
		t.Fatal(err)
	}
	slices.Sort(s.deleted)
	if !slices.Equal(s.deleted, planted) {
		t.Errorf("orphan deleted %v, want %v", s.deleted, planted)
	}
	checkReachableExist(t, got)

	// Rollback to the tag (forced: the snapshots between it and main's
	// head are gone, so its ancestry cannot be shown), drop the tag, then
	// expire again: the tagged snapshot is main's head and reads as before.
	if got, err = refs.Commit(ctx, cat, got, refs.Rollback(tagged, true), noWait); err != nil {
		t.Fatal(err)
	}
	if got, err = refs.Commit(ctx, cat, got, refs.Drop(spec.RefTypeTag, "month-end"), noWait); err != nil {
		t.Fatal(err)
	}
	ot2 := time.Now().Add(time.Minute)
	if rep, err = expire.Run(ctx, cat, got, expire.Options{Policy: expire.Policy{OlderThan: &ot2}, Commit: noWait}); err != nil {
		t.Fatal(err)
	}
	if got, err = cat.LoadTable(ctx, w.tbl.Ident); err != nil {
		t.Fatal(err)
	}
	if n := len(got.Metadata.Snapshots); n != 1 || *got.Metadata.CurrentSnapshotID != tagged {
		t.Fatalf("after rollback and expire: %d snapshots, current %d, want only %d", n, *got.Metadata.CurrentSnapshotID, tagged)
	}
	if g := goScanTable(t, b, name, false); g.Checksum != before[tagged].Checksum {
		t.Errorf("rolled-back table reads %s, the tag read %s", g.Checksum, before[tagged].Checksum)
	}
	checkReachableExist(t, got)
	for _, p := range []string{d3.FilePath, d4.FilePath, d5.FilePath} {
		if _, err := got.IO.Open(ctx, p); err == nil {
			t.Errorf("%s, reachable only from expired snapshots, survived", p)
		}
	}
}

func sortedIDs(ids ...int64) []int64 { slices.Sort(ids); return ids }

type orphanSink struct{ deleted []string }

func (s *orphanSink) Begin(orphan.Summary) error           { return nil }
func (s *orphanSink) Conflict(c orphan.ConflictFile) error { return fmt.Errorf("conflict %+v", c) }
func (s *orphanSink) Orphan(r orphan.Result) error {
	if r.Status == orphan.StatusDeleted {
		s.deleted = append(s.deleted, r.Path)
	}
	return nil
}
