package relocate

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/puffin"
	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// ErrPrefix is wrapped when a path of the table does not start with the
// source prefix: the copy would still point at the old place.
var ErrPrefix = errors.New("path outside the source prefix")

// ErrStageNotEmpty is wrapped when the staging directory holds files.
var ErrStageNotEmpty = errors.New("staging directory is not empty")

// ErrStageInTable is wrapped by the error for a staging directory inside
// the table's own locations: the staged copy references nothing the table
// does, so `icectl orphan` (or any engine's orphan removal) would delete
// it as orphan files, possibly while it is being copied.
var ErrStageInTable = errors.New("staging directory is inside the table's location")

// FileListName is the name of the file list in the staging directory, as
// Java names it.
const FileListName = "file-list"

// posFilePathID is the field id of a position-delete file's file_path
// column, whose bounds hold data file paths.
const posFilePathID = 2147483546

// Options say what Rewrite replaces and where it writes.
type Options struct {
	// SourcePrefix is replaced by TargetPrefix at the start of every path;
	// both are directories ("/a" and "/a/" are the same), as in Java.
	SourcePrefix, TargetPrefix string
	// StagingDir receives the rewritten metadata, under the paths relative
	// to SourcePrefix, and the file list. It must be empty or missing.
	StagingDir string
	// DryRun reads and checks everything and writes nothing.
	DryRun bool
	// EndVersion, a metadata file name (the current one or one of its
	// metadata-log), is the version copied; "" is the current one.
	EndVersion string
	// StartVersion, a metadata file name of the log, makes the copy
	// incremental, after a copy of StartVersion: only the metadata files
	// after it, the manifest lists of snapshots it does not have, the
	// manifests those list, and the data and delete files those snapshots
	// added are staged and listed.
	StartVersion string
}

// Pair is one line of the file list: copy Source to Target.
type Pair struct {
	Source, Target string
}

// Result is what Rewrite wrote, in the terms of Java's
// RewriteTablePath.Result.
type Result struct {
	// LatestVersion is the file name of the newest metadata file: the one
	// to register at the target.
	LatestVersion    string
	StagingLocation  string
	FileListLocation string // "" on a dry run
	// RewrittenManifests counts the manifests rewritten (Java's
	// rewritten_manifest_file_paths_count), RewrittenDeleteFiles the
	// position-delete and deletion-vector files (Java's
	// rewritten_delete_file_paths_count).
	RewrittenManifests   int
	RewrittenDeleteFiles int
	MetadataFiles        int
	ManifestLists        int
	// Files is the file list, sorted by source: the rewritten metadata in
	// the staging directory and the data and delete files, each to its
	// place under TargetPrefix.
	Files []Pair
}

// prefixes replaces one directory prefix by another.
type prefixes struct{ src, dst string }

func dirOf(p string) string {
	if strings.HasSuffix(p, "/") {
		return p
	}
	return p + "/"
}

// rel is p relative to the source prefix ("" for the prefix itself). A
// local path matches in any of its spellings, file:///p, Hadoop's file:/p
// or a bare /p: Spark writes its files as file:/p under a table location
// of file:///p, PyIceberg's add_files keeps a local file's bare path, and
// one prefix must cover them all.
func (x prefixes) rel(p string) (string, error) {
	q, src := p, dirOf(x.src)
	if !strings.HasPrefix(dirOf(q), src) {
		q, src = localFile(p), dirOf(localFile(x.src))
		if !strings.HasPrefix(dirOf(q), src) {
			return "", fmt.Errorf("%w: %s does not start with %s", ErrPrefix, p, dirOf(x.src))
		}
	}
	if dirOf(q) == src {
		return "", nil
	}
	return q[len(src):], nil
}

// localFile spells a local absolute path, bare or as a file URI, file:/p
// (Hadoop's spelling); any other path is returned as it is.
func localFile(p string) string {
	if rest, ok := strings.CutPrefix(p, "file://"); ok && strings.HasPrefix(rest, "/") {
		return "file:" + rest
	}
	if strings.HasPrefix(p, "/") {
		return "file:" + p
	}
	return p
}

