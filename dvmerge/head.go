package dvmerge

import (
	"context"
	"fmt"
	"slices"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// head is a branch head's live files with every delete's candidates: the
// state a partition is merged against, and the one a commit validates on.
type head struct {
	t     *catalog.Table
	snap  *spec.Snapshot
	data  map[string]table.FileEntry
	order []string // data file paths in manifest order
	dels  map[table.FileKey]table.FileEntry
	cands map[string]table.Candidates // by data file path
	// appliesTo lists, for each live delete file, the live data files it
	// could apply to by sequence number and partition; empty = dangling.
	appliesTo map[table.FileKey][]string
}

func loadHead(ctx context.Context, t *catalog.Table, snap *spec.Snapshot) (*head, error) {
	h := &head{t: t, snap: snap, data: map[string]table.FileEntry{}, dels: map[table.FileKey]table.FileEntry{},
		cands: map[string]table.Candidates{}, appliesTo: map[table.FileKey][]string{}}
	fs := &table.FileSet{}
	if snap != nil {
		var err error
		// Column metrics are most of an entry's memory and a merge never
		// looks at them; these entries are never written to a manifest.
		if fs, err = table.LiveFilesWith(ctx, t.IO, snap, table.WalkOptions{SkipMetrics: true}); err != nil {
			return nil, fmt.Errorf("read live files of snapshot %d: %w", snap.SnapshotID, err)
		}
	}
	ix := table.DeletesForTable(t.Metadata, fs)
	for _, e := range fs.Deletes {
		h.dels[e.Key()] = e
		h.appliesTo[e.Key()] = nil
	}
	for _, e := range fs.Data {
		path := e.Entry.DataFile.FilePath
		h.data[path] = e
		h.order = append(h.order, path)
		c := ix.Candidates(e)
		h.cands[path] = c
		for _, list := range [][]table.FileEntry{c.DVs, c.PositionDeletes, c.EqualityDeletes} {
			for _, d := range list {
				h.appliesTo[d.Key()] = append(h.appliesTo[d.Key()], path)
			}
		}
	}
	return h, nil
}

// needsWork reports whether a data file's deletes are to be merged: it
// has position-delete files, more than one DV, or (with equality)
// equality deletes. A lone DV is already what the merge would write.
func needsWork(c table.Candidates, opts Options) bool {
	return len(c.PositionDeletes) > 0 || len(c.DVs) > 1 || (opts.Equality && len(c.EqualityDeletes) > 0)
}

// candidateKeys lists the keys of the deletes a merge of c reads, sorted:
// if they change, the merge is stale.
func candidateKeys(c table.Candidates, opts Options) []table.FileKey {
	var out []table.FileKey
	for _, d := range c.DVs {
		out = append(out, d.Key())
	}
	for _, d := range c.PositionDeletes {
		out = append(out, d.Key())
	}
	if opts.Equality {
		for _, d := range c.EqualityDeletes {
			out = append(out, d.Key())
		}
	}
	slices.SortFunc(out, compareKeys)
	return out
}

func compareKeys(a, b table.FileKey) int {
	if a.Path != b.Path {
		if a.Path < b.Path {
			return -1
		}
		return 1
	}
	switch {
	case a.ContentOffset < b.ContentOffset:
		return -1
	case a.ContentOffset > b.ContentOffset:
		return 1
	}
	return 0
}
