package compact_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/puffin"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	icefx "github.com/icectl/icectl/internal/testing/fixture"
)

// The fixture tables of the end-to-end tests: id is the key every check
// matches rows by; cat (and, under the second spec, the day of ts) is the
// partition.
const (
	fID     = 1
	fCat    = 2
	fTS     = 3
	fAmount = 4
	fNote   = 5

	fxCatalog = "fx"
	fxNS      = "ns"
	fxTable   = "t"
	fxDay0    = 19900 // 2024-06-25
)

var fxCats = []string{"red", "green", "blue"}

func fxSchema() spec.Schema {
	return spec.Schema{ID: 0, IdentifierFieldIDs: []int{fID}, Fields: []spec.NestedField{
		{ID: fID, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: fCat, Name: "cat", Type: spec.StringType{}, Required: true},
		{ID: fTS, Name: "ts", Type: spec.TimestampTzType{}, Required: true},
		{ID: fAmount, Name: "amount", Type: spec.DoubleType{}},
		{ID: fNote, Name: "note", Type: spec.StringType{}},
	}}
}

// fxSpecCat partitions by cat; fxSpecCatDay (added by addDaySpec) by cat
// and the day of ts.
func fxSpecCat() spec.PartitionSpec {
	return spec.PartitionSpec{ID: 0, Fields: []spec.PartitionField{
		{SourceID: fCat, FieldID: 1000, Name: "cat", Transform: spec.Transform{Kind: spec.TransformIdentity}},
	}}
}

func fxSpecCatDay() spec.PartitionSpec {
	return spec.PartitionSpec{ID: 1, Fields: []spec.PartitionField{
		{SourceID: fCat, FieldID: 1000, Name: "cat", Transform: spec.Transform{Kind: spec.TransformIdentity}},
		{SourceID: fTS, FieldID: 1001, Name: "ts_day", Transform: spec.Transform{Kind: spec.TransformDay}},
	}}
}

// fxPart is a partition of either spec.
type fxPart struct {
	specID int
	cat    string
	day    int32
}

func (p fxPart) values() []any {
	if p.specID == 0 {
		return []any{p.cat}
	}
	return []any{p.cat, p.day}
}

// fixture is a table in a temporary SQLite catalog and an independent
// model of its rows: every id ever appended and every id deleted.
type fixture struct {
	tb    testing.TB
	ctx   context.Context
	dir   string
	uri   string // sqlite:///abs/catalog.db
	cat   catalog.Catalog
	ident catalog.Ident
	tbl   *catalog.Table
	rng   *rand.Rand
	copts commit.Options

	next    int64 // next id
	task    int
	live    map[int64]bool // ids that must be in the table
	deleted map[int64]bool // ids that must never come back
	events  []writeEvent   // the deletes and drops committed, in order

	lastTouched []string // data files of the last delete built

	// For a table in another catalog than the fixture's SQLite one
	// (newRESTFixture): iceberg-read's catalog flags, icectl's, and the
	// environment icectl processes need.
	goArgs  []string
	cliArgs []string
	env     []string
}

// writeEvent is one committed delete: the data files that lost rows or
// were removed, and the partitions (spec/tuple) its delete files cover.
type writeEvent struct {
	snapshotID int64
	touched    []string
	parts      []string
	removed    []string
}

// newFixture creates ns.t in format version v, partitioned by cat, in a
// new temporary directory. props are extra table properties.
func newFixture(tb testing.TB, v int, seed uint64, props map[string]string) *fixture {
	tb.Helper()
	return newFixtureIn(tb, tb.TempDir(), v, seed, props)
}

func newFixtureIn(tb testing.TB, dir string, v int, seed uint64, props map[string]string) *fixture {
	tb.Helper()
	return newFixtureOf(tb, dir, v, seed, props, fxSchema(), fxSpecCat())
}

