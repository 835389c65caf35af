package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/caturi"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// Names of what Build creates.
const (
	CatalogName = "demo"
	Namespace   = "shop"
	TableName   = "orders"
	AuditBranch = "audit"
)

// Options tune Build.
type Options struct {
	// Seed makes the rows (and so the checksum) reproducible.
	Seed int64
	// Force lets Build replace the catalog and warehouse of a non-empty
	// directory (DIR/catalog.db and DIR/warehouse; nothing else is
	// touched).
	Force bool
	// Log receives one line per step; nil is silent.
	Log io.Writer
	// Now is the clock the leftovers' age is measured from (time.Now when
	// nil).
	Now func() time.Time
	// Also names more tables of Namespace to build beside TableName, each
	// the same way (same rows, deletes, tag, branch and leftovers).
	Also []string
}

// Result describes the table Build made.
type Result struct {
	Table            string // shop.orders
	CatalogName      string
	CatalogURI       string // sqlite:////abs/DIR/catalog.db
	Warehouse        string // file:///abs/DIR/warehouse
	MetadataLocation string
	Snapshots        int // all snapshots, main and audit
	// Live files of main's current snapshot.
	DataFiles, PositionDeleteFiles, EqualityDeleteFiles int
	// Rows and Checksum are main's surviving rows (scan.Checksum).
	Rows     int64
	Checksum string
	Tag      string
	Branch   string
	// Leftovers are the unreferenced files of the "failed job".
	Leftovers []string
	// DeletedOrderIDs are order ids some delete removes from main.
	DeletedOrderIDs []int64
	// Also are the tables of Options.Also.
	Also []*Result
}

// Shape of the table.
const (
	appends       = 40
	days          = 5
	firstDay      = 19877 // 2024-06-03
	tagAfter      = 24    // the tag marks the end of day 2
	leftoverFiles = 3
	leftoverAge   = 4 * 24 * time.Hour
)

// Build creates the demo table under dir: catalog DIR/catalog.db named
// demo, warehouse DIR/warehouse, table shop.orders, and the tables of
// opts.Also beside it.
func Build(ctx context.Context, dir string, opts Options) (*Result, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("demo directory %s: %w", dir, err)
	}
	if err := prepareDir(abs, opts.Force); err != nil {
		return nil, err
	}
	uri, wh := caturi.SQLiteURI(filepath.Join(abs, "catalog.db")), "file://"+filepath.Join(abs, "warehouse")
	// Rollback-journal mode, as PyIceberg and iceberg-go create a catalog:
	// a user who may read the directory but not write it can still run
	// the read commands (a WAL database needs its -shm file written).
	cat, err := sqlcat.Create(ctx, catalog.Config{Name: CatalogName, URI: uri, Warehouse: wh})
	if err != nil {
		return nil, err
	}
	defer cat.Close()
	if err := cat.CreateNamespace(ctx, []string{Namespace}, nil); err != nil {
		return nil, fmt.Errorf("create namespace %s: %w", Namespace, err)
	}
	loc := location{uri: uri, warehouse: wh}
	// The tables of Also are built beside the main one, at the same time:
	// each builder is serial (one commit after another), and the demo is
	// meant to take seconds.
	type built struct {
		res *Result
		err error
	}
	also := make([]chan built, len(opts.Also))
	for i, name := range opts.Also {
		also[i] = make(chan built, 1)
		go func() {
			// The same seed makes the same rows, files and deletes: its
			// log would repeat the main table's line for line.
			r, err := buildTable(ctx, cat, loc, name, opts, nil)
			also[i] <- built{r, err}
		}()
	}
	res, err := buildTable(ctx, cat, loc, TableName, opts, opts.Log)
	var errs []error
	for _, ch := range also {
		b := <-ch
		if b.err != nil {
			errs = append(errs, b.err)
			continue
		}
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, "demo: built %s the same way\n", b.res.Table)
		}
		if res != nil {
			res.Also = append(res.Also, b.res)
		}
	}
	if err := errors.Join(append([]error{err}, errs...)...); err != nil {
		return nil, err
	}
	return res, nil
}

// location is where the demo catalog is.
type location struct{ uri, warehouse string }

