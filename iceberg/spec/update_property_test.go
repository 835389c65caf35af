package spec

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// snapshotModel is what a correct ApplyUpdates must produce for sequences
// of add-snapshot and set-snapshot-ref, computed independently.
type snapshotModel struct {
	lastSeq int64
	nextRow int64
	current *int64
	log     []SnapshotLogEntry
	ids     []int64
}

// TestApplyRandomSnapshotSequences applies random commits (some invalid)
// and checks last-sequence-number, next-row-id and the snapshot-log
// against the model after every one.
func TestApplyRandomSnapshotSequences(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			runSnapshotSequence(t, rand.New(rand.NewPCG(seed, 7)), 60)
		})
	}
}

func runSnapshotSequence(t *testing.T, rng *rand.Rand, steps int) {
	m := newTestTable(t, 3)
	var model snapshotModel
	now := m.LastUpdatedMS
	nextID := int64(1)

	for step := 0; step < steps; step++ {
		now += rng.Int64N(5000) + 1
		var ups []Update
		addedNow := map[int64]bool{}
		var mainSets []int64
		wantFail := false
		seq, row := model.lastSeq, model.nextRow
		cur := model.current

		for n := 1 + rng.IntN(3); n > 0; n-- {
			switch k := rng.IntN(10); {
			case k < 5: // add a snapshot
				id := nextID
				nextID++
				seq++
				first := row + rng.Int64N(3)
				switch rng.IntN(12) {
				case 0:
					wantFail = true
					seq = model.lastSeq // reused sequence number
				case 1:
					if row > 0 {
						wantFail = true
						first = row - 1
					}
				}
				added := rng.Int64N(100)
				ups = append(ups, AddSnapshot{v3Snapshot(id, cur, seq, now-1, first, added)})
				row = first + added
				addedNow[id] = true
				if rng.IntN(2) == 0 { // and make it current
					ups = append(ups, mainRef(id))
					mainSets = append(mainSets, id)
					cur = &id
				}
			case k < 8 && len(model.ids) > 0: // move main (rollback or fast-forward)
				id := model.ids[rng.IntN(len(model.ids))]
				ups = append(ups, mainRef(id))
				mainSets = append(mainSets, id)
				cur = &id
			case len(model.ids) > 0: // move a side branch or tag
				id := model.ids[rng.IntN(len(model.ids))]
				name, typ := "b1", RefTypeBranch
				if rng.IntN(2) == 0 {
					name, typ = "t1", RefTypeTag
				}
				ups = append(ups, SetSnapshotRef{RefName: name, Ref: SnapshotRef{SnapshotID: id, Type: typ}})
			}
		}
		if len(ups) == 0 {
			continue
		}
		before := mustMarshal(t, m)
		got, err := ApplyUpdates(m, ups, ApplyOptions{Now: msTime(now)})
		if wantFail {
			if !errors.Is(err, ErrRequirementFailed) {
				t.Fatalf("step %d: want a retryable failure, got %v", step, err)
			}
			if !bytes.Equal(before, mustMarshal(t, m)) {
				t.Fatalf("step %d: failed commit changed its base", step)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}

		// Advance the model.
		last := model.current
		for _, id := range mainSets {
			if last == nil || *last != id {
				model.log = append(model.log, SnapshotLogEntry{TimestampMS: now, SnapshotID: id})
				v := id
				last = &v
			}
		}
		model.log = dropIntermediate(model.log, addedNow, last)
		model.current = last
		model.lastSeq, model.nextRow = seq, row
		for id := range addedNow {
			model.ids = append(model.ids, id)
		}

		checkModel(t, step, got, &model)
		if step%10 == 0 {
			checkRoundTrip(t, got)
		}
		m = got
	}
}

func dropIntermediate(log []SnapshotLogEntry, added map[int64]bool, current *int64) []SnapshotLogEntry {
	var out []SnapshotLogEntry
	for _, e := range log {
		if added[e.SnapshotID] && (current == nil || e.SnapshotID != *current) {
			continue
		}
		out = append(out, e)
	}
	return out
}

func checkModel(t *testing.T, step int, m *TableMetadata, model *snapshotModel) {
	t.Helper()
	if m.LastSequenceNumber != model.lastSeq {
		t.Fatalf("step %d: last-sequence-number %d, want %d", step, m.LastSequenceNumber, model.lastSeq)
	}
	maxSeq := int64(0)
	for _, s := range m.Snapshots {
		maxSeq = max(maxSeq, s.SequenceNumber)
		if end := *s.FirstRowID + *s.AddedRows; end > *m.NextRowID {
			t.Fatalf("step %d: snapshot %d uses row ids up to %d, past next-row-id %d", step, s.SnapshotID, end, *m.NextRowID)
		}
	}
	if maxSeq != m.LastSequenceNumber {
		t.Fatalf("step %d: highest snapshot sequence number %d != last-sequence-number %d", step, maxSeq, m.LastSequenceNumber)
	}
	if *m.NextRowID != model.nextRow {
		t.Fatalf("step %d: next-row-id %d, want %d", step, *m.NextRowID, model.nextRow)
	}
	if !reflect.DeepEqual(m.CurrentSnapshotID, model.current) {
		t.Fatalf("step %d: current snapshot %v, want %v", step, m.CurrentSnapshotID, model.current)
	}
	if len(m.SnapshotLog) != len(model.log) || (len(model.log) > 0 && !reflect.DeepEqual(m.SnapshotLog, model.log)) {
		t.Fatalf("step %d: snapshot-log\n got %+v\nwant %+v", step, m.SnapshotLog, model.log)
	}
	for i := 1; i < len(m.SnapshotLog); i++ {
		if m.SnapshotLog[i].TimestampMS < m.SnapshotLog[i-1].TimestampMS {
			t.Fatalf("step %d: snapshot-log out of order at %d", step, i)
		}
	}
	if n := len(m.SnapshotLog); n > 0 && m.SnapshotLog[n-1].SnapshotID != *m.CurrentSnapshotID {
		t.Fatalf("step %d: last snapshot-log entry %d is not the current snapshot %d", step, m.SnapshotLog[n-1].SnapshotID, *m.CurrentSnapshotID)
	}
}