// newFixtureOf is newFixtureIn with another schema (whose field fID is the
// long id) and spec; writeData and appendFiles need fxSchema's.
func newFixtureOf(tb testing.TB, dir string, v int, seed uint64, props map[string]string, s spec.Schema, ps spec.PartitionSpec) *fixture {
	tb.Helper()
	c := icefx.NewSQLite(tb, icefx.InDir(dir), icefx.WithName(fxCatalog))
	all := map[string]string{
		"write.delete.mode":               "merge-on-read",
		"write.parquet.compression-codec": "zstd",
	}
	for k, val := range props {
		all[k] = val
	}
	ft := c.Table(tb, icefx.TableOptions{Namespace: fxNS, Name: fxTable, FormatVersion: v, Schema: &s, Spec: ps, Props: all})
	ctx, uri, cat, id, tbl := c.Ctx, c.URI, c.Catalog, ft.ID, ft.Load(tb)
	f := &fixture{
		tb: tb, ctx: ctx, dir: dir, uri: uri, cat: cat, ident: id, tbl: tbl,
		rng:  rand.New(rand.NewPCG(seed, 0xc2)),
		next: 1, live: map[int64]bool{}, deleted: map[int64]bool{},
	}
	f.copts = commit.DefaultOptions()
	f.copts.MinWait, f.copts.MaxWait = time.Millisecond, 20*time.Millisecond
	f.copts.NumRetries = 20
	return f
}

// tableName is the table as the CLI and iceberg-read spell it.
func (f *fixture) tableName() string { return f.ident.Namespace[0] + "." + f.ident.Name }

// reload refreshes f.tbl from the catalog.
func (f *fixture) reload() *catalog.Table {
	f.tb.Helper()
	t, err := f.cat.LoadTable(f.ctx, f.ident)
	if err != nil {
		f.tb.Fatal(err)
	}
	f.tbl = t
	return t
}

func (f *fixture) commit(ch table.Change) error {
	t, _, err := table.CommitChange(f.ctx, f.cat, f.tbl, ch, f.copts)
	if err != nil {
		return fmt.Errorf("commit %s: %w", ch.Operation, err)
	}
	f.tbl = t
	return nil
}

func (f *fixture) must(err error) {
	f.tb.Helper()
	if err != nil {
		f.tb.Fatal(err)
	}
}

// partitions returns n partitions of the default spec.
func (f *fixture) partitions(n int) []fxPart {
	spec := f.tbl.Metadata.DefaultSpecID
	var out []fxPart
	for i := range n {
		p := fxPart{specID: spec, cat: fxCats[i%len(fxCats)]}
		if spec != 0 {
			p.day = fxDay0 + int32(i/len(fxCats))
		}
		out = append(out, p)
	}
	return out
}

// rowOf is the content of row id in partition p: a function of both, so
// the expected rows are computed, never read back.
func rowOf(id int64, p fxPart) (ts int64, amount float64, hasAmount bool, note string, hasNote bool) {
	day := p.day
	if p.specID == 0 {
		day = fxDay0 + int32(id%5)
	}
	ts = int64(day)*86400_000_000 + (id*7919%86400)*1_000_000
	return ts, float64(id%1000) / 4, id%11 != 0, "note-" + strconv.FormatInt(id, 36), id%7 != 0
}

func (f *fixture) fileName(suffix string) string {
	f.task++
	return fmt.Sprintf("%s/%05d-%d-%08x%s", table.DataLocation(f.tbl.Metadata), f.task%8, f.task, f.rng.Uint32(), suffix)
}