func combine(base, rel string) string {
	if rel == "" {
		return base
	}
	return dirOf(base) + rel
}

// to is p under the target prefix.
func (x prefixes) to(p string) (string, error) {
	r, err := x.rel(p)
	if err != nil {
		return "", err
	}
	return combine(x.dst, r), nil
}

// rewriter holds one run's state.
type rewriter struct {
	opts  Options
	x     prefixes
	tio   fileio.FileIO // the table's files, read only
	sio   fileio.FileIO // the staging directory
	md    *spec.TableMetadata
	cache *manifest.SchemaCache
	pairs map[Pair]bool
	// delta holds the snapshots whose added files are listed; nil lists
	// every live file.
	delta  map[int64]bool
	staged []string // files written, removed when the run fails
	// deletes maps a rewritten position-delete or DV file to its new size
	// and, for a Puffin file, each blob's new place by its old offset.
	deletes map[string]*rewrittenDelete
	// lengths maps each rewritten manifest to its new length.
	lengths map[string]int64
	res     Result
}

type rewrittenDelete struct {
	size  int64
	blobs map[int64][2]int64 // old offset -> new offset, length
}

// Rewrite writes a copy of the table whose current metadata file is
// metadataLocation (md) with every path's SourcePrefix replaced by
// TargetPrefix, as Java's RewriteTablePathSparkAction does for a whole
// table: the current metadata file and every one its metadata-log lists,
// the manifest list of every snapshot of the current one, every manifest
// they list, and every live position-delete file and deletion-vector
// Puffin file (whose contents name data files); data files, equality
// deletes and statistics files hold no paths and are only listed.
// The result's file list pairs each staged file and each data and delete
// file with its place at the target. Manifest lengths and the sizes and
// blob offsets of rewritten delete files are the new files'.
func Rewrite(ctx context.Context, tableIO, stageIO fileio.FileIO, metadataLocation string, md *spec.TableMetadata, opts Options) (*Result, error) {
	switch {
	case opts.SourcePrefix == "" || opts.TargetPrefix == "":
		return nil, errors.New("source and target prefix must not be empty")
	case dirOf(opts.SourcePrefix) == dirOf(opts.TargetPrefix):
		return nil, fmt.Errorf("source and target prefix are the same (%s)", opts.SourcePrefix)
	case opts.StagingDir == "":
		return nil, errors.New("no staging directory")
	case reclaim.TableScope(md).Contains(strings.TrimSuffix(opts.StagingDir, "/") + "/icectl-stage-probe"):
		return nil, fmt.Errorf("%w (%s): orphan removal would take the staged copy for orphan files; choose a directory outside it", ErrStageInTable, opts.StagingDir)
	case md.FormatVersion < 2:
		return nil, fmt.Errorf("format v%d tables are not rewritten (icectl writes manifests of v2 and v3): `icectl upgrade --to 2` first", md.FormatVersion)
	}
	r := &rewriter{opts: opts, x: prefixes{opts.SourcePrefix, opts.TargetPrefix}, tio: tableIO, sio: stageIO, md: md,
		cache: manifest.NewSchemaCache(), pairs: map[Pair]bool{}, deletes: map[string]*rewrittenDelete{}, lengths: map[string]int64{}}
	r.res.StagingLocation = dirOf(opts.StagingDir)
	end, start, err := r.versions(ctx, metadataLocation)
	if err != nil {
		return nil, err
	}
	r.res.LatestVersion = fileName(end)
	if _, err := r.x.rel(end); err != nil {
		return nil, err
	}
	if err := checkEmpty(ctx, stageIO, r.res.StagingLocation); err != nil {
		return nil, err
	}
	if err := r.run(ctx, end, start); err != nil {
		if rmErr := r.removeStaged(); rmErr != nil {
			return nil, errors.Join(err, rmErr)
		}
		return nil, err
	}
	r.res.Files = make([]Pair, 0, len(r.pairs))
	for p := range r.pairs {
		r.res.Files = append(r.res.Files, p)
	}
	slices.SortFunc(r.res.Files, func(a, b Pair) int {
		return cmp2(a.Source, b.Source, a.Target, b.Target)
	})
	if !opts.DryRun {
		loc := r.res.StagingLocation + FileListName
		var b bytes.Buffer
		for _, p := range r.res.Files {
			b.WriteString(p.Source + "," + p.Target + "\n")
		}
		if _, err := r.write(ctx, loc, func(w io.Writer) error { _, err := w.Write(b.Bytes()); return err }); err != nil {
			return nil, errors.Join(err, r.removeStaged())
		}
		r.res.FileListLocation = loc
	}
	return &r.res, nil
}

