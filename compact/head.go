package compact

import (
	"context"
	"fmt"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// head is the state of a branch head the groups are rewritten against or
// validated with.
type head struct {
	t     *catalog.Table
	md    *spec.TableMetadata
	fio   fileio.FileIO
	snap  *spec.Snapshot
	files *table.FileSet              // every live file of snap
	data  map[string]*table.FileEntry // the data files of files, by path
	keys  map[table.FileKey]bool
	index *table.DeleteIndex
	// reach indexes files.Data for the dangling-delete rule, built when
	// first needed (by the committer only).
	reach *table.DataReach
}

// loadHead reads the live files of snap; schemas, when set, is the run's
// cache of manifest schemas (the same few schemas are read at every
// commit attempt).
func loadHead(ctx context.Context, t *catalog.Table, snap *spec.Snapshot, schemas *manifest.SchemaCache) (*head, error) {
	h := &head{t: t, md: t.Metadata, fio: t.IO, snap: snap, data: map[string]*table.FileEntry{}, keys: map[table.FileKey]bool{}}
	fs := &table.FileSet{}
	if snap != nil {
		var err error
		if fs, err = table.LiveFilesWith(ctx, t.IO, snap, table.WalkOptions{Schemas: schemas}); err != nil {
			return nil, fmt.Errorf("read live files of snapshot %d: %w", snap.SnapshotID, err)
		}
	}
	h.files = fs
	for i := range fs.Data {
		e := &fs.Data[i]
		h.data[e.Entry.DataFile.FilePath] = e
		h.keys[e.Key()] = true
	}
	for _, e := range fs.Deletes {
		h.keys[e.Key()] = true
	}
	h.index = table.DeletesForTable(t.Metadata, fs)
	return h, nil
}

// headAt is the head of snap in t. A snapshot's manifests never change,
// so when snap is the snapshot of the head read last, that head's files
// serve again with t's metadata; otherwise the manifests are read.
func (x *executor) headAt(ctx context.Context, t *catalog.Table, snap *spec.Snapshot) (*head, error) {
	if c := x.last; c != nil && snap != nil && c.snap != nil && c.snap.SnapshotID == snap.SnapshotID {
		h := *c
		h.t, h.md, h.fio, h.snap = t, t.Metadata, t.IO, snap
		return &h, nil
	}
	h, err := loadHead(ctx, t, snap, x.schemas)
	if err != nil {
		return nil, err
	}
	x.last = h
	return h, nil
}

// baseFiles are the live files of snap, when they are those of the head
// read last (Change.BaseFiles): the commit that validated against that
// head builds on them instead of reading the manifests again.
func (x *executor) baseFiles(snap *spec.Snapshot) *table.FileSet {
	if c := x.last; c != nil && snap != nil && c.snap != nil && c.snap.SnapshotID == snap.SnapshotID {
		return c.files
	}
	return nil
}

// deletesFor are the deletes the rewrite of e must apply. Equality deletes
// newer than the plan's base are left out: the outputs keep the base's
// data sequence number, so those deletes still apply to them after the
// commit.
func (h *head) deletesFor(e table.FileEntry, baseSeq int64) table.Applicable {
	a := h.index.For(e)
	eqs := a.EqualityDeletes[:0:0]
	for _, d := range a.EqualityDeletes {
		if d.DataSequenceNumber() <= baseSeq {
			eqs = append(eqs, d)
		}
	}
	a.EqualityDeletes = eqs
	return a
}

// applicableKeys lists the keys of every delete in a.
func applicableKeys(a table.Applicable) []table.FileKey {
	var out []table.FileKey
	if a.DV != nil {
		out = append(out, a.DV.Key())
	}
	for _, d := range a.PositionDeletes {
		out = append(out, d.Key())
	}
	for _, d := range a.EqualityDeletes {
		out = append(out, d.Key())
	}
	return out
}

// scopedTo reports whether a position delete or DV can only apply to path.
func scopedTo(df *manifest.DataFile, path string) bool {
	return df.ReferencedDataFile != nil && *df.ReferencedDataFile == path
}