// writeData writes a data file of n new rows in partition p.
func (f *fixture) writeData(p fxPart, n int) (manifest.DataFile, []int64, error) {
	s := fxSchema()
	as, err := datafile.ArrowSchema(&s)
	if err != nil {
		return manifest.DataFile{}, nil, err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	ids := make([]int64, n)
	for i := range ids {
		id := f.next
		f.next++
		ids[i] = id
		ts, amount, hasAmount, note, hasNote := rowOf(id, p)
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append(p.cat)
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(ts))
		if hasAmount {
			b.Field(3).(*array.Float64Builder).Append(amount)
		} else {
			b.Field(3).AppendNull()
		}
		if hasNote {
			b.Field(4).(*array.StringBuilder).Append(note)
		} else {
			b.Field(4).AppendNull()
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	df, err := datafile.WriteFile(f.ctx, f.tbl.IO, f.fileName(".parquet"), &s, f.tbl.Metadata.Properties, rec)
	if err != nil {
		return df, nil, err
	}
	df.Partition = p.values()
	df.SpecID = int32(p.specID)
	return df, ids, nil
}

// appendFiles commits one snapshot with files data files of rows rows
// each, spread over parts.
func (f *fixture) appendFiles(parts []fxPart, files, rows int) error {
	var add []manifest.DataFile
	var ids []int64
	for i := range files {
		df, got, err := f.writeData(parts[i%len(parts)], rows)
		if err != nil {
			return err
		}
		add = append(add, df)
		ids = append(ids, got...)
	}
	if err := f.commit(table.Change{Operation: spec.OperationAppend, AddData: add}); err != nil {
		return err
	}
	for _, id := range ids {
		f.live[id] = true
	}
	return nil
}

// pickLive returns up to n live ids chosen at random.
func (f *fixture) pickLive(n int) []int64 {
	all := make([]int64, 0, len(f.live))
	for id := range f.live {
		all = append(all, id)
	}
	slices.Sort(all)
	f.rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all[:min(n, len(all))]
}

// Kinds of delete deleteIDs writes.
type deleteKind int

const (
	delPartitionPos deleteKind = iota // one position-delete file per partition, covering several data files
	delFilePos                        // one position-delete file per data file, with referenced_data_file
	delDV                             // DVs, merged with what already applies to each file
	delEquality                       // one equality-delete file on id per partition
)

// rowLoc is where a live row is.
type rowLoc struct {
	entry table.FileEntry
	pos   int64
}

// locate finds the live rows ids in the current snapshot of f.tbl.
func (f *fixture) locate(ids []int64) (map[int64]rowLoc, *table.FileSet, error) {
	md := f.tbl.Metadata
	snap := md.CurrentSnapshot()
	fs, err := table.LiveFiles(f.ctx, f.tbl.IO, snap)
	if err != nil {
		return nil, nil, err
	}
	byPath := map[string]table.FileEntry{}
	for _, e := range fs.Data {
		byPath[e.Entry.DataFile.FilePath] = e
	}
	want := map[int64]bool{}
	for _, id := range ids {
		want[id] = true
	}
	s := fxSchema()
	idField, _ := s.FindField(fID)
	out := map[int64]rowLoc{}
	err = scan.Rows(f.ctx, f.tbl.IO, md, snap, scan.Options{Schema: &spec.Schema{Fields: []spec.NestedField{idField}}, WithFile: true, WithPos: true},
		func(rec arrow.RecordBatch) error {
			idCol := rec.Column(0).(*array.Int64)
			fileCol := rec.Column(1).(*array.String)
			posCol := rec.Column(2).(*array.Int64)
			for i := range int(rec.NumRows()) {
				if want[idCol.Value(i)] {
					out[idCol.Value(i)] = rowLoc{entry: byPath[fileCol.Value(i)], pos: posCol.Value(i)}
				}
			}
			return nil
		})
	if err != nil {
		return nil, nil, err
	}
	for _, id := range ids {
		if _, ok := out[id]; !ok {
			return nil, nil, fmt.Errorf("id %d is not in the table", id)
		}
	}
	return out, fs, nil
}

// deleteIDs deletes the live rows ids with deletes of kind k, based on the
// table's current state (reloaded), and retries from a fresh table when
// another commit gets in the way (a conflict, or the file gone because a
// compaction rewrote it).
func (f *fixture) deleteIDs(k deleteKind, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	var err error
	for range 20 {
		f.reload()
		var ch table.Change
		var ev writeEvent
		ch, ev, err = f.deleteChange(k, ids)
		if err != nil {
			return err
		}
		ch.Validate = f.stillLive(ev.touched)
		if err = f.commit(ch); err == nil {
			for _, id := range ids {
				delete(f.live, id)
				f.deleted[id] = true
			}
			ev.snapshotID = *f.tbl.Metadata.CurrentSnapshotID
			f.events = append(f.events, ev)
			return nil
		}
		if !errors.Is(err, table.ErrFileGone) && !errors.Is(err, catalog.ErrCommitConflict) && !errors.Is(err, table.ErrNewDeletes) {
			return err
		}
	}
	return fmt.Errorf("delete %d rows: gave up: %w", len(ids), err)
}

func (f *fixture) deleteChange(k deleteKind, ids []int64) (table.Change, writeEvent, error) {
	ch, err := f.deleteChangeOf(k, ids)
	var ev writeEvent
	seenPart := map[string]bool{}
	for _, df := range ch.AddDeletes {
		key := fmt.Sprintf("%d/%v", df.SpecID, df.Partition)
		if !seenPart[key] {
			seenPart[key] = true
			ev.parts = append(ev.parts, key)
		}
	}
	ev.touched = f.lastTouched
	return ch, ev, err
}

func (f *fixture) deleteChangeOf(k deleteKind, ids []int64) (table.Change, error) {
	locs, fs, err := f.locate(ids)
	if err != nil {
		return table.Change{}, err
	}
	ch := table.Change{Operation: spec.OperationDelete}
	byFile := map[string][]int64{}
	entries := map[string]table.FileEntry{}
	for _, l := range locs {
		p := l.entry.Entry.DataFile.FilePath
		byFile[p] = append(byFile[p], l.pos)
		entries[p] = l.entry
	}
	paths := sortedKeys(byFile)
	f.lastTouched = paths
	switch k {
	case delFilePos:
		for _, p := range paths {
			slices.Sort(byFile[p])
			df, err := f.writePosDeletes(entries[p], map[string][]int64{p: byFile[p]})
			if err != nil {
				return ch, err
			}
			ref := p
			df.ReferencedDataFile = &ref
			ch.AddDeletes = append(ch.AddDeletes, df)
		}
	case delPartitionPos:
		parts := map[string]map[string][]int64{}
		first := map[string]table.FileEntry{}
		for _, p := range paths {
			key := partKey(entries[p])
			if parts[key] == nil {
				parts[key] = map[string][]int64{}
				first[key] = entries[p]
			}
			slices.Sort(byFile[p])
			parts[key][p] = byFile[p]
		}
		for _, key := range sortedKeys(parts) {
			df, err := f.writePosDeletes(first[key], parts[key])
			if err != nil {
				return ch, err
			}
			ch.AddDeletes = append(ch.AddDeletes, df)
		}
	case delDV:
		ix := table.DeletesForTable(f.tbl.Metadata, fs)
		var dvs []puffin.DV
		for _, p := range paths {
			bm, old, err := f.appliedPositions(entries[p], ix.For(entries[p]))
			if err != nil {
				return ch, err
			}
			for _, pos := range byFile[p] {
				bm.Add(uint64(pos))
			}
			dvs = append(dvs, puffin.DV{ReferencedDataFile: p, Positions: bm})
			ch.Remove = append(ch.Remove, old...)
		}
		add, err := f.writeDVs(dvs, entries)
		if err != nil {
			return ch, err
		}
		ch.AddDeletes = append(ch.AddDeletes, add...)
	case delEquality:
		parts := map[string][]int64{}
		first := map[string]table.FileEntry{}
		for id, l := range locs {
			key := partKey(l.entry)
			parts[key] = append(parts[key], id)
			first[key] = l.entry
		}
		for _, key := range sortedKeys(parts) {
			slices.Sort(parts[key])
			df, err := f.writeEqDeletes(first[key], parts[key])
			if err != nil {
				return ch, err
			}
			ch.AddDeletes = append(ch.AddDeletes, df)
		}
	}
	return ch, nil
}

// stillLive is the check every writer of position deletes must make
// (Java's RowDelta.validateDataFilesExist): the data files the deletes
// name are still live in the base the commit lands on. Without it a
// partition-scoped delete file committed just after a compaction names
// files that are gone, applies to nothing, and the rows come back.
func (f *fixture) stillLive(paths []string) func(*catalog.Table, *spec.Snapshot) error {
	return func(base *catalog.Table, snap *spec.Snapshot) error {
		fs, err := table.LiveFiles(f.ctx, base.IO, snap)
		if err != nil {
			return err
		}
		live := map[string]bool{}
		for _, e := range fs.Data {
			live[e.Entry.DataFile.FilePath] = true
		}
		for _, p := range paths {
			if !live[p] {
				return fmt.Errorf("position deletes name %s: %w", p, table.ErrFileGone)
			}
		}
		return nil
	}
}

// appliedPositions returns the positions of data deleted by its DV and
// position deletes, which a new DV must include (a DV makes readers ignore
// position deletes), and the keys of the DV and file-scoped position
// deletes the new DV replaces.
func (f *fixture) appliedPositions(data table.FileEntry, a table.Applicable) (*roaring64.Bitmap, []table.FileKey, error) {
	bm := roaring64.New()
	var replaced []table.FileKey
	path := data.Entry.DataFile.FilePath
	if a.DV != nil {
		df := a.DV.Entry.DataFile
		fl, err := f.tbl.IO.Open(f.ctx, df.FilePath)
		if err != nil {
			return nil, nil, err
		}
		blob := make([]byte, *df.ContentSizeInBytes)
		_, err = fl.ReadAt(blob, *df.ContentOffset)
		fl.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("read DV %s: %w", df.FilePath, err)
		}
		old, err := puffin.DecodeDV(blob)
		if err != nil {
			return nil, nil, fmt.Errorf("decode DV %s: %w", df.FilePath, err)
		}
		bm.Or(old)
		replaced = append(replaced, a.DV.Key())
	}
	for _, pd := range a.PositionDeletes {
		df := pd.Entry.DataFile
		fl, err := f.tbl.IO.Open(f.ctx, df.FilePath)
		if err != nil {
			return nil, nil, err
		}
		err = datafile.ReadPositionDeletes(f.ctx, fl, fl.Size(), func(p string, pos int64) error {
			if p == path {
				bm.Add(uint64(pos))
			}
			return nil
		})
		fl.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("read position deletes %s: %w", df.FilePath, err)
		}
		if df.ReferencedDataFile != nil && *df.ReferencedDataFile == path {
			replaced = append(replaced, pd.Key())
		}
	}
	return bm, replaced, nil
}

