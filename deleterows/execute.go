package deleterows

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/google/uuid"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/puffin"
	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// ErrConflict is wrapped when a concurrent commit added data that may
// hold matching rows: committing would leave them, so the run stops.
var ErrConflict = errors.New("a concurrent commit added data files that may hold matching rows")

// ErrSelfCheck is wrapped when the rows read back do not add up; nothing
// is committed when it is found before the commit.
var ErrSelfCheck = errors.New("self-check failed")

// Report is what a run did.
type Report struct {
	Plan *Plan `json:"plan"`
	// RowsBefore and RowsAfter are the table's rows read before the run
	// and after its commit; RowsAfter is -1 when a concurrent commit came
	// between (the count is then not comparable).
	RowsBefore int64 `json:"rows_before"`
	RowsAfter  int64 `json:"rows_after"`
	Deleted    int64 `json:"deleted_rows"`
	// FilesRemoved and DeleteFilesAdded count the data files removed
	// whole and the delete files (DVs or position-delete files) added.
	FilesRemoved     int `json:"files_removed"`
	DeleteFilesAdded int `json:"delete_files_added"`
	// FilesRewritten counts the data files replaced by a copy without the
	// deleted rows (copy-on-write).
	FilesRewritten   int    `json:"files_rewritten"`
	SnapshotID       int64  `json:"snapshot_id,omitempty"`
	MetadataLocation string `json:"metadata_location,omitempty"`
}

// Execute carries out p, a plan of t's current snapshot, on t: it writes
// the deletes, reads every partial file back with them (refusing to
// commit when they do not delete exactly the matched rows), commits one
// "delete" snapshot validated against concurrent commits, and counts the
// table's rows again.
func Execute(ctx context.Context, cat catalog.Catalog, t *catalog.Table, p *Plan, opts Options) (*Report, error) {
	rep := &Report{Plan: p, RowsAfter: -1, MetadataLocation: t.MetadataLocation}
	if p.Idle() {
		return rep, nil
	}
	md := t.Metadata
	snap := md.CurrentSnapshot()
	if snap == nil || snap.SnapshotID != p.SnapshotID {
		return nil, fmt.Errorf("delete rows of %s: the plan is of snapshot %d, the table is not there any more; run again", t.Ident, p.SnapshotID)
	}
	before, err := countRows(ctx, t.IO, md, snap, p)
	if err != nil {
		return nil, fmt.Errorf("delete rows of %s: count rows before: %w", t.Ident, err)
	}
	rep.RowsBefore = before
	w := &writer{fio: t.IO, md: md, runID: uuid.NewString()}
	ch := table.Change{Operation: spec.OperationDelete,
		Summary: map[string]string{"icectl.delete-rows.where": p.Where, "icectl.delete-rows.deleted-rows": strconv.FormatInt(p.Deleted, 10)}}
	staged, err := w.stage(ctx, p, &ch)
	if len(ch.AddData) > 0 {
		// Spark's copy-on-write DELETE commits an overwrite: rows go, and
		// files are added.
		ch.Operation = spec.OperationOverwrite
	}
	if err == nil {
		err = p.selfCheck(ctx, t.IO, md, staged)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("delete rows of %s: %w", t.Ident, err), w.removeWritten(ctx))
	}
	ch.Validate = p.validate
	out, newSnap, err := table.CommitChange(ctx, cat, t, ch, opts.Commit)
	if err != nil {
		err = fmt.Errorf("delete rows of %s: %w", t.Ident, err)
		if !errors.Is(err, catalog.ErrCommitStateUnknown) {
			err = errors.Join(err, w.removeWritten(ctx))
		}
		return nil, err
	}
	rep.SnapshotID, rep.MetadataLocation = newSnap.SnapshotID, out.MetadataLocation
	rep.Deleted, rep.FilesRemoved, rep.DeleteFilesAdded, rep.FilesRewritten = p.Deleted, p.Removed(), len(ch.AddDeletes), len(ch.AddData)
	if newSnap.ParentSnapshotID != nil && *newSnap.ParentSnapshotID == p.SnapshotID {
		after, err := countRows(ctx, out.IO, out.Metadata, newSnap, p)
		if err != nil {
			return rep, fmt.Errorf("delete rows of %s: committed snapshot %d; count rows after: %w", t.Ident, newSnap.SnapshotID, err)
		}
		rep.RowsAfter = after
		if after != before-p.Deleted {
			return rep, fmt.Errorf("delete rows of %s: %w: committed snapshot %d holds %d rows, want %d (%d before, %d deleted)",
				t.Ident, ErrSelfCheck, newSnap.SnapshotID, after, before-p.Deleted, before, p.Deleted)
		}
	}
	return rep, nil
}

