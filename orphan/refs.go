package orphan

import (
	"context"
	"fmt"
	"strings"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/shared/extsort"
)

// refSet is the referenced set of one table version, sorted by key.
type refSet struct {
	s *extsort.Sorter
}

func (r *refSet) Close() error { return r.s.Close() }

// buildRefs collects every path the table version t references: the files
// reachable from every snapshot in the metadata (all refs, all history;
// manifest entries of every status count, so a file a retained snapshot
// still lists as deleted is kept), the current and logged metadata files,
// version-hint.text, and all statistics and partition-statistics files.
// Any file that cannot be read is an error: a partial set would make live
// files look orphaned.
func buildRefs(ctx context.Context, t *catalog.Table, tempDir string, budget int) (*refSet, error) {
	md := t.Metadata
	rs := &refSet{s: extsort.New(tempDir, budget)}
	// A file listed by many manifests (or snapshots) is one reference.
	rs.s.Unique = true
	var buf []byte
	add := func(p string) error {
		if p == "" {
			return nil
		}
		if err := checkPath(p); err != nil {
			return fmt.Errorf("referenced %w", err)
		}
		buf = refRecord(buf, p)
		return rs.s.Add(buf)
	}
	fixed := []string{t.MetadataLocation,
		catalog.MetadataDir(md) + "/version-hint.text",
		strings.TrimRight(md.Location, "/") + "/metadata/version-hint.text"}
	for _, e := range md.MetadataLog {
		fixed = append(fixed, e.MetadataFile)
	}
	for _, s := range md.Statistics {
		fixed = append(fixed, s.StatisticsPath)
	}
	for _, s := range md.PartitionStatistics {
		fixed = append(fixed, s.StatisticsPath)
	}
	for _, p := range fixed {
		if err := add(p); err != nil {
			rs.Close()
			return nil, err
		}
	}
	ids := make([]int64, len(md.Snapshots))
	for i, s := range md.Snapshots {
		ids[i] = s.SnapshotID
	}
	// WalkReachable never calls fn concurrently. Every entry status
	// counts: a file a retained snapshot lists as DELETED is kept.
	err := table.WalkReachable(ctx, t.IO, md, ids, func(f table.ReachableFile) error {
		return add(f.Path)
	})
	if err != nil {
		rs.Close()
		return nil, fmt.Errorf("collect referenced files of %s: %w", t.Ident, err)
	}
	return rs, nil
}

// iter returns the references in key order.
func (r *refSet) iter() func() (Ref, bool, error) {
	it := r.s.Iter()
	return func() (Ref, bool, error) {
		rec, ok := it.Next()
		if !ok {
			return Ref{}, false, it.Err()
		}
		ref, err := parseRef(rec)
		return ref, err == nil, err
	}
}

// lookup answers "is this path referenced" for paths asked in ascending
// key order, with a cursor over the sorted set (a path before the cursor
// restarts it, so any order is correct, sorted order is fast). It is the
// Keep of the Deleter.
type lookup struct {
	refs     *refSet
	match    Matcher
	next     func() (Ref, bool, error)
	cur      Ref // first reference after group
	ok       bool
	err      error
	started  bool
	groupKey string
	group    []Ref // references with key groupKey
}

func newLookup(r *refSet, m Matcher) *lookup {
	return &lookup{refs: r, match: m}
}

// referenced reports whether path is referenced under an equivalent form.
// When the set cannot be read it answers true: keeping is the safe side.
func (l *lookup) referenced(path string) bool {
	key := pathKey(splitURI(path).path)
	if !l.started || key < l.groupKey {
		l.next = l.refs.iter()
		l.cur, l.ok, l.err = l.next()
		l.started = true
	} else if key == l.groupKey {
		return l.inGroup(path)
	}
	l.group = l.group[:0]
	for l.ok && l.cur.Key < key {
		l.cur, l.ok, l.err = l.next()
	}
	for l.ok && l.cur.Key == key {
		l.group = append(l.group, l.cur)
		l.cur, l.ok, l.err = l.next()
	}
	l.groupKey = key
	return l.inGroup(path)
}

func (l *lookup) inGroup(path string) bool {
	if l.err != nil {
		return true
	}
	for _, r := range l.group {
		if l.match.Same(path, r.Path) {
			return true
		}
	}
	return false
}