func partKey(e table.FileEntry) string {
	return fmt.Sprintf("%d/%v", e.Entry.DataFile.SpecID, e.Entry.DataFile.Partition)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// writePosDeletes writes a v2 position-delete file in like's partition.
func (f *fixture) writePosDeletes(like table.FileEntry, rows map[string][]int64) (manifest.DataFile, error) {
	path := f.fileName("-deletes.parquet")
	w, err := f.tbl.IO.Create(f.ctx, path)
	if err != nil {
		return manifest.DataFile{}, err
	}
	cw := &countingWriter{w: w}
	pw, err := datafile.NewPositionDeleteWriter(cw, f.tbl.Metadata.Properties)
	if err != nil {
		w.Abort()
		return manifest.DataFile{}, err
	}
	for _, p := range sortedKeys(rows) {
		for _, pos := range rows[p] {
			if err := pw.Write(p, pos); err != nil {
				pw.Close()
				w.Abort()
				return manifest.DataFile{}, err
			}
		}
	}
	m, err := pw.Close()
	if err != nil {
		w.Abort()
		return manifest.DataFile{}, err
	}
	if err := w.Close(); err != nil {
		return manifest.DataFile{}, err
	}
	df := m.DataFile(path, cw.n)
	df.Content = manifest.ContentPositionDeletes
	df.Partition = like.Entry.DataFile.Partition
	df.SpecID = like.Entry.DataFile.SpecID
	return df, nil
}

// writeDVs writes one Puffin file with the DVs.
func (f *fixture) writeDVs(dvs []puffin.DV, entries map[string]table.FileEntry) ([]manifest.DataFile, error) {
	path := f.fileName("-dvs.puffin")
	w, err := f.tbl.IO.Create(f.ctx, path)
	if err != nil {
		return nil, err
	}
	blobs, size, err := puffin.WriteDVs(w, dvs, map[string]string{"created-by": "icectl compact e2e test"})
	if err != nil {
		w.Abort()
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	var out []manifest.DataFile
	for _, b := range blobs {
		ref, off, n := b.ReferencedDataFile, b.Offset, b.Length
		like := entries[ref].Entry.DataFile
		out = append(out, manifest.DataFile{Content: manifest.ContentPositionDeletes, FilePath: path, FileFormat: "PUFFIN",
			SpecID: like.SpecID, Partition: like.Partition, RecordCount: b.Cardinality, FileSizeInBytes: size,
			ReferencedDataFile: &ref, ContentOffset: &off, ContentSizeInBytes: &n})
	}
	return out, nil
}

// writeEqDeletes writes an equality-delete file on id in like's partition.
func (f *fixture) writeEqDeletes(like table.FileEntry, ids []int64) (manifest.DataFile, error) {
	all := fxSchema()
	idField, _ := all.FindField(fID)
	s := &spec.Schema{Fields: []spec.NestedField{idField}}
	as, err := datafile.ArrowSchema(s)
	if err != nil {
		return manifest.DataFile{}, err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	df, err := datafile.WriteFile(f.ctx, f.tbl.IO, f.fileName("-eq-deletes.parquet"), s, f.tbl.Metadata.Properties, rec)
	if err != nil {
		return df, err
	}
	df.Content = manifest.ContentEqualityDeletes
	df.EqualityIDs = []int{fID}
	df.Partition = like.Entry.DataFile.Partition
	df.SpecID = like.Entry.DataFile.SpecID
	return df, nil
}

// dropFile removes the data file holding id, and the deletes scoped to it,
// as a delete commit that removes whole files does.
func (f *fixture) dropFile(id int64) error {
	var err error
	for range 20 {
		f.reload()
		var locs map[int64]rowLoc
		var fs *table.FileSet
		locs, fs, err = f.locate([]int64{id})
		if err != nil {
			return err
		}
		data := locs[id].entry
		a := table.DeletesForTable(f.tbl.Metadata, fs).For(data)
		ch := table.Change{Operation: spec.OperationDelete, Remove: []table.FileKey{data.Key()}}
		if a.DV != nil {
			ch.Remove = append(ch.Remove, a.DV.Key())
		}
		path := data.Entry.DataFile.FilePath
		for _, pd := range a.PositionDeletes {
			if r := pd.Entry.DataFile.ReferencedDataFile; r != nil && *r == path {
				ch.Remove = append(ch.Remove, pd.Key())
			}
		}
		// The ids of the file are those the model has for it: read them.
		gone, rerr := f.idsIn(data, a)
		if rerr != nil {
			return rerr
		}
		if err = f.commit(ch); err == nil {
			for _, g := range gone {
				delete(f.live, g)
				f.deleted[g] = true
			}
			f.events = append(f.events, writeEvent{snapshotID: *f.tbl.Metadata.CurrentSnapshotID, removed: []string{path}})
			return nil
		}
		if !errors.Is(err, table.ErrFileGone) && !errors.Is(err, catalog.ErrCommitConflict) && !errors.Is(err, table.ErrNewDeletes) {
			return err
		}
	}
	return fmt.Errorf("drop file of id %d: gave up: %w", id, err)
}

// idsIn returns the ids of the live rows of one data file.
func (f *fixture) idsIn(data table.FileEntry, a table.Applicable) ([]int64, error) {
	s := fxSchema()
	idField, _ := s.FindField(fID)
	var ids []int64
	err := scan.ReadFile(f.ctx, f.tbl.IO, f.tbl.Metadata, data, a, scan.Options{Schema: &spec.Schema{Fields: []spec.NestedField{idField}}},
		func(rec arrow.RecordBatch) error {
			ids = append(ids, rec.Column(0).(*array.Int64).Int64Values()...)
			return nil
		})
	return ids, err
}

// upgradeToV3 commits the v2 -> v3 format upgrade.
func (f *fixture) upgradeToV3() {
	f.tb.Helper()
	t, err := f.cat.CommitTable(f.ctx, f.tbl, []spec.Requirement{spec.AssertTableUUID{UUID: f.tbl.Metadata.TableUUID}},
		[]spec.Update{spec.UpgradeFormatVersion{FormatVersion: 3}})
	f.must(err)
	f.tbl = t
}

// addDaySpec adds the (cat, day(ts)) spec and makes it the default.
func (f *fixture) addDaySpec() {
	f.tb.Helper()
	t, err := f.cat.CommitTable(f.ctx, f.tbl, []spec.Requirement{spec.AssertTableUUID{UUID: f.tbl.Metadata.TableUUID}},
		[]spec.Update{spec.AddSpec{Spec: fxSpecCatDay()}, spec.SetDefaultSpec{SpecID: spec.LastAdded}})
	f.must(err)
	f.tbl = t
	if f.tbl.Metadata.DefaultSpecID != 1 {
		f.tb.Fatalf("default spec is %d after adding spec 1", f.tbl.Metadata.DefaultSpecID)
	}
}

// expectedIDs is the model's live ids, sorted.
func (f *fixture) expectedIDs() []int64 {
	out := make([]int64, 0, len(f.live))
	for id := range f.live {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