// countRows counts the rows of snap, reading only the filter's columns.
func countRows(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, snap *spec.Snapshot, p *Plan) (int64, error) {
	var n int64
	proj := &spec.Schema{ID: p.schema.ID, Fields: p.filter.Fields()}
	err := scan.SnapshotRows(ctx, fio, md, snap, proj, func([]any) error {
		n++
		return nil
	})
	return n, err
}

// stagedFile is a partial file with the deletes a reader will apply to it
// once the run commits, or the copy that replaces it (copy-on-write).
type stagedFile struct {
	file    *File
	deletes table.Applicable
	copy    *table.FileEntry
}

// stage writes the deletes of p's partial files and fills ch: the whole
// files and their DVs to remove, the delete files to add and the DVs
// they replace.
func (w *writer) stage(ctx context.Context, p *Plan, ch *table.Change) ([]stagedFile, error) {
	var staged []stagedFile
	groups := map[string][]*File{}
	var order []string
	for i := range p.Files {
		f := &p.Files[i]
		if f.Removed {
			ch.Remove = append(ch.Remove, f.entry.Key())
			if f.deletes.DV != nil {
				ch.Remove = append(ch.Remove, f.deletes.DV.Key())
			}
			continue
		}
		k := table.PartitionKey(f.entry.Entry.DataFile.SpecID, f.entry.Entry.DataFile.Partition)
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], f)
	}
	for _, k := range order {
		fs := groups[k]
		first := &fs[0].entry.Entry.DataFile
		dir := table.DataLocation(w.md)
		if ps, ok := w.md.SpecByID(int(first.SpecID)); ok {
			if pp := table.PartitionPathOf(w.md.CurrentSchema(), ps, first.Partition); pp != "" {
				dir += "/" + pp
			}
		}
		w.n++
		switch p.Mode {
		case ModeDV:
			added, err := w.writeDVs(ctx, fmt.Sprintf("%s/%s-deleterows-%05d.puffin", dir, w.runID, w.n), fs)
			if err != nil {
				return nil, err
			}
			for i, f := range fs {
				if f.deletes.DV != nil {
					ch.Remove = append(ch.Remove, f.deletes.DV.Key())
				}
				ch.AddDeletes = append(ch.AddDeletes, added[i])
				e := table.FileEntry{Entry: manifest.Entry{DataFile: added[i]}}
				staged = append(staged, stagedFile{file: f, deletes: table.Applicable{DV: &e, EqualityDeletes: f.deletes.EqualityDeletes}})
			}
		case ModePositionDeletes:
			df, err := w.writePositionDeletes(ctx, fmt.Sprintf("%s/%s-deleterows-%05d.parquet", dir, w.runID, w.n), fs)
			if err != nil {
				return nil, err
			}
			ch.AddDeletes = append(ch.AddDeletes, df)
			e := table.FileEntry{Entry: manifest.Entry{DataFile: df}}
			for _, f := range fs {
				d := f.deletes
				d.PositionDeletes = append(slices.Clip(d.PositionDeletes), e)
				staged = append(staged, stagedFile{file: f, deletes: d})
			}
		case ModeCopyOnWrite:
			for i, f := range fs {
				df, err := w.rewrite(ctx, fmt.Sprintf("%s/%s-deleterows-%05d-%05d.parquet", dir, w.runID, w.n, i), f)
				if err != nil {
					return nil, err
				}
				ch.Remove = append(ch.Remove, f.entry.Key())
				if f.deletes.DV != nil {
					ch.Remove = append(ch.Remove, f.deletes.DV.Key())
				}
				for _, d := range f.deletes.PositionDeletes {
					if ref := d.Entry.DataFile.ReferencedDataFile; ref != nil && *ref == f.Path {
						ch.Remove = append(ch.Remove, d.Key())
					}
				}
				ch.AddData = append(ch.AddData, df)
				staged = append(staged, stagedFile{file: f, copy: &table.FileEntry{Entry: manifest.Entry{DataFile: df}}})
			}
		default:
			return nil, fmt.Errorf("%s needs a partial delete, which %s tables do not get", fs[0].Path, p.Mode)
		}
	}
	return staged, nil
}

