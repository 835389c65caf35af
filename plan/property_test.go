package plan

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/icectl/icectl/iceberg/table"
)

// randomInput builds a table of random small and large files over a few
// partitions of two specs, with random DVs, position and equality deletes.
func randomInput(rng *rand.Rand) *Input {
	var data, deletes []table.FileEntry
	nParts := 1 + rng.IntN(6)
	n := rng.IntN(120)
	for i := range n {
		var specID int32
		var part []any
		switch k := rng.IntN(nParts); {
		case k%3 == 2:
			specID, part = 1, []any{fmt.Sprint("p", k), int32(20000 + k)}
		default:
			specID, part = 0, []any{fmt.Sprint("p", k)}
		}
		if rng.IntN(10) == 0 {
			part = make([]any, len(part)) // null partition values
		}
		size := int64(1+rng.IntN(300)) * mib
		records := int64(1 + rng.IntN(10000))
		seq := int64(1 + rng.IntN(5))
		data = append(data, dataFile(path(i), specID, part, size, records, seq))
		switch rng.IntN(6) {
		case 0:
			deletes = append(deletes, dv("s3://d/dv.puffin", int64(4+i*50), specID, part, records/int64(1+rng.IntN(4)), seq+1, path(i)))
		case 1:
			deletes = append(deletes, posDelete(fmt.Sprintf("s3://d/fs%d.parquet", i), specID, part, 1+int64(rng.IntN(100)), seq+int64(rng.IntN(2)), path(i)))
		case 2:
			deletes = append(deletes, posDelete(fmt.Sprintf("s3://d/ps%d.parquet", i), specID, part, 3, int64(rng.IntN(7)), ""))
		case 3:
			deletes = append(deletes, eqDelete(fmt.Sprintf("s3://d/eq%d.parquet", i), specID, part, 3, int64(rng.IntN(7))))
		}
	}
	return testInput(data, deletes)
}

func randomOptions(rng *rand.Rand) Options {
	o := Options{TargetFileSize: int64(32+rng.IntN(200)) * mib}
	o.MaxFileGroupSize = int64(50+rng.IntN(2000)) * mib
	o.MinInputFiles = 1 + rng.IntN(6)
	o.JobOrder = []string{"", "bytes-asc", "bytes-desc", "files-asc", "files-desc"}[rng.IntN(5)]
	if rng.IntN(3) == 0 {
		n := 1 + rng.IntN(60)
		o.MaxFilesToRewrite = &n
	}
	if rng.IntN(4) == 0 {
		n := rng.IntN(3)
		o.DeleteFileThreshold = &n
	}
	if rng.IntN(5) == 0 {
		o.MaxFileGroupInputFiles = int64(1 + rng.IntN(10))
	}
	o.RewriteAll = rng.IntN(8) == 0
	return o
}

func TestPlanProperties(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		in := randomInput(rng)
		o := randomOptions(rng)
		r, err := o.Resolve(in.Metadata)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		p, err := New(in, r, testNow)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		checkProperties(t, seed, in, r, p)

		// Same input in another order: byte-identical plan.
		want, _ := p.MarshalJSON()
		rng.Shuffle(len(in.Data), func(i, j int) { in.Data[i], in.Data[j] = in.Data[j], in.Data[i] })
		rng.Shuffle(len(in.Deletes), func(i, j int) { in.Deletes[i], in.Deletes[j] = in.Deletes[j], in.Deletes[i] })
		q, err := New(in, r, testNow)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := q.MarshalJSON()
		if !bytes.Equal(got, want) {
			t.Fatalf("seed %d: plan depends on input order", seed)
		}
	}
}

