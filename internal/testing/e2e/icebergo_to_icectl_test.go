package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/compact"
	"github.com/icectl/icectl/dvmerge"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/plan"
)

// A table iceberg-go writes (iceberg-read write-fixture: appends in a few
// commits, then merge-on-read deletes of every K-th row) opens in icectl
// through the same catalog and scans to the rows iceberg-go reads.

func TestIcebergGoToIcectlSQLite(t *testing.T) {
	t.Parallel()
	icebergGoToIcectl(t, sqliteBackend)
}

func TestIcebergGoToIcectlPostgres(t *testing.T) {
	t.Parallel()
	icebergGoToIcectl(t, postgresBackend)
}

func TestIcebergGoToIcectlREST(t *testing.T) {
	t.Parallel()
	icebergGoToIcectl(t, restBackend)
}

const (
	fixtureRows        = 60
	fixtureDeleteEvery = 7
)

func icebergGoToIcectl(t *testing.T, mk func(*testing.T) backend) {
	for _, c := range []struct {
		version     int
		partitioned bool
	}{{2, true}, {2, false}, {3, false}, {3, true}} {
		t.Run(fmt.Sprintf("v%d_partitioned_%v", c.version, c.partitioned), func(t *testing.T) {
			readerBin(t)
			b := mk(t)
			name := fmt.Sprintf("fixture_v%d", c.version)
			args := []string{"write-fixture", "--table", b.ns + "." + name,
				"--format-version", strconv.Itoa(c.version), "--rows", strconv.Itoa(fixtureRows),
				"--delete-every", strconv.Itoa(fixtureDeleteEvery)}
			if c.partitioned {
				args = append(args, "--partitioned")
			}
			fx := icebergRead(t, append(args, b.goArgs...)...)
			// ids 0, K, 2K, ... below fixtureRows are deleted.
			deleted := int64((fixtureRows-1)/fixtureDeleteEvery + 1)
			if fx.RowCount != fixtureRows-deleted {
				t.Fatalf("iceberg-go fixture reports %d rows, want %d written minus %d deleted", fx.RowCount, fixtureRows, deleted)
			}

			cat := b.open(t)
			tbl, err := cat.LoadTable(context.Background(), catalog.Ident{Namespace: []string{b.ns}, Name: name})
			if err != nil {
				t.Fatalf("icectl: load iceberg-go's table: %v", err)
			}
			if tbl.Metadata.FormatVersion != c.version {
				t.Errorf("icectl reads format version %d, want %d", tbl.Metadata.FormatVersion, c.version)
			}
			checkDeleteKinds(t, tbl, c.version)

			rows, sum := icectlScan(t, b, cat, name, false)
			agree(t, fx, rows, sum)
			if c.version >= 3 {
				g := goScanTable(t, b, name, true)
				rows, sum := icectlScan(t, b, cat, name, true)
				agree(t, g, rows, sum)
			}
			commitOnTop(t, b, cat, tbl, fx, c.version)
			if c.version == 2 {
				upgradeAndMerge(t, b, cat, name)
			}
			compactAndCompare(t, b, cat, name, c.version)
		})
	}
}

