package expire

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/caturi"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// Environment of scripts/bench.d/expire and scripts/bench.d/orphan: with
// ICECTL_BENCH_MKTABLE=DIR the test binary builds the benchmark tables in
// DIR (SQLite catalog "bench" at DIR/catalog.db, warehouse DIR/wh) and
// exits instead of running tests.
const (
	benchDirEnv       = "ICECTL_BENCH_MKTABLE"
	benchSnapshotsEnv = "ICECTL_BENCH_SNAPSHOTS" // expire table: snapshots (default 2000)
	benchOrphansEnv   = "ICECTL_BENCH_ORPHANS"   // orphan table: live files and orphans each (default 20000)
	benchBigEnv       = "ICECTL_BENCH_BIG_FILES" // RSS table: manifest entries (default 1000000)
	benchOnlyEnv      = "ICECTL_BENCH_ONLY"      // expire, orphan or big: build only that table
)

// benchMain builds the tables when benchDirEnv is set.
func benchMain() (bool, error) {
	dir := os.Getenv(benchDirEnv)
	if dir == "" {
		return false, nil
	}
	ctx := context.Background()
	cfg := catalog.Config{Name: "bench", URI: caturi.SQLiteURI(filepath.Join(dir, "catalog.db")),
		Warehouse: "file://" + filepath.Join(dir, "wh")}
	open := func() (*sqlcat.Catalog, error) { return sqlcat.Create(ctx, cfg) }
	if _, err := os.Stat(filepath.Join(dir, "catalog.db")); err == nil {
		open = func() (*sqlcat.Catalog, error) { return sqlcat.Open(ctx, cfg) }
	}
	cat, err := open()
	if err != nil {
		return true, err
	}
	defer cat.Close()
	if err := cat.CreateNamespace(ctx, []string{"ns"}, nil); err != nil && !errors.Is(err, catalog.ErrAlreadyExists) {
		return true, err
	}
	b := &benchBuilder{ctx: ctx, cat: cat, dir: dir, opts: commit.DefaultOptions()}
	only := os.Getenv(benchOnlyEnv)
	if only == "" || only == "expire" {
		if err := b.expireTable(envInt(benchSnapshotsEnv, 2000)); err != nil {
			return true, fmt.Errorf("expire table: %w", err)
		}
	}
	if only == "" || only == "orphan" {
		if err := b.orphanTable(envInt(benchOrphansEnv, 20000)); err != nil {
			return true, fmt.Errorf("orphan table: %w", err)
		}
	}
	if only == "" || only == "big" {
		if err := b.bigTable(envInt(benchBigEnv, 1000000)); err != nil {
			return true, fmt.Errorf("big table: %w", err)
		}
	}
	return true, nil
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

type benchBuilder struct {
	ctx  context.Context
	cat  catalog.Catalog
	dir  string
	opts commit.Options
}

// create makes ns.name (format v2, unpartitioned), or returns nil when it
// exists: a kept directory is reused.
func (b *benchBuilder) create(name string) (*catalog.Table, error) {
	id := catalog.Ident{Namespace: []string{"ns"}, Name: name}
	if _, err := b.cat.LoadTable(b.ctx, id); err == nil {
		fmt.Fprintf(os.Stderr, "ns.%s exists, reused\n", name)
		return nil, nil
	} else if !errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, err
	}
	schema := spec.Schema{ID: 0, Fields: []spec.NestedField{{ID: 1, Name: "id", Type: spec.LongType{}, Required: true}}}
	md, err := spec.NewTableMetadata(schema, spec.PartitionSpec{ID: 0}, spec.SortOrder{OrderID: 0},
		"file://"+filepath.Join(b.dir, "wh", "ns", name), nil, 2)
	if err != nil {
		return nil, err
	}
	return b.cat.CreateTable(b.ctx, id, md)
}

// file writes a small data file (its bytes are never read) and returns
// its entry.
func (b *benchBuilder) file(tbl *catalog.Table, name string, write bool) (manifest.DataFile, error) {
	p := table.DataLocation(tbl.Metadata) + "/" + name
	data := []byte(p)
	if write {
		if err := fileio.WriteFile(b.ctx, tbl.IO, p, data); err != nil {
			return manifest.DataFile{}, err
		}
	}
	return manifest.DataFile{Content: manifest.ContentData, FileFormat: "PARQUET", FilePath: p, Partition: []any{},
		RecordCount: 1, FileSizeInBytes: int64(len(data))}, nil
}

func (b *benchBuilder) commit(m *memCommitter, ch table.Change) error {
	res, _, err := table.CommitChange(b.ctx, m, m.t, ch, b.opts)
	if err == nil {
		m.t = res
	}
	return err
}

