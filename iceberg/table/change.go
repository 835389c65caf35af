package table

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"

	"github.com/google/uuid"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/metastore"
	"github.com/icectl/icectl/iceberg/spec"
)

// ErrFileGone is wrapped when a file a change removes, or the data file an
// added delete refers to, is no longer live in the table: another commit
// removed it, and re-applying the change would lose or resurrect rows. It
// is never retried.
var ErrFileGone = errors.New("file is no longer in the table")

// ErrNewDeletes is wrapped when, since the change was planned, another
// commit added deletes to a data file the change rewrites: the rewritten
// rows would bring the deleted ones back. It is never retried.
var ErrNewDeletes = errors.New("new deletes apply to a rewritten data file")

// Change is one snapshot's worth of added and removed files.
type Change struct {
	Operation string // spec.OperationAppend, OperationReplace, ...
	Branch    string // "" = main
	// AddData and AddDeletes are new files, with SpecID set. New data files
	// have no first_row_id; in v3 tables new position deletes must be DVs.
	AddData, AddDeletes []manifest.DataFile
	// AddManifests are delete manifests written by a ManifestSink, listed
	// as they are: a change adding many delete files need not hold them.
	AddManifests *AddedManifests
	// Remove lists live data files, delete files and DVs to remove.
	Remove []FileKey
	// DataSequenceNumber, when set, is written as the data sequence number
	// of the added files (compaction's starting sequence number), so
	// equality deletes committed meanwhile still apply to them.
	DataSequenceNumber *int64
	// DeleteSequenceNumbers, by added delete file path, overrides
	// DataSequenceNumber for that file: a merge of position-delete files
	// gives each output the largest data sequence number of its inputs,
	// so it applies to exactly the data files they applied to.
	DeleteSequenceNumbers map[string]int64
	// Summary holds extra snapshot summary keys; computed keys win.
	Summary map[string]string
	// Validate is an extra conflict check run on every attempt against the
	// base the change is built on; an error stops the commit.
	Validate func(base *metastore.Table, baseSnap *spec.Snapshot) error
	// FormatVersion, when above the base's format version, commits the
	// snapshot together with an upgrade-format-version to it, in one
	// metadata update: the snapshot is written as the new version requires
	// (in v3, the first one to give row ids to every data manifest).
	FormatVersion int
	// RelistOnly allows a change that adds and removes nothing: its
	// snapshot lists the base's live manifests again, unchanged. In v3
	// that is how data manifests without a first_row_id get one (the first
	// commit after an upgrade) without any other write.
	RelistOnly bool
	// Rewrite, with an empty change, regroups data manifests (the
	// rewrite-manifests snapshot) instead of adding or removing files.
	Rewrite *ManifestRewrite
	// Schemas, when set, is the cache the commit reads and writes
	// manifests with: the caller's, when it has read the same manifests
	// (planning, validation), so that their headers are not parsed again.
	Schemas *manifest.SchemaCache
	// BaseFiles, when set, is asked on every attempt for the live files
	// of the snapshot the attempt builds on, as its caller read them with
	// LiveFiles (for Validate, say); it returns nil when it has none. The
	// commit then does not read the base's manifests for them again. A
	// set read from another snapshot, or of only some content, is not
	// used: the attempt reads the base itself.
	BaseFiles func(snap *spec.Snapshot) *FileSet
}

