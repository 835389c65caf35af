package rewriteposdeletes

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/google/uuid"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

const (
	// PropTargetSize is the table property of the delete files' target
	// size, as Java and Spark read it.
	PropTargetSize = table.PropDeleteTargetFileSize
	// DefaultTargetSize is its default in Java (64 MiB).
	DefaultTargetSize = table.DefaultDeleteTargetFileSize
	// DefaultMinInputFiles is Spark's min-input-files default: a
	// partition is rewritten when it has at least this many small files.
	DefaultMinInputFiles = 5
)

// ErrFormatV3 is returned for a format v3 table: its position deletes
// belong in deletion vectors, which dv merge writes.
var ErrFormatV3 = errors.New("format v3 tables keep position deletes in deletion vectors")

// Options say what to rewrite.
type Options struct {
	// TargetSize overrides write.delete.target-file-size-bytes: files
	// smaller are candidates, and outputs are packed to about this size.
	TargetSize int64
	// MinInputFiles is the number of small files a partition needs to be
	// rewritten (0: DefaultMinInputFiles).
	MinInputFiles int
	Commit        commit.Options
}

// Group is one partition's rewrite.
type Group struct {
	SpecID    int32  `json:"spec_id"`
	Partition string `json:"partition"`
	Files     int    `json:"delete_files"`
	Bytes     int64  `json:"bytes"`
	// Outputs is the number of files the partition is packed into, at
	// most: a bin whose positions are all dangling writes none.
	Outputs int `json:"output_files_at_most"`

	key  string
	bins [][]table.FileEntry
}

// Plan is what a rewrite of the current snapshot would do.
type Plan struct {
	Table               string  `json:"table"`
	SnapshotID          *int64  `json:"snapshot_id"`
	TargetSize          int64   `json:"target_size_bytes"`
	MinInputFiles       int     `json:"min_input_files"`
	PositionDeleteFiles int     `json:"position_delete_files"`
	Groups              []Group `json:"groups"`
	// Rewritten counts the files of all groups.
	Rewritten int `json:"delete_files_to_rewrite"`
	// Dangling are the position-delete files that apply to no live data
	// file: removed without being read.
	Dangling []string `json:"dangling_delete_files"`

	// applies maps a position-delete file to the data files it applies to.
	applies map[table.FileKey]map[string]bool
	dangle  []table.FileKey
}

// Worthwhile reports whether the rewrite would change the table.
func (p Plan) Worthwhile() bool { return len(p.Groups) > 0 || len(p.Dangling) > 0 }

// Result is a finished run.
type Result struct {
	Plan
	Committed bool `json:"committed"`
	// Removed and Added count the delete files the commit removed (the
	// rewritten and the dangling ones) and added.
	Removed int `json:"delete_files_removed"`
	Added   int `json:"delete_files_added"`
	// Positions is the number of deleted positions the added files hold,
	// AddedBytes their size.
	Positions        int64          `json:"positions_written"`
	AddedBytes       int64          `json:"bytes_added"`
	Snapshot         *spec.Snapshot `json:"-"`
	MetadataLocation string         `json:"metadata_location"`
}

// TargetSize is the table's write.delete.target-file-size-bytes, or its
// default.
func TargetSize(md *spec.TableMetadata) (int64, error) {
	v, ok := md.Properties[PropTargetSize]
	if !ok {
		return DefaultTargetSize, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("table property %s=%q is not a positive size", PropTargetSize, v)
	}
	return n, nil
}

// PlanRewrite reads the live files of the current snapshot and plans the
// rewrite. It writes nothing.
func PlanRewrite(ctx context.Context, t *catalog.Table, opts Options) (Plan, error) {
	md := t.Metadata
	if md.FormatVersion >= 3 {
		return Plan{}, fmt.Errorf("%s: %w; run `icectl dv merge %s` instead", t.Ident, ErrFormatV3, t.Ident)
	}
	snap := md.CurrentSnapshot()
	fs, err := table.LiveFiles(ctx, t.IO, snap)
	if err != nil {
		return Plan{}, fmt.Errorf("plan position-delete rewrite of %s: %w", t.Ident, err)
	}
	p, err := PlanFiles(md, fs, opts)
	if err != nil {
		return Plan{}, fmt.Errorf("plan position-delete rewrite of %s: %w", t.Ident, err)
	}
	p.Table = t.Ident.String()
	if snap != nil {
		id := snap.SnapshotID
		p.SnapshotID = &id
	}
	return p, nil
}