// buildTable creates and fills Namespace.name in cat.
func buildTable(ctx context.Context, cat *sqlcat.Catalog, loc location, name string, opts Options, log io.Writer) (*Result, error) {
	b := &builder{
		ctx:  ctx,
		rng:  rand.New(rand.NewPCG(uint64(opts.Seed), 0x1ceba9)),
		log:  log,
		next: 1,
		cat:  cat,
	}
	b.copts = commit.DefaultOptions()
	res := &Result{
		Table:       Namespace + "." + name,
		CatalogName: CatalogName,
		CatalogURI:  loc.uri,
		Warehouse:   loc.warehouse,
		Branch:      AuditBranch,
	}
	if err := b.createTable(name); err != nil {
		return nil, err
	}
	if err := b.fill(res); err != nil {
		return nil, err
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	var err error
	if res.Leftovers, err = b.leftovers(now().Add(-leftoverAge)); err != nil {
		return nil, err
	}
	if err := b.summarize(res); err != nil {
		return nil, err
	}
	return res, nil
}

// prepareDir refuses a non-empty directory unless force, in which case it
// removes only what Build creates.
func prepareDir(dir string, force bool) error {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return os.MkdirAll(dir, 0o755)
	case err != nil:
		return fmt.Errorf("demo directory: %w", err)
	case len(ents) == 0:
		return nil
	case !force:
		return fmt.Errorf("demo directory %s is not empty (use force to replace its catalog and warehouse)", dir)
	}
	for _, name := range []string{"catalog.db", "catalog.db-wal", "catalog.db-shm", "catalog.db-journal", "warehouse"} {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("demo directory: %w", err)
		}
	}
	return nil
}

// dataFile is a data file of main and what Build knows of its rows.
type dataFile struct {
	df      manifest.DataFile
	part    partition
	ids     []int64
	deleted map[int64]bool // positions removed by some delete
}

type builder struct {
	ctx   context.Context
	rng   *rand.Rand
	log   io.Writer
	cat   *sqlcat.Catalog
	tbl   *catalog.Table
	copts commit.Options

	next    int64 // next order id
	files   []*dataFile
	deleted []int64
	task    int
}

func (b *builder) logf(format string, args ...any) {
	if b.log != nil {
		fmt.Fprintf(b.log, "demo: "+format+"\n", args...)
	}
}

func (b *builder) createTable(name string) error {
	id := catalog.Ident{Namespace: []string{Namespace}, Name: name}
	loc, err := b.cat.DefaultLocation(b.ctx, id)
	if err != nil {
		return err
	}
	props := map[string]string{
		"write.delete.mode":                    "merge-on-read",
		"write.update.mode":                    "merge-on-read",
		"write.merge.mode":                     "merge-on-read",
		"write.parquet.compression-codec":      "zstd",
		"write.metadata.previous-versions-max": "100",
	}
	md, err := spec.NewTableMetadata(ordersSchema(), ordersSpec(), spec.SortOrder{OrderID: 0}, loc, props, 2)
	if err != nil {
		return fmt.Errorf("new table %s: %w", id, err)
	}
	if b.tbl, err = b.cat.CreateTable(b.ctx, id, md); err != nil {
		return fmt.Errorf("create table %s: %w", id, err)
	}
	b.logf("created %s at %s", id, loc)
	return nil
}

// fill commits the table's history: appends, with deletes between them,
// a tag, and the audit branch with a commit of its own.
func (b *builder) fill(res *Result) error {
	var tagged int64
	for a := range appends {
		if err := b.appendSnapshot(a); err != nil {
			return err
		}
		var err error
		switch a {
		case 9, 19, 29, 37:
			err = b.partitionPositionDeletes(2)
		case 13, 31:
			err = b.fileScopedDeletes(2)
		case 16, 26, 35:
			err = b.equalityDeletes()
		}
		if err != nil {
			return err
		}
		if a == tagAfter {
			tagged = *b.tbl.Metadata.CurrentSnapshotID
		}
	}
	res.Tag = "eod-" + dayString(firstDay+2)
	head := *b.tbl.Metadata.CurrentSnapshotID
	t, err := b.cat.CommitTable(b.ctx, b.tbl, nil, []spec.Update{
		spec.SetSnapshotRef{RefName: res.Tag, Ref: spec.SnapshotRef{SnapshotID: tagged, Type: spec.RefTypeTag}},
		spec.SetSnapshotRef{RefName: AuditBranch, Ref: spec.SnapshotRef{SnapshotID: head, Type: spec.RefTypeBranch}},
	})
	if err != nil {
		return fmt.Errorf("create tag %s and branch %s: %w", res.Tag, AuditBranch, err)
	}
	b.tbl = t
	// The audit branch gets a correction of its own that main never sees.
	p := partition{region: "eu", day: firstDay + days - 1}
	df, err := b.writeData(p, 1+b.rng.IntN(20))
	if err != nil {
		return err
	}
	if _, err := b.commit(table.Change{Operation: spec.OperationAppend, Branch: AuditBranch, AddData: []manifest.DataFile{df.df}}); err != nil {
		return err
	}
	b.logf("tagged %s, branched %s", res.Tag, AuditBranch)
	return nil
}