func cmp2(a, b, c, d string) int {
	if n := strings.Compare(a, b); n != 0 {
		return n
	}
	return strings.Compare(c, d)
}

// checkEmpty refuses a staging directory that holds any file.
func checkEmpty(ctx context.Context, fio fileio.FileIO, dir string) error {
	l, ok := fio.(fileio.Lister)
	if !ok {
		return fmt.Errorf("cannot list the staging directory %s", dir)
	}
	errFound := errors.New("found")
	var first string
	err := l.List(ctx, dir, func(fi fileio.FileInfo) error {
		first = fi.Path
		return errFound
	})
	switch {
	case errors.Is(err, errFound):
		return fmt.Errorf("%w: %s holds %s; give an empty or new directory", ErrStageNotEmpty, dir, first)
	case err != nil && !errors.Is(err, fileio.ErrNotFound):
		return fmt.Errorf("list the staging directory: %w", err)
	}
	return nil
}

func fileName(p string) string { return p[strings.LastIndex(p, "/")+1:] }

// versions resolves EndVersion and StartVersion, by file name, against
// the current metadata file and its log (Java's validateVersion): it
// returns the end's location, and start's ("" when not given), and reads
// the end into r.md and the start's snapshots into r.delta's complement.
func (r *rewriter) versions(ctx context.Context, current string) (end, start string, err error) {
	find := func(name string) (string, error) {
		found := ""
		if fileName(current) == name {
			found = current
		}
		for _, e := range r.md.MetadataLog {
			if fileName(e.MetadataFile) == name {
				found = e.MetadataFile
			}
		}
		if found == "" {
			return "", fmt.Errorf("version %s is neither the current metadata file nor one its metadata-log lists", name)
		}
		return found, nil
	}
	end = current
	if r.opts.EndVersion != "" {
		if end, err = find(r.opts.EndVersion); err != nil {
			return "", "", err
		}
	}
	if r.opts.StartVersion != "" {
		if start, err = find(r.opts.StartVersion); err != nil {
			return "", "", err
		}
	}
	if end != current {
		if r.md, err = catalog.ReadMetadata(ctx, r.tio, end); err != nil {
			return "", "", err
		}
	}
	if start == "" {
		return end, "", nil
	}
	if start == end {
		return "", "", fmt.Errorf("start version %s is the end version: nothing to copy", r.opts.StartVersion)
	}
	// The copy goes from start to end along end's log: a start the log
	// does not hold is not before the end, and the copy would miss what
	// lies between them.
	if !slices.ContainsFunc(r.md.MetadataLog, func(e spec.MetadataLogEntry) bool { return e.MetadataFile == start }) {
		return "", "", fmt.Errorf("start version %s is not before end version %s (its metadata-log does not list it)", r.opts.StartVersion, fileName(end))
	}
	smd, err := catalog.ReadMetadata(ctx, r.tio, start)
	if err != nil {
		return "", "", err
	}
	old := map[int64]bool{}
	for _, s := range smd.Snapshots {
		old[s.SnapshotID] = true
	}
	r.delta = map[int64]bool{}
	for _, s := range r.md.Snapshots {
		if !old[s.SnapshotID] {
			r.delta[s.SnapshotID] = true
		}
	}
	return end, start, nil
}

