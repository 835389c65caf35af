package spec

import (
	"errors"
	"fmt"
	"math"
	"reflect"
)

func (b *builder) addSnapshot(s Snapshot) error {
	m := b.m
	if _, exists := m.SnapshotByID(s.SnapshotID); exists {
		return fmt.Errorf("snapshot already exists for id: %d", s.SnapshotID)
	}
	if m.FormatVersion == 1 && s.SequenceNumber != 0 {
		return fmt.Errorf("snapshot %d has sequence number %d, but format v1 has no sequence numbers", s.SnapshotID, s.SequenceNumber)
	}
	if m.FormatVersion > 1 {
		if s.ManifestList == "" {
			return fmt.Errorf("snapshot %d has no manifest-list, required in format v%d", s.SnapshotID, m.FormatVersion)
		}
		if s.Operation() == "" {
			return fmt.Errorf("snapshot %d has no summary operation, required in format v%d", s.SnapshotID, m.FormatVersion)
		}
		// Java allows an older sequence number for a snapshot without a
		// parent (replace-table flows); icectl never makes those, so the
		// rule is kept strict.
		if s.SequenceNumber <= m.LastSequenceNumber {
			return fmt.Errorf("%w: cannot add snapshot %d with sequence number %d older than last sequence number %d",
				ErrRequirementFailed, s.SnapshotID, s.SequenceNumber, m.LastSequenceNumber)
		}
	}
	s = cloneSnapshot(s)
	if m.FormatVersion >= 3 {
		if err := b.assignRowIDs(s); err != nil {
			return err
		}
	}
	m.LastSequenceNumber = max(m.LastSequenceNumber, s.SequenceNumber)
	m.Snapshots = append(m.Snapshots, s)
	b.added[s.SnapshotID] = true
	return nil
}

// assignRowIDs applies the v3 row-lineage rules of an added snapshot.
//
// Java sets next-row-id += added-rows. When first-row-id is ahead of
// next-row-id that leaves next-row-id inside the range the snapshot used,
// so we set it to first-row-id + added-rows instead: the same value in the
// normal case (first-row-id == next-row-id), and never an id handed out
// twice otherwise.
func (b *builder) assignRowIDs(s Snapshot) error {
	next := *b.m.NextRowID
	switch {
	case s.FirstRowID == nil:
		return fmt.Errorf("cannot add snapshot %d: first-row-id is required in format v%d", s.SnapshotID, b.m.FormatVersion)
	case s.AddedRows == nil:
		return fmt.Errorf("cannot add snapshot %d: added-rows is required in format v%d", s.SnapshotID, b.m.FormatVersion)
	case *s.AddedRows < 0:
		return fmt.Errorf("cannot add snapshot %d: added-rows is negative: %d", s.SnapshotID, *s.AddedRows)
	case *s.FirstRowID < next:
		return fmt.Errorf("%w: cannot add snapshot %d, first-row-id is behind table next-row-id: %d < %d",
			ErrRequirementFailed, s.SnapshotID, *s.FirstRowID, next)
	case *s.AddedRows > math.MaxInt64-*s.FirstRowID:
		return fmt.Errorf("cannot add snapshot %d: first-row-id %d + added-rows %d overflows", s.SnapshotID, *s.FirstRowID, *s.AddedRows)
	}
	n := *s.FirstRowID + *s.AddedRows
	b.m.NextRowID = &n
	return nil
}

func (b *builder) setRef(name string, ref SnapshotRef) error {
	m := b.m
	if name == "" {
		return errors.New("ref name must not be empty")
	}
	if err := ref.validate(name); err != nil {
		return err
	}
	if name == MainBranch {
		if ref.Type != RefTypeBranch {
			return fmt.Errorf("cannot set %s to a %s, it must be a branch", MainBranch, ref.Type)
		}
		if ref.MaxRefAgeMS != nil {
			return fmt.Errorf("ref %q cannot have max-ref-age-ms: the main branch never expires", MainBranch)
		}
	}
	if existing, ok := m.Refs[name]; ok && reflect.DeepEqual(existing, ref) {
		return nil
	}
	if _, ok := m.SnapshotByID(ref.SnapshotID); !ok {
		return fmt.Errorf("cannot set %s to unknown snapshot: %d", name, ref.SnapshotID)
	}
	if name == MainBranch && (m.CurrentSnapshotID == nil || *m.CurrentSnapshotID != ref.SnapshotID) {
		id := ref.SnapshotID
		m.CurrentSnapshotID = &id
		m.SnapshotLog = append(m.SnapshotLog, SnapshotLogEntry{TimestampMS: b.nowMS, SnapshotID: id})
		if b.added[id] {
			b.mainSetToAdded = append(b.mainSetToAdded, id)
		}
	}
	m.Refs[name] = ref
	return nil
}

func (b *builder) removeRef(name string) {
	if name == MainBranch {
		b.m.CurrentSnapshotID = nil
	}
	delete(b.m.Refs, name)
}

// removeSnapshots drops the snapshots, their statistics and the refs that
// pointed at them, as Java's rewriteSnapshotsInternal. Unknown ids are
// ignored, as in Java. The snapshot-log is repaired in finish.
func (b *builder) removeSnapshots(ids []int64) {
	drop := map[int64]bool{}
	for _, id := range ids {
		if _, ok := b.m.SnapshotByID(id); ok {
			drop[id] = true
		}
	}
	if len(drop) == 0 {
		return
	}
	b.removedSnapshot = true
	kept := make([]Snapshot, 0, len(b.m.Snapshots))
	for _, s := range b.m.Snapshots {
		if !drop[s.SnapshotID] {
			kept = append(kept, s)
		}
	}
	b.m.Snapshots = kept
	b.m.Statistics = removeBySnapshot(b.m.Statistics, drop, func(s StatisticsFile) int64 { return s.SnapshotID })
	b.m.PartitionStatistics = removeBySnapshot(b.m.PartitionStatistics, drop, func(s PartitionStatisticsFile) int64 { return s.SnapshotID })
	for name, r := range b.m.Refs {
		if drop[r.SnapshotID] {
			b.removeRef(name)
		}
	}
}

// fixSnapshotLog is Java's updateSnapshotLog. Snapshots this call added
// and made current but then replaced as current are dropped from the log.
// When snapshots were removed, an entry for a missing snapshot clears the
// history before it: [(t1,s1),(t2,s2),(t3,s3)] without s2 must not read
// as s1 being current until t3.
func (b *builder) fixSnapshotLog() error {
	m := b.m
	intermediate := map[int64]bool{}
	for _, id := range b.mainSetToAdded {
		if m.CurrentSnapshotID == nil || id != *m.CurrentSnapshotID {
			intermediate[id] = true
		}
	}
	if len(intermediate) == 0 && !b.removedSnapshot {
		return nil
	}
	exists := make(map[int64]bool, len(m.Snapshots))
	for _, s := range m.Snapshots {
		exists[s.SnapshotID] = true
	}
	var log []SnapshotLogEntry
	for _, e := range m.SnapshotLog {
		switch {
		case exists[e.SnapshotID]:
			if !intermediate[e.SnapshotID] {
				log = append(log, e)
			}
		case b.removedSnapshot:
			log = nil
		}
	}
	if cur := m.CurrentSnapshotID; cur != nil && len(log) > 0 && log[len(log)-1].SnapshotID != *cur {
		return fmt.Errorf("cannot set invalid snapshot log: latest entry %d is not the current snapshot %d",
			log[len(log)-1].SnapshotID, *cur)
	}
	m.SnapshotLog = log
	return nil
}
