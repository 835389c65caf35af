package table

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"slices"

	"github.com/google/uuid"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// ManifestSink writes the delete files a change adds to manifests as its
// caller produces them, so that a change adding 100,000 DVs holds none
// of their entries: the commit lists the manifests (Change.AddManifests)
// instead of writing them from a list. The entries are ADDED with null
// snapshot id and sequence numbers (but a data sequence number given with
// AddWithDataSequence), which they inherit from the snapshot that lists
// the manifest: the manifests stay valid when a commit retries
// under a new snapshot id or on a newer base, and the caller may reuse
// them for another commit after a conflict.
//
// Besides the manifests it keeps, per added file, 16 bytes of
// fingerprints (its key and the data file a DV refers to) for the
// commit's checks against the base.
type ManifestSink struct {
	fio     fileio.FileIO
	md      *spec.TableMetadata
	name    string // file name prefix, unique per sink
	n       int    // manifests named so far
	target  int64
	schemas *manifest.SchemaCache
	open    map[int32]*sinkManifest
	out     *AddedManifests
}

// sinkManifest is a manifest being written.
type sinkManifest struct {
	path string
	fw   fileio.Writer
	cw   *fileio.CountingWriter
	mw   *manifest.Writer
}

// AddedManifests are the finished manifests of a ManifestSink, with what
// a commit of them needs to know of their entries: summary counts, the
// partitions they touch, and fingerprints of the files' keys and of the
// data files DVs refer to.
type AddedManifests struct {
	Manifests []manifest.ManifestFile
	seed      maphash.Seed
	counts    counts
	parts     map[string]bool
	keys      []uint64 // of KeyOf(added file), sorted once finished
	refs      []uint64 // of referenced data file paths, sorted once finished
}

// NewManifestSink starts the added delete manifests of a change to the
// table md (written in md's format version, current schema and the spec
// of each file). Manifests are rolled at the table's manifest target size.
func NewManifestSink(fio fileio.FileIO, md *spec.TableMetadata) (*ManifestSink, error) {
	if md.CurrentSchema() == nil {
		return nil, errors.New("new manifest sink: table has no current schema")
	}
	target, err := TargetManifestSize(md)
	if err != nil {
		return nil, fmt.Errorf("new manifest sink: %w", err)
	}
	return &ManifestSink{fio: fio, md: md, name: uuid.NewString(), target: target, schemas: manifest.NewSchemaCache(),
		open: map[int32]*sinkManifest{}, out: &AddedManifests{seed: maphash.MakeSeed(), parts: map[string]bool{}}}, nil
}

// Add writes df (a delete file or DV with SpecID set) as an ADDED entry.
func (s *ManifestSink) Add(ctx context.Context, df *manifest.DataFile) error {
	return s.add(ctx, df, nil)
}

// AddWithDataSequence writes df as an ADDED entry with data sequence
// number seq (its file sequence number is inherited): a delete file that
// replaces others and must apply to exactly the data files they applied
// to, as Java's RewriteFiles.addFile(DeleteFile, long) writes it.
func (s *ManifestSink) AddWithDataSequence(ctx context.Context, df *manifest.DataFile, seq int64) error {
	return s.add(ctx, df, &seq)
}

func (s *ManifestSink) add(ctx context.Context, df *manifest.DataFile, seq *int64) error {
	if err := s.check(df); err != nil {
		return err
	}
	m := s.open[df.SpecID]
	if m == nil {
		var err error
		if m, err = s.start(ctx, df.SpecID); err != nil {
			return err
		}
	}
	if err := m.mw.Add(manifest.Entry{Status: manifest.StatusAdded, SequenceNumber: seq, DataFile: *df}); err != nil {
		return fmt.Errorf("write manifest %s: %w", m.path, err)
	}
	a := s.out
	a.counts.add(df, 1)
	a.parts[PartitionKey(df.SpecID, df.Partition)] = true
	a.keys = append(a.keys, a.keyHash(KeyOf(df)))
	if df.ReferencedDataFile != nil {
		a.refs = append(a.refs, maphash.String(a.seed, *df.ReferencedDataFile))
	}
	if m.cw.N >= s.target {
		return s.finish(m, df.SpecID)
	}
	return nil
}

func (s *ManifestSink) check(df *manifest.DataFile) error {
	if err := checkDeleteContent(df); err != nil {
		return err
	}
	return checkDeleteFormat(s.md.FormatVersion, df)
}

// start opens the next manifest of spec id.
func (s *ManifestSink) start(ctx context.Context, id int32) (*sinkManifest, error) {
	ps, ok := s.md.SpecByID(int(id))
	if !ok {
		return nil, fmt.Errorf("added delete file: table has no partition spec %d", id)
	}
	m := &sinkManifest{path: fmt.Sprintf("%s/%s-a%d.avro", MetadataLocation(s.md), s.name, s.n)}
	s.n++
	fw, err := s.fio.Create(ctx, m.path)
	if err != nil {
		return nil, fmt.Errorf("write manifest: %w", err) // err names m.path
	}
	m.fw, m.cw = fw, &fileio.CountingWriter{W: fw}
	m.mw, err = manifest.NewWriter(m.cw, manifest.WriterOptions{Version: s.md.FormatVersion, Content: manifest.ManifestContentDeletes,
		Schema: s.md.CurrentSchema(), Spec: *ps, InheritSnapshotID: true, Schemas: s.schemas})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("write manifest %s: %w", m.path, err), fw.Abort())
	}
	s.open[id] = m
	return m, nil
}