// memCommitter commits in memory: each commit applies its updates to the
// metadata held here instead of writing a metadata file, and keeps them,
// so that a history of thousands of snapshots is built by the same
// producer as real commits (the same manifests and manifest lists) without
// rewriting a metadata file that grows with every commit. flush commits
// all the updates kept to the catalog at once.
type memCommitter struct {
	t   *catalog.Table
	ups []spec.Update
}

func (m *memCommitter) LoadTable(context.Context, catalog.Ident) (*catalog.Table, error) {
	return m.t, nil
}

func (m *memCommitter) CommitTable(_ context.Context, _ *catalog.Table, reqs []spec.Requirement, ups []spec.Update) (*catalog.Table, error) {
	md, err := catalog.ApplyCommit(m.t, reqs, ups, time.Now())
	if err != nil {
		return nil, err
	}
	t := *m.t
	t.Metadata = md
	m.ups = append(m.ups, ups...)
	return &t, nil
}

// flush commits every update of the in-memory commits to the catalog as one
// commit on real, the table as created.
func (b *benchBuilder) flush(real *catalog.Table, m *memCommitter) error {
	_, err := b.cat.CommitTable(b.ctx, real, nil, m.ups)
	return err
}

// expireTable is ns.expire: n snapshots, each replacing the previous
// one's data file by a new one, so expiring all but the last deletes n-1
// manifest lists, manifests and data files.
func (b *benchBuilder) expireTable(n int) error {
	tbl, err := b.create("expire")
	if err != nil || tbl == nil {
		return err
	}
	m := &memCommitter{t: tbl}
	var prev *manifest.DataFile
	for i := range n {
		d, err := b.file(tbl, fmt.Sprintf("f%05d.parquet", i), true)
		if err != nil {
			return err
		}
		ch := table.Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{d}}
		if prev != nil {
			ch.Operation, ch.Remove = spec.OperationOverwrite, []table.FileKey{table.PathKey(prev.FilePath)}
		}
		if err := b.commit(m, ch); err != nil {
			return err
		}
		prev = &d
		if i%500 == 499 {
			fmt.Fprintf(os.Stderr, "ns.expire: %d snapshots\n", i+1)
		}
	}
	return b.flush(tbl, m)
}

// orphanTable is ns.orphan: n live data files in commits of 1000 and n
// orphans beside them, every file dated five days back.
func (b *benchBuilder) orphanTable(n int) error {
	tbl, err := b.create("orphan")
	if err != nil || tbl == nil {
		return err
	}
	m := &memCommitter{t: tbl}
	for i := 0; i < n; i += 1000 {
		var add []manifest.DataFile
		for j := i; j < min(i+1000, n); j++ {
			d, err := b.file(tbl, fmt.Sprintf("p%02d/live-%06d.parquet", j%10, j), true)
			if err != nil {
				return err
			}
			add = append(add, d)
		}
		if err := b.commit(m, table.Change{Operation: spec.OperationAppend, AddData: add}); err != nil {
			return err
		}
	}
	if err := b.flush(tbl, m); err != nil {
		return err
	}
	for i := range n {
		if _, err := b.file(tbl, fmt.Sprintf("p%02d/orphan-%06d.parquet", i%10, i), true); err != nil {
			return err
		}
	}
	old := time.Now().Add(-5 * 24 * time.Hour)
	root := filepath.Join(b.dir, "wh", "ns", "orphan")
	return filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	})
}

// bigTable is ns.bigN: n manifest entries (files that do not exist: an
// expiry's dry run reads only manifests, and a real one counts a file
// already gone as deleted) added in 10 appends, then one delete of every
// file, so that expiring all but the last snapshot reads every entry twice
// (as a candidate, and as a DELETED entry of the retained snapshot's
// manifests) and deletes all n files: the most an expiry of n entries
// holds and reports.
func (b *benchBuilder) bigTable(n int) error {
	tbl, err := b.create(fmt.Sprintf("big%d", n))
	if err != nil || tbl == nil {
		return err
	}
	m := &memCommitter{t: tbl}
	// Few appends: each commit reads the manifests before it, so a history
	// of many appends makes generation quadratic in n.
	per := max(1, n/10)
	keys := make([]table.FileKey, 0, n)
	for i := 0; i < n; i += per {
		var add []manifest.DataFile
		for j := i; j < min(i+per, n); j++ {
			d, err := b.file(tbl, fmt.Sprintf("m%03d/f%07d.parquet", i/per, j), false)
			if err != nil {
				return err
			}
			add = append(add, d)
			keys = append(keys, table.PathKey(d.FilePath))
		}
		if err := b.commit(m, table.Change{Operation: spec.OperationAppend, AddData: add}); err != nil {
			return err
		}
	}
	if err := b.commit(m, table.Change{Operation: spec.OperationDelete, Remove: keys}); err != nil {
		return err
	}
	return b.flush(tbl, m)
}
