package compact_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/icectl/icectl/internal/testing/testenv"
)

// TestCompactCLIWhereAnyColumn runs `icectl compact --where` with
// predicates on source columns of a table with two specs, (cat) and
// (cat, day(ts)): ts projects onto the day partitions of spec 1 and is
// decided by bounds for spec 0; id, which no spec partitions, is decided by
// bounds alone. Only the files that may hold matching rows are rewritten,
// and the table reads the same before and after.
func TestCompactCLIWhereAnyColumn(t *testing.T) {
	bin := testenv.Icectl(t)
	f := newFixture(t, 2, 31, smallFiles)
	// Spec 0 files hold rows of five days (see rowOf).
	f.must(f.appendFiles(f.partitions(3), 3, 20))
	f.addDaySpec()
	parts := f.partitions(6) // three cats on fxDay0 and on the day after
	f.must(f.appendFiles(parts, 6, 30))
	secondIDs := f.next // ids of the next append start here
	f.must(f.appendFiles(parts, 6, 30))

	withGo := os.Getenv(testenv.IcebergGoReader) != ""
	run := func(where string, keep func(specID int32, day int32, maxID int64) bool) {
		t.Helper()
		var b before
		if withGo {
			b = snapshotBefore(t, f, false)
		}
		own := icectlChecksum(t, f)
		type fileInfo struct {
			spec  int32
			day   int32
			maxID int64
		}
		files := map[string]fileInfo{}
		for _, e := range mustLive(t, f).Data {
			df := &e.Entry.DataFile
			fi := fileInfo{spec: df.SpecID, day: -1}
			if df.SpecID == 1 {
				fi.day = df.Partition[1].(int32)
			}
			hi := df.UpperBounds[fID]
			if len(hi) != 8 {
				t.Fatalf("%s has no id upper bound", df.FilePath)
			}
			fi.maxID = int64(binary.LittleEndian.Uint64(hi))
			files[df.FilePath] = fi
		}
		compactJSON(t, bin, f, "--rewrite-all", "--where", where)
		after := map[string]bool{}
		for _, e := range mustLive(t, f).Data {
			after[e.Entry.DataFile.FilePath] = true
		}
		kept, rewritten := 0, 0
		for p, fi := range files {
			want := keep(fi.spec, fi.day, fi.maxID)
			if after[p] != want {
				t.Errorf("--where %q: %s (spec %d, day %d, ids up to %d) still live = %v, want %v", where, p, fi.spec, fi.day, fi.maxID, after[p], want)
			}
			if want {
				kept++
			} else {
				rewritten++
			}
		}
		if kept == 0 || rewritten == 0 {
			t.Fatalf("--where %q: %d files kept, %d rewritten: the case tests nothing", where, kept, rewritten)
		}
		if got := icectlChecksum(t, f); got != own {
			t.Errorf("--where %q: icectl scan %+v after, %+v before", where, got, own)
		}
		if withGo {
			checkUnchanged(t, f, b, false)
		}
	}
	// ts >= the day after fxDay0: spec 1 files of fxDay0 cannot match;
	// spec 0 files hold rows of several days, so their bounds keep them.
	nextDay := time.Unix((fxDay0+1)*86400, 0).UTC().Format("2006-01-02")
	run("ts >= '"+nextDay+"'", func(specID, day int32, _ int64) bool {
		return specID == 1 && day == fxDay0
	})
	// id >= secondIDs: files of spec 0, of the first spec-1 append, and
	// the first run's outputs of spec 0 end below it.
	run("id >= "+strconv.FormatInt(secondIDs, 10), func(_, _ int32, maxID int64) bool {
		return maxID < secondIDs
	})
}

// compactJSON runs `icectl compact TABLE ARGS... --output json` on f,
// failing the test unless it succeeds and prints valid JSON.
func compactJSON(t *testing.T, bin string, f *fixture, extra ...string) []byte {
	t.Helper()
	args := append(append([]string{"compact", f.tableName()}, extra...), "--output", "json")
	cmd := exec.Command(bin, append(args, cliArgs(f)...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("icectl %v: %v\n%s", args, err, stderr.String())
	}
	if !json.Valid(out) {
		t.Errorf("--output json printed invalid JSON:\n%s", out)
	}
	return out
}