func (r *rewriter) run(ctx context.Context, end, start string) error {
	// Metadata files: the end one and those its log lists (back to the
	// start one, exclusive), as Java requires them to exist.
	versions := []string{end}
	mds := []*spec.TableMetadata{r.md}
	for i := len(r.md.MetadataLog) - 1; i >= 0; i-- {
		loc := r.md.MetadataLog[i].MetadataFile
		if loc == start {
			break
		}
		md, err := catalog.ReadMetadata(ctx, r.tio, loc)
		if err != nil {
			return fmt.Errorf("metadata file %s of the metadata-log: %w", loc, err)
		}
		versions, mds = append(versions, loc), append(mds, md)
	}
	for i, loc := range versions {
		if err := r.rewriteMetadata(ctx, loc, mds[i], i == 0); err != nil {
			return err
		}
	}
	// Manifests of every snapshot of the end metadata (not in the start
	// one), each once.
	lists := map[int64][]manifest.ManifestFile{}
	headers := map[int64]manifest.ListHeader{}
	var order []manifest.ManifestFile
	seen := map[string]bool{}
	var snaps []*spec.Snapshot
	for i := range r.md.Snapshots {
		if s := &r.md.Snapshots[i]; r.delta == nil || r.delta[s.SnapshotID] {
			snaps = append(snaps, s)
		}
	}
	for _, s := range snaps {
		if s.ManifestList == "" {
			return fmt.Errorf("snapshot %d has no manifest list (format v1): not rewritten", s.SnapshotID)
		}
		h, mfs, err := r.readList(ctx, s.ManifestList)
		if err != nil {
			return err
		}
		lists[s.SnapshotID], headers[s.SnapshotID] = mfs, h
		for _, mf := range mfs {
			if !seen[mf.Path] {
				seen[mf.Path] = true
				order = append(order, mf)
			}
		}
	}
	// Delete files first: their manifests record the new sizes.
	for _, mf := range order {
		if mf.Content == manifest.ManifestContentDeletes {
			if err := r.rewriteDeleteFiles(ctx, mf); err != nil {
				return err
			}
		}
	}
	for _, mf := range order {
		if err := r.rewriteManifest(ctx, mf); err != nil {
			return err
		}
	}
	for _, s := range snaps {
		if err := r.rewriteList(ctx, s, headers[s.SnapshotID], lists[s.SnapshotID]); err != nil {
			return err
		}
	}
	return nil
}

// stagingPath is where the rewrite of p goes.
func (r *rewriter) stagingPath(p string) (string, error) {
	rel, err := r.x.rel(p)
	if err != nil {
		return "", err
	}
	return combine(r.res.StagingLocation, rel), nil
}