func (ch *Change) check() error {
	if ch.Operation == "" {
		return errors.New("change has no operation")
	}
	empty := len(ch.AddData) == 0 && len(ch.AddDeletes) == 0 && len(ch.Remove) == 0 && ch.AddManifests.Files() == 0
	switch {
	case empty && !ch.RelistOnly && ch.Rewrite == nil:
		return errors.New("change adds and removes nothing")
	case !empty && (ch.RelistOnly || ch.Rewrite != nil):
		return errors.New("a relist-only or manifest-rewrite change must add and remove nothing")
	case ch.Rewrite != nil && ch.Rewrite.TargetSize <= 0:
		return errors.New("manifest rewrite has no target size")
	case ch.FormatVersion < 0 || ch.FormatVersion > spec.MaxFormatVersion:
		return fmt.Errorf("change asks for format version %d", ch.FormatVersion)
	}
	seen := map[FileKey]bool{}
	for _, k := range ch.Remove {
		if seen[k] {
			return fmt.Errorf("change removes %s twice", k)
		}
		seen[k] = true
	}
	for i := range ch.AddData {
		df := &ch.AddData[i]
		if df.Content != manifest.ContentData {
			return fmt.Errorf("added data file %s has content %d", df.FilePath, df.Content)
		}
		if df.FirstRowID != nil {
			return fmt.Errorf("added data file %s has a first_row_id; new files get theirs by inheritance", df.FilePath)
		}
	}
	for i := range ch.AddDeletes {
		if err := checkDeleteContent(&ch.AddDeletes[i]); err != nil {
			return err
		}
	}
	for _, list := range [][]manifest.DataFile{ch.AddData, ch.AddDeletes} {
		for i := range list {
			k := KeyOf(&list[i])
			if seen[k] {
				return fmt.Errorf("change adds or removes %s twice", k)
			}
			seen[k] = true
		}
	}
	return nil
}

// CommitChange commits ch to the table as a new snapshot on ch.Branch,
// rebuilding it on the fresh table after each conflict (see commit.Run).
// It returns the committed table and the new snapshot.
func CommitChange(ctx context.Context, cat metastore.Committer, t *metastore.Table, ch Change, opts commit.Options) (*metastore.Table, *spec.Snapshot, error) {
	if err := ch.check(); err != nil {
		return nil, nil, fmt.Errorf("commit change to %s: %w", t.Ident, err)
	}
	p := &producer{
		ch:         ch,
		snapshotID: NewSnapshotID(),
		commitUUID: uuid.NewString(),
		rewritten:  map[string]cachedManifest{},
		counted:    map[string]manifest.ManifestFile{},
		schemas:    ch.Schemas,
		seed:       maphash.MakeSeed(),
	}
	if p.schemas == nil {
		p.schemas = manifest.NewSchemaCache()
	}
	res, err := commit.Run(ctx, cat, t, p.build, opts)
	if err != nil {
		return nil, nil, err
	}
	snap, ok := res.Metadata.SnapshotByID(p.snapshotID)
	if !ok {
		return nil, nil, fmt.Errorf("commit change to %s: committed metadata has no snapshot %d", t.Ident, p.snapshotID)
	}
	return res, snap, nil
}

// checkDeleteContent checks what an added delete file must be whatever
// the table: a position- or equality-delete file, a DV naming its data
// file. Change.check and ManifestSink share it.
func checkDeleteContent(df *manifest.DataFile) error {
	switch df.Content {
	case manifest.ContentPositionDeletes:
		if IsDV(df) && df.ReferencedDataFile == nil {
			return fmt.Errorf("added DV %s has no referenced data file", KeyOf(df))
		}
	case manifest.ContentEqualityDeletes:
	default:
		return fmt.Errorf("added delete file %s has content %d", df.FilePath, df.Content)
	}
	return nil
}

// checkDeleteFormat checks an added delete file against the table's
// format version: DVs only in v3 and later, position-delete files only
// before it. checkBase and ManifestSink share it.
func checkDeleteFormat(version int, df *manifest.DataFile) error {
	if version >= 3 && df.Content == manifest.ContentPositionDeletes && !IsDV(df) {
		return fmt.Errorf("added delete file %s: format v3 tables take deletion vectors, not position-delete files", df.FilePath)
	}
	if version < 3 && IsDV(df) {
		return fmt.Errorf("added DV %s: deletion vectors need format v3", KeyOf(df))
	}
	return nil
}