// finish closes the open manifest of spec id.
func (s *ManifestSink) finish(m *sinkManifest, id int32) error {
	delete(s.open, id)
	if err := m.mw.Close(); err != nil {
		return errors.Join(fmt.Errorf("write manifest %s: %w", m.path, err), m.fw.Abort())
	}
	if err := m.fw.Close(); err != nil {
		return fmt.Errorf("close manifest %s: %w", m.path, err)
	}
	s.out.Manifests = append(s.out.Manifests, m.mw.ManifestFile(m.path, m.cw.N))
	return nil
}

// Finish closes the manifests and returns them. An error leaves the sink
// to Abort.
func (s *ManifestSink) Finish() (*AddedManifests, error) {
	ids := make([]int32, 0, len(s.open))
	for id := range s.open {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if err := s.finish(s.open[id], id); err != nil {
			return nil, err
		}
	}
	a := s.out
	slices.Sort(a.keys)
	slices.Sort(a.refs)
	for i := 1; i < len(a.keys); i++ {
		if a.keys[i] == a.keys[i-1] {
			return nil, errors.New("added delete manifests list a file twice")
		}
	}
	a.refs = slices.Compact(a.refs)
	return a, nil
}

// Abort removes every manifest the sink wrote or started; nothing may
// reference them.
func (s *ManifestSink) Abort(ctx context.Context) error {
	var errs []error
	for id, m := range s.open {
		errs = append(errs, m.fw.Abort())
		delete(s.open, id)
	}
	errs = append(errs, s.out.Remove(ctx, s.fio, s.md))
	return errors.Join(errs...)
}

// Remove deletes the manifests of a, which no committed snapshot lists
// (its commit failed, or a copy replaced it).
func (a *AddedManifests) Remove(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata) error {
	if a == nil {
		return nil
	}
	paths := make([]string, len(a.Manifests))
	for i, mf := range a.Manifests {
		paths[i] = mf.Path
	}
	return removeAll(ctx, fio, md, paths)
}

// Files counts the files a lists.
func (a *AddedManifests) Files() int {
	if a == nil {
		return 0
	}
	return len(a.keys)
}

// CopyTo adds to s every file of a that keep accepts: how a caller drops
// entries from manifests already written (a conflict made some stale)
// without holding them all. a itself is left as it is.
func (a *AddedManifests) CopyTo(ctx context.Context, s *ManifestSink, keep func(*manifest.DataFile) bool) error {
	for _, mf := range a.Manifests {
		f, err := s.fio.Open(ctx, mf.Path)
		if err != nil {
			return fmt.Errorf("copy manifest %s: %w", mf.Path, err)
		}
		err = func() error {
			defer f.Close()
			r, err := manifest.OpenManifest(io.NewSectionReader(f, 0, f.Size()), manifest.WithSchemaCache(s.schemas))
			if err != nil {
				return err
			}
			defer r.Close()
			for {
				e, err := r.Next()
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
				if keep(&e.DataFile) {
					// An explicit data sequence number is kept; the others
					// are null and stay inherited.
					if err := s.add(ctx, &e.DataFile, e.SequenceNumber); err != nil {
						return err
					}
				}
			}
		}()
		if err != nil {
			return fmt.Errorf("copy manifest %s: %w", mf.Path, err)
		}
	}
	return nil
}

func (a *AddedManifests) keyHash(k FileKey) uint64 {
	return maphash.Comparable(a.seed, k)
}

// ref is the index of the data file path in a.refs, or -1.
func (a *AddedManifests) ref(path string) int {
	i, ok := slices.BinarySearch(a.refs, maphash.String(a.seed, path))
	if !ok {
		return -1
	}
	return i
}

func (a *AddedManifests) hasKey(k FileKey) bool {
	_, ok := slices.BinarySearch(a.keys, a.keyHash(k))
	return ok
}

// checkGiven checks the change's AddManifests against the base: every
// data file a DV refers to is live and not removed by the change. (Its
// files' keys were checked not to be live as the base was read.) Only a
// fingerprint is kept per file, so the error cannot name the file; a
// caller that can should check first.
func (p *producer) checkGiven(st *baseState) error {
	a := p.ch.AddManifests
	if a == nil {
		return nil
	}
	missing := 0
	for _, found := range st.refFound {
		if !found {
			missing++
		}
	}
	for _, e := range st.removedData {
		if df := &e.Entry.DataFile; a.ref(df.FilePath) >= 0 {
			return fmt.Errorf("%w: an added delete file refers to data file %s, which the change removes", ErrFileGone, df.FilePath)
		}
	}
	if missing > 0 {
		return fmt.Errorf("%w: %d added delete file(s) refer to data files that are not live", ErrFileGone, missing)
	}
	return nil
}

func (p *producer) keyHash(k FileKey) uint64 {
	return maphash.Comparable(p.seed, k)
}