// write writes a staged file (nothing on a dry run) and returns its size.
func (r *rewriter) write(ctx context.Context, path string, fill func(io.Writer) error) (int64, error) {
	if r.opts.DryRun {
		cw := &fileio.CountingWriter{W: io.Discard}
		err := fill(cw)
		return cw.N, err
	}
	w, err := r.sio.Create(ctx, path)
	if err != nil {
		return 0, err
	}
	r.staged = append(r.staged, path)
	cw := &fileio.CountingWriter{W: w}
	if err := fill(cw); err != nil {
		return 0, errors.Join(err, w.Abort())
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return cw.N, nil
}

// stage writes the rewrite of src and lists it for copying to its place.
func (r *rewriter) stage(ctx context.Context, src string, fill func(io.Writer) error) (int64, error) {
	sp, err := r.stagingPath(src)
	if err != nil {
		return 0, err
	}
	target, err := r.x.to(src)
	if err != nil {
		return 0, err
	}
	n, err := r.write(ctx, sp, fill)
	if err != nil {
		return 0, fmt.Errorf("rewrite %s: %w", src, err)
	}
	r.pairs[Pair{sp, target}] = true
	return n, nil
}

// list adds src, copied unchanged, to the file list.
func (r *rewriter) list(src string) error {
	target, err := r.x.to(src)
	if err != nil {
		return err
	}
	r.pairs[Pair{src, target}] = true
	return nil
}

// removeStaged removes what a failed run wrote. The staging directory
// was empty, so everything in it is this run's.
func (r *rewriter) removeStaged() error {
	var errs []error
	for _, p := range r.staged {
		if err := r.sio.Remove(context.Background(), p); err != nil && !errors.Is(err, fileio.ErrNotFound) {
			errs = append(errs, err)
		}
	}
	r.staged = nil
	return errors.Join(errs...)
}

// rewriteMetadata stages the metadata file loc (md) with its paths
// replaced (Java's RewriteTablePathUtil.replacePaths) and lists its
// statistics files. Statistics files of older versions that are gone
// (expired since) are not listed.
func (r *rewriter) rewriteMetadata(ctx context.Context, loc string, md *spec.TableMetadata, current bool) error {
	out := *md
	var err error
	if out.Location, err = r.x.to(md.Location); err != nil {
		return err
	}
	out.Properties = map[string]string{}
	for k, v := range md.Properties {
		switch k {
		case "write.object-storage.path", "write.folder-storage.path", spec.PropDataPath, spec.PropMetadataPath:
			if v, err = r.x.to(v); err != nil {
				return fmt.Errorf("property %s: %w", k, err)
			}
		}
		out.Properties[k] = v
	}
	out.Snapshots = slices.Clone(md.Snapshots)
	for i := range out.Snapshots {
		s := &out.Snapshots[i]
		if s.ManifestList == "" {
			return fmt.Errorf("metadata file %s: snapshot %d has no manifest list (format v1): not rewritten", loc, s.SnapshotID)
		}
		if s.ManifestList, err = r.x.to(s.ManifestList); err != nil {
			return err
		}
	}
	out.MetadataLog = slices.Clone(md.MetadataLog)
	for i := range out.MetadataLog {
		if out.MetadataLog[i].MetadataFile, err = r.x.to(md.MetadataLog[i].MetadataFile); err != nil {
			return err
		}
	}
	out.Statistics = slices.Clone(md.Statistics)
	for i := range out.Statistics {
		src := md.Statistics[i].StatisticsPath
		if out.Statistics[i].StatisticsPath, err = r.x.to(src); err != nil {
			return err
		}
		if err := r.listStats(ctx, src, current); err != nil {
			return err
		}
	}
	out.PartitionStatistics = slices.Clone(md.PartitionStatistics)
	for i := range out.PartitionStatistics {
		src := md.PartitionStatistics[i].StatisticsPath
		if out.PartitionStatistics[i].StatisticsPath, err = r.x.to(src); err != nil {
			return err
		}
		if err := r.listStats(ctx, src, current); err != nil {
			return err
		}
	}
	gz := strings.HasSuffix(loc, ".gz.metadata.json") || strings.HasSuffix(loc, ".gz")
	data, err := out.Marshal(gz)
	if err != nil {
		return fmt.Errorf("encode metadata %s: %w", loc, err)
	}
	if _, err := r.stage(ctx, loc, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
		return err
	}
	r.res.MetadataFiles++
	return nil
}

func (r *rewriter) listStats(ctx context.Context, src string, current bool) error {
	if !current {
		f, err := r.tio.Open(ctx, src)
		if errors.Is(err, fileio.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		f.Close()
	}
	return r.list(src)
}

// readList reads a manifest list as stored: its header and entries.
func (r *rewriter) readList(ctx context.Context, path string) (manifest.ListHeader, []manifest.ManifestFile, error) {
	data, err := fileio.ReadFile(ctx, r.tio, path)
	if err != nil {
		return manifest.ListHeader{}, nil, err
	}
	lr, err := manifest.OpenManifestList(bytes.NewReader(data), manifest.WithSchemaCache(r.cache))
	if err != nil {
		return manifest.ListHeader{}, nil, fmt.Errorf("manifest list %s: %w", path, err)
	}
	defer lr.Close()
	var out []manifest.ManifestFile
	for {
		mf, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return manifest.ListHeader{}, nil, fmt.Errorf("manifest list %s: %w", path, err)
		}
		if _, err := r.x.rel(mf.Path); err != nil {
			return manifest.ListHeader{}, nil, err
		}
		out = append(out, mf)
	}
	h := lr.Header()
	if h.FormatVersion < 2 {
		return h, nil, fmt.Errorf("manifest list %s is format v%d: not rewritten (icectl writes v2 and v3)", path, h.FormatVersion)
	}
	return h, out, nil
}

// rewriteList stages the manifest list of s with each manifest's new
// path and length; everything else is kept as stored.
func (r *rewriter) rewriteList(ctx context.Context, s *spec.Snapshot, h manifest.ListHeader, mfs []manifest.ManifestFile) error {
	seq := s.SequenceNumber
	if h.SequenceNumber != nil {
		seq = *h.SequenceNumber
	}
	firstRowID := h.FirstRowID
	if firstRowID == nil {
		firstRowID = s.FirstRowID
	}
	_, err := r.stage(ctx, s.ManifestList, func(w io.Writer) error {
		lw, err := manifest.NewListWriter(w, h.FormatVersion, s.SnapshotID, s.ParentSnapshotID, seq, firstRowID)
		if err != nil {
			return err
		}
		for _, mf := range mfs {
			n, ok := r.lengths[mf.Path]
			if !ok {
				return fmt.Errorf("manifest %s was not rewritten", mf.Path)
			}
			if mf.Path, err = r.x.to(mf.Path); err != nil {
				return err
			}
			mf.Length = n
			if err := lw.Add(mf); err != nil {
				return err
			}
		}
		return lw.Close()
	})
	if err == nil {
		r.res.ManifestLists++
	}
	return err
}

// readManifest calls fn with the manifest's header and each entry as
// stored (nothing inherited).
func (r *rewriter) readManifest(ctx context.Context, mf manifest.ManifestFile, header func(manifest.ManifestMeta) error, fn func(manifest.Entry) error) error {
	f, err := r.tio.Open(ctx, mf.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	mr, err := manifest.OpenManifest(io.NewSectionReader(f, 0, f.Size()), manifest.WithSchemaCache(r.cache))
	if err != nil {
		return fmt.Errorf("manifest %s: %w", mf.Path, err)
	}
	defer mr.Close()
	if header != nil {
		if err := header(mr.Meta()); err != nil {
			return err
		}
	}
	for {
		e, err := mr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("manifest %s: %w", mf.Path, err)
		}
		if err := fn(e); err != nil {
			return err
		}
	}
}

// rewriteDeleteFiles stages the live position-delete and DV files of the
// delete manifest mf, each physical file once.
func (r *rewriter) rewriteDeleteFiles(ctx context.Context, mf manifest.ManifestFile) error {
	return r.readManifest(ctx, mf, nil, func(e manifest.Entry) error {
		df := &e.DataFile
		if e.Status == manifest.StatusDeleted || df.Content != manifest.ContentPositionDeletes || r.deletes[df.FilePath] != nil {
			return nil
		}
		var rd *rewrittenDelete
		var err error
		if table.IsDV(df) || strings.EqualFold(df.FileFormat, "puffin") {
			rd, err = r.rewriteDV(ctx, df.FilePath)
		} else {
			rd, err = r.rewritePositionDeletes(ctx, df)
		}
		if err != nil {
			return err
		}
		r.deletes[df.FilePath] = rd
		r.res.RewrittenDeleteFiles++
		return nil
	})
}

// rewritePositionDeletes stages a Parquet position-delete file with its
// file_path values under the target prefix, its rows sorted by file_path
// (bytes) and pos. Other writers' files are taken as they are: iceberg-go
// writes rows unsorted, which the spec asks for but no reader relies on.
// A row twice is refused: dropping it would make the file's record count,
// and the manifests' counts copied as they are, wrong.
func (r *rewriter) rewritePositionDeletes(ctx context.Context, df *manifest.DataFile) (*rewrittenDelete, error) {
	if !strings.EqualFold(df.FileFormat, "parquet") {
		return nil, fmt.Errorf("position-delete file %s is %s: only Parquet ones are rewritten", df.FilePath, df.FileFormat)
	}
	f, err := r.tio.Open(ctx, df.FilePath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := r.readPositionDeletes(ctx, f, f.Size())
	if err != nil {
		return nil, fmt.Errorf("position deletes %s: %w", df.FilePath, err)
	}
	n, err := r.stage(ctx, df.FilePath, func(w io.Writer) error {
		pw, err := datafile.NewPositionDeleteWriter(w, r.md.Properties)
		if err != nil {
			return err
		}
		for _, row := range rows.rows {
			if err := pw.Write(rows.paths[row.path], row.pos); err != nil {
				return fmt.Errorf("position deletes %s: %w", df.FilePath, err)
			}
		}
		_, err = pw.Close()
		return err
	})
	if err != nil {
		return nil, err
	}
	return &rewrittenDelete{size: n}, nil
}

// posRows are the rows of a position-delete file, each path held once.
type posRows struct {
	paths []string // target paths, by id
	rows  []posRow
}

type posRow struct {
	path int32 // index into paths
	pos  int64
}

// readPositionDeletes reads a position-delete file's rows with their
// paths under the target prefix, sorted by path and pos.
func (r *rewriter) readPositionDeletes(ctx context.Context, f io.ReaderAt, size int64) (*posRows, error) {
	out := &posRows{}
	ids := map[string]int32{} // source path -> id
	sorted := true
	err := datafile.ReadPositionDeletes(ctx, f, size, func(path string, pos int64) error {
		id, ok := ids[path]
		if !ok {
			// path shares the reader's page: the map keeps a copy.
			path = strings.Clone(path)
			np, err := r.x.to(path)
			if err != nil {
				return err
			}
			id = int32(len(out.paths))
			ids[path] = id
			out.paths = append(out.paths, np)
		}
		row := posRow{id, pos}
		if n := len(out.rows); n > 0 && sorted && out.compare(out.rows[n-1], row) >= 0 {
			sorted = false
		}
		out.rows = append(out.rows, row)
		return nil
	})
	if err != nil || sorted {
		return out, err
	}
	// Sort by the paths' ranks: one string comparison per distinct path.
	order := make([]int32, len(out.paths))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(out.paths[a], out.paths[b]) })
	rank := make([]int32, len(order))
	for i, id := range order {
		rank[id] = int32(i)
	}
	slices.SortFunc(out.rows, func(a, b posRow) int {
		return cmp.Or(cmp.Compare(rank[a.path], rank[b.path]), cmp.Compare(a.pos, b.pos))
	})
	for i := 1; i < len(out.rows); i++ {
		if a, b := out.rows[i-1], out.rows[i]; rank[a.path] == rank[b.path] && a.pos == b.pos {
			return nil, fmt.Errorf("row (%s, %d) is in the file twice, which the spec does not allow: such a file is not rewritten", out.paths[b.path], b.pos)
		}
	}
	return out, nil
}