// PlanFiles plans the rewrite of fs, the live files of md's current
// snapshot. It is pure.
func PlanFiles(md *spec.TableMetadata, fs *table.FileSet, opts Options) (Plan, error) {
	p := Plan{TargetSize: opts.TargetSize, MinInputFiles: opts.MinInputFiles, Groups: []Group{}, Dangling: []string{},
		applies: map[table.FileKey]map[string]bool{}}
	if p.TargetSize <= 0 {
		var err error
		if p.TargetSize, err = TargetSize(md); err != nil {
			return p, err
		}
	}
	if p.MinInputFiles <= 0 {
		p.MinInputFiles = DefaultMinInputFiles
	}
	ix := table.DeletesForTable(md, fs)
	for _, d := range fs.Data {
		for _, pd := range ix.For(d).PositionDeletes {
			k := pd.Key()
			if p.applies[k] == nil {
				p.applies[k] = map[string]bool{}
			}
			p.applies[k][d.Entry.DataFile.FilePath] = true
		}
	}
	// Dangling by the rule compaction's remove-dangling-deletes uses too
	// (the same files the index applies to nothing: v2 has no DVs to hide
	// position deletes).
	dangling := map[table.FileKey]bool{}
	for _, k := range table.NewDataReach(md, fs.Data).Dangling(fs.Deletes, table.DataChange{}) {
		dangling[k] = true
	}
	byPart := map[string][]table.FileEntry{}
	for _, d := range fs.Deletes {
		df := &d.Entry.DataFile
		if df.Content != manifest.ContentPositionDeletes || table.IsDV(df) {
			continue
		}
		p.PositionDeleteFiles++
		if dangling[d.Key()] {
			p.dangle = append(p.dangle, d.Key())
			continue
		}
		if df.FileSizeInBytes < p.TargetSize {
			k := table.PartitionKey(df.SpecID, df.Partition)
			byPart[k] = append(byPart[k], d)
		}
	}
	slices.SortFunc(p.dangle, func(a, b table.FileKey) int { return strings.Compare(a.Path, b.Path) })
	for _, k := range p.dangle {
		p.Dangling = append(p.Dangling, k.Path)
	}
	for _, k := range slices.Sorted(maps.Keys(byPart)) {
		files := byPart[k]
		if len(files) < p.MinInputFiles {
			continue
		}
		slices.SortFunc(files, func(a, b table.FileEntry) int {
			return strings.Compare(a.Entry.DataFile.FilePath, b.Entry.DataFile.FilePath)
		})
		first := &files[0].Entry.DataFile
		g := Group{SpecID: first.SpecID, key: k}
		if ps, ok := md.SpecByID(int(first.SpecID)); ok {
			g.Partition = table.PartitionPathOf(md.CurrentSchema(), ps, first.Partition)
		}
		for _, bin := range table.PackEnd(files, func(e table.FileEntry) int64 { return e.Entry.DataFile.FileSizeInBytes }, p.TargetSize) {
			// A bin of one file would only be copied.
			if len(bin) < 2 {
				continue
			}
			g.bins = append(g.bins, bin)
			g.Outputs++
			g.Files += len(bin)
			for _, e := range bin {
				g.Bytes += e.Entry.DataFile.FileSizeInBytes
			}
		}
		if len(g.bins) > 0 {
			p.Groups = append(p.Groups, g)
			p.Rewritten += g.Files
		}
	}
	return p, nil
}

// Run plans the rewrite of t's current snapshot, writes the merged files
// and commits them with the removal of their inputs and of the dangling
// files. A table with nothing to rewrite is left as it is.
func Run(ctx context.Context, cat catalog.Catalog, t *catalog.Table, opts Options) (*Result, error) {
	p, err := PlanRewrite(ctx, t, opts)
	if err != nil {
		return nil, err
	}
	return Execute(ctx, cat, t, p, opts)
}