// upgradeAndMerge upgrades iceberg-go's v2 table (its partition-scoped
// position deletes, icectl's file-scoped ones and an equality delete) to
// v3 and has icectl dv merge --equality it through the backend's catalog
// and storage: iceberg-go reads the same rows, and only DVs are left.
func upgradeAndMerge(t *testing.T, b backend, cat catalog.Catalog, name string) {
	t.Helper()
	ctx := context.Background()
	before := goScanTable(t, b, name, false)
	id := catalog.Ident{Namespace: []string{b.ns}, Name: name}
	tbl, err := cat.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if tbl, err = cat.CommitTable(ctx, tbl, nil, []spec.Update{spec.UpgradeFormatVersion{FormatVersion: 3}}); err != nil {
		t.Fatal(err)
	}
	opts := dvmerge.Options{Equality: true, Commit: commit.DefaultOptions()}
	opts.Commit.Sleep = func(context.Context, time.Duration) error { return nil }
	p, err := dvmerge.PlanTable(ctx, tbl, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rep, err := dvmerge.Execute(ctx, cat, tbl, p, opts)
	if err != nil {
		t.Fatalf("dv merge of iceberg-go's table: %v", err)
	}
	if rep.Commits != 1 || rep.PositionDeleteFilesRetired == 0 || rep.EqualityDeleteFilesRetired == 0 {
		t.Errorf("dv merge report: %+v", rep)
	}
	after := goScanTable(t, b, name, false)
	if after.RowCount != before.RowCount || after.Checksum != before.Checksum {
		t.Errorf("iceberg-go after dv merge: %d rows %s; before: %d rows %s", after.RowCount, after.Checksum, before.RowCount, before.Checksum)
	}
	if tbl, err = cat.LoadTable(ctx, id); err != nil {
		t.Fatal(err)
	}
	fs, err := table.LiveFiles(ctx, tbl.IO, tbl.Metadata.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range fs.Deletes {
		if df := d.Entry.DataFile; !table.IsDV(&df) {
			t.Errorf("delete file %s (content %d) remains after dv merge --equality", df.FilePath, df.Content)
		}
	}
}

// compactAndCompare has icectl compact the table (iceberg-go's files and
// icectl's, every kind of delete) through the backend's catalog and
// storage; iceberg-go must read the same rows after as before, with the
// same lineage in v3.
func compactAndCompare(t *testing.T, b backend, cat catalog.Catalog, name string, version int) {
	t.Helper()
	ctx := context.Background()
	before := goScanTable(t, b, name, version >= 3)
	tbl, err := cat.LoadTable(ctx, catalog.Ident{Namespace: []string{b.ns}, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	opts := compact.Options{Plan: plan.Options{RewriteAll: true}}
	opts.Commit = commit.DefaultOptions()
	opts.Commit.Sleep = func(context.Context, time.Duration) error { return nil }
	p, err := compact.PlanTable(ctx, tbl, opts)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := compact.Execute(ctx, cat, tbl, p, opts)
	if err != nil {
		t.Fatalf("compact iceberg-go's table: %v", err)
	}
	paths := map[string]int{}
	for _, g := range rep.Groups {
		if g.Status != compact.StatusCommitted {
			t.Errorf("group %s: %s (%s)", g.ID, g.Status, g.Reason)
		}
		paths[g.Rewrite+" "+g.RewriteNote]++
	}
	t.Logf("compacted %d files into %d: %v", rep.FilesIn, rep.FilesOut, paths)
	if rep.FilesIn == 0 || rep.Commits == 0 {
		t.Fatalf("nothing compacted: %+v", rep)
	}
	after := goScanTable(t, b, name, version >= 3)
	if after.RowCount != before.RowCount || after.Checksum != before.Checksum {
		t.Errorf("iceberg-go after compaction: %d rows %s; before: %d rows %s", after.RowCount, after.Checksum, before.RowCount, before.Checksum)
	}
	if !slices.EqualFunc(before.Rows, after.Rows, func(x, y json.RawMessage) bool { return bytes.Equal(x, y) }) {
		t.Error("iceberg-go reads other rows (or lineage) after the compaction")
	}
}

// commitOnTop has icectl commit to iceberg-go's table, which iceberg-go
// must then read: a data file, position deletes on it (a DV in v3), and an
// equality delete of one of iceberg-go's rows.
func commitOnTop(t *testing.T, b backend, cat catalog.Catalog, tbl *catalog.Table, fx goScan, version int) {
	t.Helper()
	opts := commit.DefaultOptions()
	opts.Sleep = func(context.Context, time.Duration) error { return nil }
	w := &writer{ctx: context.Background(), cat: cat, tbl: tbl, opts: opts}
	fixture := decodeRows(t, fx.Rows)
	victim := fixture[len(fixture)/2]
	day := victim.ts.UTC().Truncate(24 * time.Hour)
	part := partitionOf(t, tbl, day)

	var added []row
	for k := range int64(6) {
		r := mkRow(1000+k, "")
		r.ts = day.Add(time.Duration(k)*time.Minute + 1500*time.Microsecond)
		added = append(added, r)
	}
	d := w.dataIn(t, part, added)
	w.commit(t, []manifest.DataFile{d})
	del := w.dv(t, d, 1, 4)
	if version < 3 {
		del = w.positionDeletes(t, part, map[string][]int64{d.FilePath: {1, 4}})
	}
	w.commit(t, nil, del, w.equalityDeletes(t, part, victim.id))

	var want []live
	for _, l := range fixture {
		if l.id != victim.id {
			want = append(want, l)
		}
	}
	for i, r := range added {
		if i != 1 && i != 4 {
			want = append(want, live{row: row{id: r.id, name: r.name, amount: r.amount, ts: r.ts}})
		}
	}
	name := tbl.Ident.Name
	g := goScanTable(t, b, name, false)
	rows, sum := icectlScan(t, b, cat, name, false)
	agree(t, g, rows, sum)
	checkExpected(t, g.Rows, want)
}

// partitionOf returns the partition tuple of a row with timestamp ts in
// the table's default spec: unpartitioned, or the fixture's day(ts) as
// days since the epoch.
func partitionOf(t *testing.T, tbl *catalog.Table, ts time.Time) []any {
	t.Helper()
	ps := tbl.Metadata.DefaultSpec()
	switch {
	case ps == nil || len(ps.Fields) == 0:
		return []any{}
	case len(ps.Fields) == 1 && ps.Fields[0].Transform.Kind == spec.TransformDay:
		return []any{int32(ts.Unix() / 86400)}
	}
	t.Fatalf("unexpected partition spec %v", ps)
	return nil
}

// checkDeleteKinds makes sure the fixture exercised what it is for:
// merge-on-read deletes, as Parquet position-delete files in v2 and as
// deletion vectors in v3.
func checkDeleteKinds(t *testing.T, tbl *catalog.Table, version int) {
	t.Helper()
	fs, err := table.LiveFiles(context.Background(), tbl.IO, tbl.Metadata.CurrentSnapshot())
	if err != nil {
		t.Fatalf("icectl: live files: %v", err)
	}
	if len(fs.Deletes) == 0 {
		t.Fatal("iceberg-go's table has no delete files")
	}
	var n int64
	for _, d := range fs.Deletes {
		df := &d.Entry.DataFile
		if df.Content != manifest.ContentPositionDeletes {
			t.Errorf("delete file %s has content %d, want position deletes", df.FilePath, df.Content)
		}
		if dv := table.IsDV(df); dv != (version >= 3) {
			t.Errorf("delete file %s (format %s): deletion vector = %v in a v%d table", df.FilePath, df.FileFormat, dv, version)
		}
		n += df.RecordCount
	}
	if want := int64((fixtureRows-1)/fixtureDeleteEvery + 1); n != want {
		t.Errorf("delete files hold %d positions, want %d", n, want)
	}
}