// compare orders rows by path, then pos.
func (p *posRows) compare(a, b posRow) int {
	if a.path == b.path {
		return cmp.Compare(a.pos, b.pos)
	}
	return cmp.Or(strings.Compare(p.paths[a.path], p.paths[b.path]), cmp.Compare(a.pos, b.pos))
}

// rewriteDV stages a Puffin file with each blob's referenced-data-file
// property under the target prefix; blobs keep their order and bytes.
func (r *rewriter) rewriteDV(ctx context.Context, path string) (*rewrittenDelete, error) {
	f, err := r.tio.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pr, err := puffin.OpenReader(f, f.Size())
	if err != nil {
		return nil, fmt.Errorf("puffin file %s: %w", path, err)
	}
	meta := pr.Metadata()
	rd := &rewrittenDelete{blobs: map[int64][2]int64{}}
	rd.size, err = r.stage(ctx, path, func(w io.Writer) error {
		pw := puffin.NewWriter(w, meta.Properties)
		for _, b := range meta.Blobs {
			payload, err := pr.ReadBlob(b)
			if err != nil {
				return fmt.Errorf("puffin file %s: %w", path, err)
			}
			nb := b
			if ref, ok := b.Properties["referenced-data-file"]; ok {
				nb.Properties = map[string]string{}
				for k, v := range b.Properties {
					nb.Properties[k] = v
				}
				if nb.Properties["referenced-data-file"], err = r.x.to(ref); err != nil {
					return err
				}
			}
			written, err := pw.AddBlob(nb, payload)
			if err != nil {
				return err
			}
			rd.blobs[b.Offset] = [2]int64{written.Offset, written.Length}
		}
		_, _, err := pw.Finish()
		return err
	})
	if err != nil {
		return nil, err
	}
	return rd, nil
}

