package dvmerge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/manifest"
)

func localPath(uri string) string { return strings.TrimPrefix(uri, "file://") }

// puffinFiles lists the Puffin files under the table's directory.
func puffinFiles(t *testing.T, e *env) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(e.Cat.Dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".puffin") {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBadInput: each malformed delete file stops the run with an error
// naming it; nothing is committed and no file is left behind.
func TestBadInput(t *testing.T) {
	cases := []struct {
		name string
		v2   bool // added before the upgrade (position-delete files)
		// build adds the bad delete to a v3 table with data file d1 (ids
		// 0..9) that also has a good position-delete file, and returns
		// the path the error must name.
		build func(t *testing.T, e *env, d1 manifest.DataFile) string
	}{
		{"corrupt puffin", false, func(t *testing.T, e *env, d1 manifest.DataFile) string {
			dvs := e.writeDVs(t, "corrupt", d1, map[string][]int64{d1.FilePath: {4}})
			p := localPath(dvs[0].FilePath)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			data[*dvs[0].ContentOffset+10] ^= 0xff
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			e.AddDeletes(t, nil, dvs...)
			return dvs[0].FilePath
		}},
		{"DV cardinality differs from its manifest entry", false, func(t *testing.T, e *env, d1 manifest.DataFile) string {
			dvs := e.writeDVs(t, "card", d1, map[string][]int64{d1.FilePath: {4, 6}})
			dvs[0].RecordCount = 3
			e.AddDeletes(t, nil, dvs...)
			return dvs[0].FilePath
		}},
		{"position delete outside the table", true, func(t *testing.T, e *env, d1 manifest.DataFile) string {
			pos := e.writePos(t, "outside", d1, map[string][]int64{d1.FilePath: {4}, "file:///elsewhere/other.parquet": {1}}, false)
			e.AddDeletes(t, nil, pos)
			return "file:///elsewhere/other.parquet"
		}},
		{"truncated position-delete file", true, func(t *testing.T, e *env, d1 manifest.DataFile) string {
			pos := e.writePos(t, "truncated", d1, map[string][]int64{d1.FilePath: {4, 5, 6}}, false)
			p := localPath(pos.FilePath)
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(p, st.Size()/2); err != nil {
				t.Fatal(err)
			}
			e.AddDeletes(t, nil, pos)
			return pos.FilePath
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, false)
			d1 := e.writeData(t, "d1", "x", seq(0, 10)...)
			e.Append(t, nil, d1)
			e.AddDeletes(t, nil, e.writePos(t, "good", d1, map[string][]int64{d1.FilePath: {1}}, true))
			var name string
			if tc.v2 {
				name = tc.build(t, e, d1)
			}
			e.upgrade(t)
			if !tc.v2 {
				name = tc.build(t, e, d1)
			}
			tbl := e.Load(t)
			snap := *tbl.Metadata.CurrentSnapshotID
			puffins := puffinFiles(t, e)
			_, err := e.merge(t, e.options())
			if err == nil {
				t.Fatal("dv merge accepted the bad input")
			}
			t.Logf("error: %v", err)
			if !strings.Contains(err.Error(), name) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q does not name %s on one line", err, name)
			}
			if got := *e.Load(t).Metadata.CurrentSnapshotID; got != snap {
				t.Errorf("a snapshot was committed: %d -> %d", snap, got)
			}
			if got := puffinFiles(t, e); len(got) != len(puffins) {
				t.Errorf("puffin files %v -> %v", puffins, got)
			}
		})
	}
}

// With partial progress a bad partition fails alone: the others commit.
func TestPartialProgressFailsOnePartition(t *testing.T) {
	e := newEnv(t, true)
	v2Debt(t, e, "blue")
	red := e.writeData(t, "red", "red", seq(500, 10)...)
	e.Append(t, nil, red)
	e.AddDeletes(t, nil, e.writePos(t, "red-pos", red, map[string][]int64{red.FilePath: {1}}, false))
	e.upgrade(t)
	bad := e.writeDVs(t, "bad", red, map[string][]int64{red.FilePath: {2, 3}})
	bad[0].RecordCount = 5
	e.AddDeletes(t, nil, bad...)

	_, err := e.merge(t, e.options())
	if err == nil || !strings.Contains(err.Error(), "bad.puffin") {
		t.Fatalf("without partial progress: %v", err)
	}
	opts := e.options()
	opts.PartialProgress = true
	rep, err := e.merge(t, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() != 1 || rep.Commits != 1 || rep.DVsWritten != 3 {
		t.Errorf("report = %+v", rep.Partitions)
	}
	if n := countKind(liveFiles(t, e), false, manifest.ContentPositionDeletes); n != 1 {
		t.Errorf("%d position-delete files remain, want red's alone", n)
	}
}

// --max-duration starts no partition once it has passed; what is done is
// committed and the rest is left for the next run.
func TestMaxDuration(t *testing.T) {
	e := newEnv(t, true)
	for _, c := range []string{"a", "b", "c"} {
		v2Debt(t, e, c)
	}
	e.upgrade(t)
	opts := e.options()
	opts.PartialProgress = true
	opts.MaxDuration = time.Minute
	now := time.Unix(1_700_000_000, 0)
	calls := 0
	opts.Now = func() time.Time {
		calls++
		if calls > 2 { // the start, then the first partition's check
			return now.Add(time.Hour)
		}
		return now
	}
	rep := e.mustMerge(t, opts)
	if rep.LeftForNextRun != 2 || rep.Commits != 1 {
		t.Errorf("report = %+v", rep.Partitions)
	}
	rep = e.mustMerge(t, e.options())
	if rep.Commits != 1 || len(rep.Partitions) != 2 {
		t.Errorf("next run = %+v", rep.Partitions)
	}
	checkMerged(t, e)
}
