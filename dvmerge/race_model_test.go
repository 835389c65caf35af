package dvmerge

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// raceModel is a table's data files and the positions deleted in each.
type raceModel struct {
	files   []manifest.DataFile
	base    map[string]int64 // first id of each file (ids are base+pos)
	deleted map[string]map[int64]bool
}

func (m *raceModel) ids() []int64 {
	var out []int64
	for _, f := range m.files {
		for p := range f.RecordCount {
			if !m.deleted[f.FilePath][p] {
				out = append(out, m.base[f.FilePath]+p)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestMergeRaces runs 50 seeded races in which, between the plan and the
// merge's commit, a writer deletes rows of a data file (with one DV
// holding every earlier delete of it, as the spec requires), a
// compaction rewrites a data file without its deleted rows, or both.
// After each: the rows are exactly the model's (no deleted row back, no
// row lost), and the delete invariants hold.
func TestMergeRaces(t *testing.T) {
	for i := range 50 {
		t.Run(fmt.Sprintf("race%02d", i), func(t *testing.T) { runMergeRace(t, uint64(i)) })
	}
}

func runMergeRace(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0xd5))
	partitioned := seed%2 == 0
	e := newEnv(t, partitioned)
	m := &raceModel{base: map[string]int64{}, deleted: map[string]map[int64]bool{}}
	cats := []string{"red"}
	if partitioned {
		cats = append(cats, "blue")
	}
	next := int64(0)
	byCat := map[string][]manifest.DataFile{}
	for _, c := range cats {
		for j := range 3 {
			n := int64(5 + rng.IntN(6))
			f := e.writeData(t, fmt.Sprintf("%s-%d", c, j), c, seq(next, n)...)
			m.base[f.FilePath], m.deleted[f.FilePath] = next, map[int64]bool{}
			next += 100
			m.files = append(m.files, f)
			byCat[c] = append(byCat[c], f)
		}
	}
	e.Append(t, nil, m.files...)
	// v2 deletes: per partition one partition-scoped file over random
	// files, and a file-scoped one.
	var dels []manifest.DataFile
	for _, c := range cats {
		multi := map[string][]int64{}
		for _, f := range byCat[c] {
			if rng.IntN(3) > 0 {
				p := rng.Int64N(f.RecordCount)
				multi[f.FilePath] = append(multi[f.FilePath], p)
				m.deleted[f.FilePath][p] = true
			}
		}
		if len(multi) > 0 {
			dels = append(dels, e.writePos(t, c+"-multi", byCat[c][0], multi, false))
		}
		f := byCat[c][rng.IntN(3)]
		p := rng.Int64N(f.RecordCount)
		m.deleted[f.FilePath][p] = true
		dels = append(dels, e.writePos(t, c+"-scoped", f, map[string][]int64{f.FilePath: {p}}, true))
	}
	e.AddDeletes(t, nil, dels...)
	e.upgrade(t)

	mode := rng.IntN(3) // 0: deleting writer, 1: compaction, 2: both
	victim := m.files[rng.IntN(len(m.files))]
	other := m.files[rng.IntN(len(m.files))]
	hook := func() {
		if mode != 1 {
			// The writer's DV holds every position deleted so far plus a new one.
			p := rng.Int64N(other.RecordCount)
			m.deleted[other.FilePath][p] = true
			var ps []int64
			for q := range m.deleted[other.FilePath] {
				ps = append(ps, q)
			}
			e.AddDeletes(t, nil, e.writeDVs(t, fmt.Sprintf("writer-%d", seed), other, map[string][]int64{other.FilePath: ps})...)
		}
		if mode != 0 {
			var keep []int64
			for p := range victim.RecordCount {
				if !m.deleted[victim.FilePath][p] {
					keep = append(keep, m.base[victim.FilePath]+p)
				}
			}
			out := e.writeData(t, fmt.Sprintf("compacted-%d", seed), catOf(victim, partitioned), keep...)
			ch := table.Change{Operation: spec.OperationReplace, AddData: []manifest.DataFile{out}, Remove: []table.FileKey{table.PathKey(victim.FilePath)}}
			for _, d := range liveFiles(t, e).Deletes {
				if df := d.Entry.DataFile; table.IsDV(&df) && *df.ReferencedDataFile == victim.FilePath {
					ch.Remove = append(ch.Remove, d.Key())
				}
			}
			e.Commit(t, nil, ch)
			delete(m.deleted, victim.FilePath)
			m.files = slices.DeleteFunc(m.files, func(f manifest.DataFile) bool { return f.FilePath == victim.FilePath })
			m.files = append(m.files, out)
			m.base[out.FilePath], m.deleted[out.FilePath] = keep[0], map[int64]bool{}
			out.RecordCount = int64(len(keep))
			// Ids of the compacted file are not base+pos: give each its own entry.
			m.files = m.files[:len(m.files)-1]
			for i, id := range keep {
				f := out
				f.FilePath = fmt.Sprintf("%s#%d", out.FilePath, i)
				f.RecordCount = 1
				m.files = append(m.files, f)
				m.base[f.FilePath], m.deleted[f.FilePath] = id, map[int64]bool{}
			}
		}
	}
	opts := e.options()
	opts.PartialProgress = rng.IntN(2) == 0
	want := func() []int64 { return m.ids() }
	e.mergeRacing(t, opts, hook)
	if got := e.ids(t); !slices.Equal(got, want()) {
		t.Fatalf("seed %d mode %d: ids %v, want %v", seed, mode, got, want())
	}
	checkMerged(t, e)
	if hasIcebergGo() {
		if g := e.icebergGo(t); g.RowCount != int64(len(want())) {
			t.Errorf("iceberg-go reads %d rows, want %d", g.RowCount, len(want()))
		}
	}
}

func catOf(f manifest.DataFile, partitioned bool) string {
	if partitioned {
		return f.Partition[0].(string)
	}
	return "red"
}