// rewriteManifest stages the manifest mf with every path under the target
// prefix, entries kept as stored (status, snapshot ids, sequence numbers,
// first_row_id), and lists its live files.
func (r *rewriter) rewriteManifest(ctx context.Context, mf manifest.ManifestFile) error {
	var mw *manifest.Writer
	entries := func(w io.Writer) error {
		return r.readManifest(ctx, mf, func(meta manifest.ManifestMeta) error {
			if meta.FormatVersion < 2 {
				return fmt.Errorf("manifest %s is format v%d: not rewritten (icectl writes v2 and v3)", mf.Path, meta.FormatVersion)
			}
			schema := meta.Schema
			if schema == nil {
				schema = r.md.CurrentSchema()
			}
			ps := meta.Spec
			ps.ID = int(mf.SpecID)
			var err error
			mw, err = manifest.NewWriter(w, manifest.WriterOptions{Version: meta.FormatVersion, Content: mf.Content, Schema: schema, Spec: ps,
				SnapshotID: mf.AddedSnapshotID, InheritSnapshotID: true, Schemas: r.cache})
			return err
		}, func(e manifest.Entry) error {
			if err := r.rewriteEntry(&e, mf.AddedSnapshotID); err != nil {
				return err
			}
			return mw.Add(e)
		})
	}
	fill := func(w io.Writer) error {
		if err := entries(w); err != nil {
			return err
		}
		return mw.Close()
	}
	n, err := r.stage(ctx, mf.Path, fill)
	if err != nil {
		return err
	}
	r.lengths[mf.Path] = n
	r.res.RewrittenManifests++
	return nil
}

