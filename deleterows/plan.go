package deleterows

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/plan/where"
)

// ErrInvalidOptions is wrapped by errors about the options (usage).
var ErrInvalidOptions = errors.New("invalid delete-rows options")

// Options configure a run.
type Options struct {
	// Where selects the rows to delete (required).
	Where string
	// Commit configures the commit's retries.
	Commit commit.Options
}

// Mode is how a partial file's rows are deleted.
type Mode string

const (
	ModeDV              Mode = "deletion-vectors"
	ModePositionDeletes Mode = "position-deletes"
	ModeCopyOnWrite     Mode = "copy-on-write"
)

// File is one data file the run removes or adds deletes to.
type File struct {
	Path      string `json:"path"`
	SpecID    int32  `json:"spec_id"`
	Partition string `json:"partition,omitempty"`
	// Records is the file's record count; Live the rows no delete had
	// removed before the run; Deleted the rows the run deletes.
	Records int64 `json:"records"`
	Live    int64 `json:"live_rows"`
	Deleted int64 `json:"deleted_rows"`
	// Removed: every row matches, and the file is removed whole.
	Removed bool `json:"removed"`

	entry    table.FileEntry
	deletes  table.Applicable
	existing *roaring64.Bitmap // positions deleted before the run (nil: none)
	matched  *roaring64.Bitmap // live positions that match (partial files)
}

// Plan is what a run deletes from one snapshot.
type Plan struct {
	Table         string `json:"table"`
	Where         string `json:"where"`
	SnapshotID    int64  `json:"snapshot_id"`
	FormatVersion int    `json:"format_version"`
	Mode          Mode   `json:"mode"`
	// Files, by path: the data files removed whole and those that get
	// deletes.
	Files []File `json:"files"`
	// Deleted is the number of rows the run deletes.
	Deleted int64 `json:"deleted_rows"`

	filter *where.Filter
	schema *spec.Schema
	live   map[string]bool // the data files of the snapshot
}

// Idle reports whether no row matches.
func (p *Plan) Idle() bool { return len(p.Files) == 0 }

// Removed and Partial count the files removed whole and those that get
// deletes.
func (p *Plan) Removed() (n int) {
	for _, f := range p.Files {
		if f.Removed {
			n++
		}
	}
	return n
}

func (p *Plan) Partial() int { return len(p.Files) - p.Removed() }