// selfCheck reads every partial file with the deletes staged for it, or
// its copy: the rows left must be its live rows less the ones the run
// deletes, and none of them may match.
func (p *Plan) selfCheck(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, staged []stagedFile) error {
	for _, s := range staged {
		var matched int64
		read, deletes := s.file.entry, s.deletes
		if s.copy != nil {
			read, deletes = *s.copy, table.Applicable{}
		}
		left, err := p.scanFile(ctx, fio, md, read, deletes, func(int64) bool { return false }, func(int64) { matched++ })
		if err != nil {
			return fmt.Errorf("%w: read %s back: %v", ErrSelfCheck, read.Entry.DataFile.FilePath, err)
		}
		if left != s.file.Live-s.file.Deleted || matched != 0 {
			return fmt.Errorf("%w: %s reads %d rows (%d matching) with the new deletes, want %d (%d live, %d deleted); nothing was committed",
				ErrSelfCheck, s.file.Path, left, matched, s.file.Live-s.file.Deleted, s.file.Live, s.file.Deleted)
		}
	}
	return nil
}

// validate fails the commit when, since the plan's snapshot, another
// commit added a data file that may hold matching rows, or changed the
// deletes of a file the run touches. Other changes are kept.
func (p *Plan) validate(base *catalog.Table, baseSnap *spec.Snapshot) error {
	if baseSnap == nil || baseSnap.SnapshotID == p.SnapshotID {
		return nil
	}
	ctx := context.Background()
	fs, err := table.LiveFiles(ctx, base.IO, baseSnap)
	if err != nil {
		return fmt.Errorf("validate against snapshot %d: %w", baseSnap.SnapshotID, err)
	}
	md := base.Metadata
	ix := table.DeletesForTable(md, fs)
	touched := map[string]*File{}
	for i := range p.Files {
		touched[p.Files[i].Path] = &p.Files[i]
	}
	for _, e := range fs.Data {
		df := &e.Entry.DataFile
		if f := touched[df.FilePath]; f != nil {
			if !sameDeletes(f.deletes, ix.For(e)) {
				return fmt.Errorf("%w: %s", table.ErrNewDeletes, df.FilePath)
			}
			delete(touched, df.FilePath)
			continue
		}
		if p.live[df.FilePath] {
			continue
		}
		ps, ok := md.SpecByID(int(df.SpecID))
		if !ok {
			return fmt.Errorf("%w: %s has unknown spec %d", ErrConflict, df.FilePath, df.SpecID)
		}
		pf, err := p.filter.ForSpec(ps, md.CurrentSchema())
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrConflict, df.FilePath, err)
		}
		if may, err := pf.MatchFile(df); err != nil || may {
			return fmt.Errorf("%w: %s (snapshot %d); run again", ErrConflict, df.FilePath, baseSnap.SnapshotID)
		}
	}
	for path := range touched {
		return fmt.Errorf("%w: %s", table.ErrFileGone, path)
	}
	return nil
}

// sameDeletes reports whether a and b list the same delete files.
func sameDeletes(a, b table.Applicable) bool {
	keys := func(x table.Applicable) []table.FileKey {
		var out []table.FileKey
		if x.DV != nil {
			out = append(out, x.DV.Key())
		}
		for _, list := range [][]table.FileEntry{x.PositionDeletes, x.EqualityDeletes} {
			for _, e := range list {
				out = append(out, e.Key())
			}
		}
		slices.SortFunc(out, func(a, b table.FileKey) int {
			if a.Path != b.Path {
				if a.Path < b.Path {
					return -1
				}
				return 1
			}
			return int(a.ContentOffset - b.ContentOffset)
		})
		return out
	}
	return slices.Equal(keys(a), keys(b))
}