// rewriteEntry replaces the paths of one manifest entry (of a manifest
// added by snapshot added) and lists its file when it is live (and, for
// an incremental copy, added by a snapshot the start version lacks).
func (r *rewriter) rewriteEntry(e *manifest.Entry, added int64) error {
	df := &e.DataFile
	src := df.FilePath
	np, err := r.x.to(src)
	if err != nil {
		return err
	}
	df.FilePath = np
	live := e.Status != manifest.StatusDeleted
	if r.delta != nil && live {
		by := added
		if e.SnapshotID != nil {
			by = *e.SnapshotID
		}
		live = r.delta[by]
	}
	if df.Content == manifest.ContentPositionDeletes {
		if df.ReferencedDataFile != nil {
			ref, err := r.x.to(*df.ReferencedDataFile)
			if err != nil {
				return err
			}
			df.ReferencedDataFile = &ref
		}
		df.LowerBounds = r.pathBounds(df.LowerBounds)
		df.UpperBounds = r.pathBounds(df.UpperBounds)
		if rd := r.deletes[src]; rd != nil {
			df.FileSizeInBytes = rd.size
			if df.ContentOffset != nil {
				nb, ok := rd.blobs[*df.ContentOffset]
				if !ok {
					return fmt.Errorf("deletion vector %s: no blob at offset %d", src, *df.ContentOffset)
				}
				df.ContentOffset, df.ContentSizeInBytes = &nb[0], &nb[1]
			}
			// Listed whenever live: the manifest listed with it records
			// this rewrite's size and offsets.
			if e.Status != manifest.StatusDeleted {
				sp, err := r.stagingPath(src)
				if err != nil {
					return err
				}
				r.pairs[Pair{sp, np}] = true
			}
			return nil
		}
	}
	if live {
		r.pairs[Pair{src, np}] = true
	}
	return nil
}

// pathBounds replaces the file_path bound of a position-delete file; a
// bound outside the prefix (truncated, say) is dropped: no bound claims
// nothing.
func (r *rewriter) pathBounds(b map[int][]byte) map[int][]byte {
	v, ok := b[posFilePathID]
	if !ok {
		return b
	}
	out := make(map[int][]byte, len(b))
	for k, w := range b {
		out[k] = w
	}
	if np, err := r.x.to(string(v)); err == nil {
		out[posFilePathID] = []byte(np)
	} else {
		delete(out, posFilePathID)
	}
	return out
}