// PlanTable plans the deletion of the rows of t's current snapshot that
// match opts.Where, reading only. It refuses an empty expression, one
// that names an unknown or nested column, and a format v1 table.
func PlanTable(ctx context.Context, t *catalog.Table, opts Options) (*Plan, error) {
	md := t.Metadata
	if strings.TrimSpace(opts.Where) == "" {
		return nil, fmt.Errorf("%w: --where is required: give the rows to delete, e.g. --where \"event_ts < '2024-01-01'\"", ErrInvalidOptions)
	}
	schema := md.CurrentSchema()
	f, err := where.Compile(opts.Where, schema)
	if err != nil {
		return nil, fmt.Errorf("%w: --where: %v", ErrInvalidOptions, err)
	}
	for _, fld := range f.Fields() {
		if !slices.ContainsFunc(schema.Fields, func(x spec.NestedField) bool { return x.ID == fld.ID }) {
			return nil, fmt.Errorf("%w: --where: column %q is nested; delete-rows filters on top-level columns", ErrInvalidOptions, fld.Name)
		}
	}
	if md.FormatVersion < 2 {
		return nil, fmt.Errorf("delete rows of %s: format v1 tables have no row-level deletes; run icectl upgrade first", t.Ident)
	}
	p := &Plan{Table: t.Ident.String(), Where: opts.Where, FormatVersion: md.FormatVersion, filter: f, schema: schema,
		live: map[string]bool{}, Files: []File{}}
	p.Mode = modeOf(md)
	snap := md.CurrentSnapshot()
	if snap == nil {
		return p, nil
	}
	p.SnapshotID = snap.SnapshotID
	fs, err := table.LiveFiles(ctx, t.IO, snap)
	if err != nil {
		return nil, fmt.Errorf("delete rows of %s: read live files: %w", t.Ident, err)
	}
	ix := table.DeletesForTable(md, fs)
	pfs := map[int32]*where.PartitionFilter{}
	for _, e := range fs.Data {
		df := &e.Entry.DataFile
		p.live[df.FilePath] = true
		ps, ok := md.SpecByID(int(df.SpecID))
		if !ok {
			return nil, fmt.Errorf("delete rows of %s: data file %s has unknown spec %d", t.Ident, df.FilePath, df.SpecID)
		}
		pf := pfs[df.SpecID]
		if pf == nil {
			if pf, err = f.ForSpec(ps, schema); err != nil {
				return nil, fmt.Errorf("delete rows of %s: %w", t.Ident, err)
			}
			pfs[df.SpecID] = pf
		}
		may, err := pf.MatchFile(df)
		if err != nil {
			return nil, fmt.Errorf("delete rows of %s: data file %s: %w", t.Ident, df.FilePath, err)
		}
		if !may {
			continue
		}
		p.Files = append(p.Files, File{Path: df.FilePath, SpecID: df.SpecID, Partition: table.PartitionPathOf(schema, ps, df.Partition),
			Records: df.RecordCount, Removed: f.AllMatchIn(df, ps), entry: e, deletes: ix.For(e)})
	}
	slices.SortFunc(p.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	if err := p.read(ctx, t.IO, md); err != nil {
		return nil, fmt.Errorf("delete rows of %s: %w", t.Ident, err)
	}
	// Files found to hold no live matching row are left alone.
	p.Files = slices.DeleteFunc(p.Files, func(f File) bool { return f.Deleted == 0 })
	for i := range p.Files {
		f := &p.Files[i]
		p.Deleted += f.Deleted
		// A partial file whose every live row matches goes whole: no
		// delete names it, no copy of nothing is written.
		if !f.Removed && f.Deleted == f.Live {
			f.Removed = true
		}
	}
	return p, nil
}

// modeOf is how Spark deletes rows of md: v3 merge-on-read writes DVs, v2
// position deletes; copy-on-write (write.delete.mode's default) rewrites.
func modeOf(md *spec.TableMetadata) Mode {
	if md.Properties["write.delete.mode"] != "merge-on-read" {
		return ModeCopyOnWrite
	}
	if md.FormatVersion >= 3 {
		return ModeDV
	}
	return ModePositionDeletes
}

// read counts the live rows of every candidate file (the rows its
// deletes leave) and, for the partial ones, finds the live positions
// that match.
func (p *Plan) read(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata) error {
	tasks := make([]scan.FileTask, len(p.Files))
	for i, f := range p.Files {
		tasks[i] = scan.FileTask{File: f.entry, Deletes: f.deletes}
	}
	r, err := scan.NewFileReader(fio, md, tasks)
	if err != nil {
		return err
	}
	for i := range p.Files {
		f := &p.Files[i]
		bm, err := r.DeletedPositions(ctx, i)
		if err != nil {
			return err
		}
		f.existing = bm
		if f.Removed {
			f.Live = f.Records - deletedBelow(bm, f.Records)
			f.Deleted = f.Live
			continue
		}
		f.matched = roaring64.New()
		f.Live, err = p.scanFile(ctx, fio, md, f.entry, table.Applicable{}, func(pos int64) bool { return bm != nil && bm.Contains(uint64(pos)) },
			func(pos int64) { f.matched.Add(uint64(pos)) })
		if err != nil {
			return err
		}
		f.Deleted = int64(f.matched.GetCardinality())
	}
	return nil
}

// deletedBelow counts the positions of bm below n.
func deletedBelow(bm *roaring64.Bitmap, n int64) int64 {
	if bm == nil || n <= 0 {
		return 0
	}
	return int64(bm.Rank(uint64(n - 1)))
}

// scanFile reads the filter's columns of e with deletes applied, skips
// the positions skip says are deleted, and calls match with the position
// of every remaining row the filter selects. It returns the number of
// rows not skipped.
func (p *Plan) scanFile(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, e table.FileEntry, deletes table.Applicable,
	skip func(pos int64) bool, match func(pos int64)) (int64, error) {
	fields := p.filter.Fields()
	index := make(map[int]int, len(fields))
	for i, f := range fields {
		index[f.ID] = i
	}
	var live int64
	err := scan.FileRows(ctx, fio, md, e, deletes, &spec.Schema{ID: p.schema.ID, Fields: fields}, func(pos int64, row []any) error {
		if skip(pos) {
			return nil
		}
		live++
		ok, err := p.filter.MatchRow(func(id int) any { return row[index[id]] })
		if err != nil {
			return fmt.Errorf("read %s: %w", e.Entry.DataFile.FilePath, err)
		}
		if ok {
			match(pos)
		}
		return nil
	})
	return live, err
}