// Execute runs p, a plan of t's current snapshot (PlanRewrite of t, or of
// a version of it with the same snapshot), as Run does.
func Execute(ctx context.Context, cat catalog.Catalog, t *catalog.Table, p Plan, opts Options) (*Result, error) {
	res := &Result{Plan: p, MetadataLocation: t.MetadataLocation}
	if !p.Worthwhile() {
		return res, nil
	}
	w := &writer{fio: t.IO, md: t.Metadata, runID: uuid.NewString()}
	ch := table.Change{Operation: spec.OperationReplace, DeleteSequenceNumbers: map[string]int64{},
		Summary: map[string]string{"icectl.rewrite-position-deletes.partitions": strconv.Itoa(len(p.Groups))}}
	ch.Remove = append(ch.Remove, p.dangle...)
	for _, g := range p.Groups {
		for _, bin := range g.bins {
			df, seq, err := w.merge(ctx, bin, p.applies)
			if err != nil {
				return nil, errors.Join(fmt.Errorf("rewrite position deletes of %s: %w", t.Ident, err), w.removeWritten(ctx))
			}
			for _, e := range bin {
				ch.Remove = append(ch.Remove, e.Key())
			}
			if df != nil {
				ch.AddDeletes = append(ch.AddDeletes, *df)
				ch.DeleteSequenceNumbers[df.FilePath] = seq
				res.Positions += df.RecordCount
				res.AddedBytes += df.FileSizeInBytes
			}
		}
	}
	out, snap, err := table.CommitChange(ctx, cat, t, ch, opts.Commit)
	if err != nil {
		err = fmt.Errorf("rewrite position deletes of %s: %w", t.Ident, err)
		if !errors.Is(err, catalog.ErrCommitStateUnknown) {
			err = errors.Join(err, w.removeWritten(ctx))
		}
		return nil, err
	}
	res.Committed, res.Snapshot, res.MetadataLocation = true, snap, out.MetadataLocation
	res.Removed, res.Added = len(ch.Remove), len(ch.AddDeletes)
	return res, nil
}

// writer writes the merged files of a run.
type writer struct {
	fio     fileio.FileIO
	md      *spec.TableMetadata
	runID   string
	n       int
	written []string
}

// merge reads the inputs of bin, keeping each input's positions of the
// data files it applies to, and writes their union as one file. It
// returns nil when no position is kept, and the data sequence number the
// file must carry: the largest of its inputs.
func (w *writer) merge(ctx context.Context, bin []table.FileEntry, applies map[table.FileKey]map[string]bool) (*manifest.DataFile, int64, error) {
	merged := map[string]*roaring64.Bitmap{}
	var seq int64
	for _, in := range bin {
		seq = max(seq, in.DataSequenceNumber())
		to := applies[in.Key()]
		got, err := table.ReadPositionDeletes(ctx, w.fio, &in.Entry.DataFile, func(path string) (bool, error) { return to[path], nil })
		if err != nil {
			return nil, 0, err
		}
		for path, bm := range got {
			if cur := merged[path]; cur != nil {
				cur.Or(bm)
			} else {
				merged[path] = bm
			}
		}
	}
	if len(merged) == 0 {
		return nil, seq, nil
	}
	first := &bin[0].Entry.DataFile
	dir := table.DataLocation(w.md)
	if ps, ok := w.md.SpecByID(int(first.SpecID)); ok {
		if pp := table.PartitionPathOf(w.md.CurrentSchema(), ps, first.Partition); pp != "" {
			dir += "/" + pp
		}
	}
	w.n++
	path := fmt.Sprintf("%s/%s-posdeletes-%05d.parquet", dir, w.runID, w.n)
	df, err := w.write(ctx, path, merged)
	if err != nil {
		return nil, 0, err
	}
	df.SpecID, df.Partition = first.SpecID, first.Partition
	if len(merged) == 1 {
		for p := range merged {
			df.ReferencedDataFile = &p
		}
	}
	return &df, seq, nil
}

// write writes deletes, sorted by data file path and position, to path.
func (w *writer) write(ctx context.Context, path string, deletes map[string]*roaring64.Bitmap) (manifest.DataFile, error) {
	f, err := w.fio.Create(ctx, path)
	if err != nil {
		return manifest.DataFile{}, err
	}
	w.written = append(w.written, path)
	pw, err := datafile.NewPositionDeleteWriter(f, w.md.Properties)
	if err != nil {
		f.Abort()
		return manifest.DataFile{}, err
	}
	for _, p := range slices.Sorted(maps.Keys(deletes)) {
		it := deletes[p].Iterator()
		for it.HasNext() {
			if err := pw.Write(p, int64(it.Next())); err != nil {
				f.Abort()
				return manifest.DataFile{}, err
			}
		}
	}
	m, err := pw.Close()
	if err != nil {
		f.Abort()
		return manifest.DataFile{}, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return manifest.DataFile{}, fmt.Errorf("close %s: %w", path, err)
	}
	df := m.DataFile(path, pw.BytesWritten())
	df.Content = manifest.ContentPositionDeletes
	return df, nil
}

// removeWritten deletes the files of this run that no commit references,
// through the guarded deletion path.
func (w *writer) removeWritten(ctx context.Context) error {
	return reclaim.DeleteWritten(ctx, w.fio, w.md, w.written)
}