func dayString(day int32) string {
	return time.Unix(int64(day)*86400, 0).UTC().Format("2006-01-02")
}

func (b *builder) commit(ch table.Change) (*spec.Snapshot, error) {
	t, snap, err := table.CommitChange(b.ctx, b.cat, b.tbl, ch, b.copts)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", ch.Operation, err)
	}
	b.tbl = t
	return snap, nil
}

// appendSnapshot commits 7-11 small files of the day the append falls on.
func (b *builder) appendSnapshot(a int) error {
	day := int32(firstDay + a*days/appends)
	n := 7 + b.rng.IntN(5)
	var add []manifest.DataFile
	var made []*dataFile
	for range n {
		p := partition{region: regions[b.rng.IntN(len(regions))], day: day}
		df, err := b.writeData(p, 30+b.rng.IntN(90))
		if err != nil {
			return err
		}
		add = append(add, df.df)
		made = append(made, df)
	}
	if _, err := b.commit(table.Change{Operation: spec.OperationAppend, AddData: add}); err != nil {
		return err
	}
	b.files = append(b.files, made...)
	b.logf("append %d: %d files", a+1, n)
	return nil
}

// fileName is a Java-style name: <partition>/<task>-<n>-<uuid>-00001.parquet.
func (b *builder) fileName(p partition, suffix string) string {
	b.task++
	u := fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", b.rng.Uint32(), b.rng.Uint32()&0xffff,
		b.rng.Uint32()&0xfff, 0x8000|b.rng.Uint32()&0x3fff, b.rng.Uint64()&0xffffffffffff)
	return fmt.Sprintf("%s/%s/%05d-%d-%s-00001%s.parquet", table.DataLocation(b.tbl.Metadata), p.dir(), b.task%8, b.task, u, suffix)
}

func (b *builder) writeData(p partition, n int) (*dataFile, error) {
	orders := genOrders(b.rng, p, b.next, n)
	b.next += int64(n)
	s := ordersSchema()
	rec, err := ordersRecord(&s, p, orders)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	df, err := datafile.WriteFile(b.ctx, b.tbl.IO, b.fileName(p, ""), &s, b.tbl.Metadata.Properties, rec)
	if err != nil {
		return nil, err
	}
	df.Partition = p.values()
	df.SpecID = int32(b.tbl.Metadata.DefaultSpecID)
	ids := make([]int64, n)
	for i, o := range orders {
		ids[i] = o.id
	}
	return &dataFile{df: df, part: p, ids: ids, deleted: map[int64]bool{}}, nil
}

// byPartition groups main's data files.
func (b *builder) byPartition() (map[partition][]*dataFile, []partition) {
	m := map[partition][]*dataFile{}
	var keys []partition
	for _, f := range b.files {
		if m[f.part] == nil {
			keys = append(keys, f.part)
		}
		m[f.part] = append(m[f.part], f)
	}
	return m, keys
}

// pickPositions marks k live positions of f deleted and returns them sorted.
func (b *builder) pickPositions(f *dataFile, k int) []int64 {
	var out []int64
	for tries := 0; len(out) < k && tries < 10*k; tries++ {
		pos := int64(b.rng.IntN(len(f.ids)))
		if f.deleted[pos] {
			continue
		}
		f.deleted[pos] = true
		b.deleted = append(b.deleted, f.ids[pos])
		out = append(out, pos)
	}
	slices.Sort(out)
	return out
}