// writer writes the delete files of a run.
type writer struct {
	fio     fileio.FileIO
	md      *spec.TableMetadata
	runID   string
	n       int
	written []string
}

// writeDVs writes one Puffin file at path holding, for each file, one DV:
// the positions deleted before (within the file's rows) and the matched
// ones. It returns the DVs' entries in the order of fs.
func (w *writer) writeDVs(ctx context.Context, path string, fs []*File) ([]manifest.DataFile, error) {
	dvs := make([]puffin.DV, len(fs))
	for i, f := range fs {
		bm := f.matched.Clone()
		if f.existing != nil {
			bm.Or(f.existing)
		}
		if f.Records > 0 {
			bm.RemoveRange(uint64(f.Records), ^uint64(0))
		}
		dvs[i] = puffin.DV{ReferencedDataFile: f.Path, Positions: bm}
	}
	var buf bytes.Buffer
	blobs, size, err := puffin.WriteDVs(&buf, dvs, map[string]string{puffin.PropCreatedBy: "icectl delete-rows"})
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	if err := w.put(ctx, path, buf.Bytes()); err != nil {
		return nil, err
	}
	byRef := map[string]puffin.DVBlob{}
	for _, b := range blobs {
		byRef[b.ReferencedDataFile] = b
	}
	out := make([]manifest.DataFile, len(fs))
	for i, f := range fs {
		b := byRef[f.Path]
		ref, off, length := b.ReferencedDataFile, b.Offset, b.Length
		src := &f.entry.Entry.DataFile
		out[i] = manifest.DataFile{Content: manifest.ContentPositionDeletes, FilePath: path, FileFormat: "PUFFIN",
			SpecID: src.SpecID, Partition: src.Partition, RecordCount: b.Cardinality, FileSizeInBytes: size,
			ReferencedDataFile: &ref, ContentOffset: &off, ContentSizeInBytes: &length}
	}
	return out, nil
}

// writePositionDeletes writes one position-delete file at path holding
// the matched positions of fs, sorted by path and position.
func (w *writer) writePositionDeletes(ctx context.Context, path string, fs []*File) (manifest.DataFile, error) {
	var buf bytes.Buffer
	pw, err := datafile.NewPositionDeleteWriter(&buf, w.md.Properties)
	if err != nil {
		return manifest.DataFile{}, err
	}
	sorted := slices.Clone(fs)
	slices.SortFunc(sorted, func(a, b *File) int {
		switch {
		case a.Path < b.Path:
			return -1
		case a.Path > b.Path:
			return 1
		}
		return 0
	})
	for _, f := range sorted {
		it := f.matched.Iterator()
		for it.HasNext() {
			if err := pw.Write(f.Path, int64(it.Next())); err != nil {
				return manifest.DataFile{}, fmt.Errorf("write %s: %w", path, err)
			}
		}
	}
	m, err := pw.Close()
	if err != nil {
		return manifest.DataFile{}, fmt.Errorf("write %s: %w", path, err)
	}
	if err := w.put(ctx, path, buf.Bytes()); err != nil {
		return manifest.DataFile{}, err
	}
	df := m.DataFile(path, int64(buf.Len()))
	df.Content = manifest.ContentPositionDeletes
	first := &fs[0].entry.Entry.DataFile
	df.SpecID, df.Partition = first.SpecID, first.Partition
	if len(fs) == 1 {
		ref := fs[0].Path
		df.ReferencedDataFile = &ref
	}
	return df, nil
}

// put writes b to path, recording it for removal should the run fail.
func (w *writer) put(ctx context.Context, path string, b []byte) error {
	f, err := w.fio.Create(ctx, path)
	if err != nil {
		return err
	}
	w.written = append(w.written, path)
	if _, err := f.Write(b); err != nil {
		return errors.Join(fmt.Errorf("write %s: %w", path, err), f.Abort())
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	return nil
}

// removeWritten deletes the files of this run that no commit references.
func (w *writer) removeWritten(ctx context.Context) error {
	return reclaim.DeleteWritten(ctx, w.fio, w.md, w.written)
}