func checkProperties(t *testing.T, seed uint64, in *Input, r Resolved, p *Plan) {
	t.Helper()
	live := map[string]table.FileEntry{}
	for _, e := range in.Data {
		live[e.Entry.DataFile.FilePath] = e
	}
	seen := map[string]bool{}
	for _, g := range p.Groups {
		for _, f := range g.Inputs {
			seen[f.Path] = true
		}
	}
	ix := table.DeletesForTable(in.Metadata, &table.FileSet{Deletes: in.Deletes})
	applies, left := stillApplies(in, seen, ix)
	inGroup := map[string]bool{}
	files := 0
	for i, g := range p.Groups {
		if g.Index != i+1 {
			t.Fatalf("seed %d: group %d has index %d", seed, i, g.Index)
		}
		if len(g.Inputs) == 0 {
			t.Fatalf("seed %d: empty group", seed)
		}
		var size int64
		for _, f := range g.Inputs {
			if inGroup[f.Path] {
				t.Fatalf("seed %d: %s in two groups", seed, f.Path)
			}
			inGroup[f.Path] = true
			e, ok := live[f.Path]
			if !ok {
				t.Fatalf("seed %d: %s is not a live file", seed, f.Path)
			}
			df := e.Entry.DataFile
			if int(df.SpecID) != g.SpecID || !tupleEqual(df.Partition, g.PartitionTuple) {
				t.Fatalf("seed %d: %s (spec %d %v) in group of spec %d %v", seed, f.Path, df.SpecID, df.Partition, g.SpecID, g.PartitionTuple)
			}
			size += f.SizeBytes
		}
		if size > r.MaxFileGroupSize && len(g.Inputs) > 1 {
			t.Fatalf("seed %d: group of %d bytes over the max %d", seed, size, r.MaxFileGroupSize)
		}
		if int64(len(g.Inputs)) > r.MaxFileGroupInputFiles {
			t.Fatalf("seed %d: group of %d files over the max %d", seed, len(g.Inputs), r.MaxFileGroupInputFiles)
		}
		if g.ExpectedOutputFiles < 1 {
			t.Fatalf("seed %d: %d outputs", seed, g.ExpectedOutputFiles)
		}
		if i > 0 {
			prev := p.Groups[i-1]
			bad := false
			switch r.JobOrder {
			case JobOrderBytesAsc:
				bad = prev.InputBytes > g.InputBytes
			case JobOrderBytesDesc:
				bad = prev.InputBytes < g.InputBytes
			case JobOrderFilesAsc:
				bad = prev.InputFiles > g.InputFiles
			case JobOrderFilesDesc:
				bad = prev.InputFiles < g.InputFiles
			}
			if bad {
				t.Fatalf("seed %d: job order %s violated at group %d", seed, r.JobOrder, i+1)
			}
		}
		files += len(g.Inputs)
		// Every retired delete is safe: it applies to no file that stays.
		for _, d := range g.Retire {
			checkRetireSafe(t, seed, d, applies, left)
		}
	}
	if r.MaxFilesToRewrite != nil && files > *r.MaxFilesToRewrite {
		t.Fatalf("seed %d: %d files over max-files-to-rewrite %d", seed, files, *r.MaxFilesToRewrite)
	}
	for _, c := range p.RetireAfterGroups {
		checkRetireSafe(t, seed, c.Delete, applies, left)
	}
}

// stillApplies returns the keys of delete files that apply to some data
// file left out of the plan, and the paths of those files.
func stillApplies(in *Input, inPlan map[string]bool, ix *table.DeleteIndex) (map[table.FileKey]string, map[string]bool) {
	keys := map[table.FileKey]string{}
	live := map[string]bool{}
	for _, e := range in.Data {
		p := e.Entry.DataFile.FilePath
		if inPlan[p] {
			continue
		}
		live[p] = true
		a := ix.For(e)
		if a.DV != nil {
			keys[a.DV.Key()] = p
		}
		for _, x := range append(a.PositionDeletes, a.EqualityDeletes...) {
			keys[x.Key()] = p
		}
	}
	return keys, live
}

// checkRetireSafe checks that a retired delete applies to no data file
// left out of the plan and references none.
func checkRetireSafe(t *testing.T, seed uint64, d DeleteRef, applies map[table.FileKey]string, live map[string]bool) {
	t.Helper()
	key := table.PathKey(d.Path)
	if d.ContentOffset != nil {
		key.ContentOffset = *d.ContentOffset
	}
	if f, ok := applies[key]; ok {
		t.Fatalf("seed %d: retired %s still applies to live file %s", seed, key, f)
	}
	if d.ReferencedDataFile != nil && live[*d.ReferencedDataFile] {
		t.Fatalf("seed %d: retired %s references live file %s", seed, key, *d.ReferencedDataFile)
	}
}