// partitionPositionDeletes commits n position-delete files, each covering
// several data files of one partition (no referenced_data_file).
func (b *builder) partitionPositionDeletes(n int) error {
	groups, keys := b.byPartition()
	var add []manifest.DataFile
	used := map[partition]bool{}
	for range n {
		var p partition
		for tries := 0; tries < 50; tries++ {
			p = keys[b.rng.IntN(len(keys))]
			if len(groups[p]) >= 2 && !used[p] {
				break
			}
		}
		used[p] = true
		files := slices.Clone(groups[p])
		b.rng.Shuffle(len(files), func(i, j int) { files[i], files[j] = files[j], files[i] })
		files = files[:min(len(files), 2+b.rng.IntN(3))]
		slices.SortFunc(files, func(x, y *dataFile) int { return compareStrings(x.df.FilePath, y.df.FilePath) })
		var rows []posDelete
		for _, f := range files {
			for _, pos := range b.pickPositions(f, 3+b.rng.IntN(6)) {
				rows = append(rows, posDelete{f.df.FilePath, pos})
			}
		}
		df, err := b.writePositionDeletes(p, rows)
		if err != nil {
			return err
		}
		add = append(add, df)
	}
	if _, err := b.commit(table.Change{Operation: spec.OperationDelete, AddDeletes: add}); err != nil {
		return err
	}
	b.logf("position deletes: %d partition-scoped files", n)
	return nil
}

// fileScopedDeletes commits n position-delete files naming one data file
// each in referenced_data_file.
func (b *builder) fileScopedDeletes(n int) error {
	var add []manifest.DataFile
	picked := map[*dataFile]bool{}
	for range n {
		f := b.files[b.rng.IntN(len(b.files))]
		if picked[f] {
			continue
		}
		picked[f] = true
		var rows []posDelete
		for _, pos := range b.pickPositions(f, 2+b.rng.IntN(4)) {
			rows = append(rows, posDelete{f.df.FilePath, pos})
		}
		df, err := b.writePositionDeletes(f.part, rows)
		if err != nil {
			return err
		}
		ref := f.df.FilePath
		df.ReferencedDataFile = &ref
		add = append(add, df)
	}
	if _, err := b.commit(table.Change{Operation: spec.OperationDelete, AddDeletes: add}); err != nil {
		return err
	}
	b.logf("position deletes: %d file-scoped files", len(add))
	return nil
}

func (b *builder) writePositionDeletes(p partition, rows []posDelete) (manifest.DataFile, error) {
	df, err := writePositionDeletes(b.ctx, b.tbl.IO, b.fileName(p, "-deletes"), b.tbl.Metadata.Properties, rows)
	if err != nil {
		return df, err
	}
	df.Partition = p.values()
	df.SpecID = int32(b.tbl.Metadata.DefaultSpecID)
	return df, nil
}

// equalityDeletes commits one equality-delete file on order_id for a
// partition, removing some of its live orders.
func (b *builder) equalityDeletes() error {
	groups, keys := b.byPartition()
	p := keys[b.rng.IntN(len(keys))]
	var ids []int64
	for _, f := range groups[p] {
		for i := range 1 + b.rng.IntN(3) {
			pos := int64((i*37 + b.rng.IntN(len(f.ids))) % len(f.ids))
			if f.deleted[pos] {
				continue
			}
			f.deleted[pos] = true
			b.deleted = append(b.deleted, f.ids[pos])
			ids = append(ids, f.ids[pos])
		}
	}
	slices.Sort(ids)
	all := ordersSchema()
	idField, _ := all.FindField(fieldOrderID)
	s := &spec.Schema{Fields: []spec.NestedField{idField}}
	rec, err := orderIDRecord(s, ids)
	if err != nil {
		return err
	}
	defer rec.Release()
	df, err := datafile.WriteFile(b.ctx, b.tbl.IO, b.fileName(p, "-eq-deletes"), s, b.tbl.Metadata.Properties, rec)
	if err != nil {
		return err
	}
	df.Content = manifest.ContentEqualityDeletes
	df.EqualityIDs = []int{fieldOrderID}
	df.Partition = p.values()
	df.SpecID = int32(b.tbl.Metadata.DefaultSpecID)
	if _, err := b.commit(table.Change{Operation: spec.OperationDelete, AddDeletes: []manifest.DataFile{df}}); err != nil {
		return err
	}
	b.logf("equality deletes: %d order ids in %s", len(ids), p.dir())
	return nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
