package expire

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/caturi"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/killrun"
	"github.com/icectl/icectl/internal/testing/testenv"
	"github.com/icectl/icectl/refs"
)

func TestMain(m *testing.M) {
	if ok, err := benchMain(); ok {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(testenv.Finish(m.Run()))
}

// crashFixture is a table whose expiry deletes thousands of files, so that
// deletion takes a good part of a run: rounds of an append of many data
// files and an overwrite that removes them all, a DV shared by two files,
// and a tag on an early snapshot.
type crashFixture struct {
	dir, backup string
	id          catalog.Ident
	olderThan   string
	before      state
}

func newCrashFixture(t *testing.T) *crashFixture {
	e, tbl := newEnv(t)
	for round := range 3 {
		var add []manifest.DataFile
		for i := range 500 {
			add = append(add, e.dataFile(t, tbl, fmt.Sprintf("r%d-%03d", round, i)))
		}
		tbl = e.Commit(t, tbl, table.Change{Operation: spec.OperationAppend, AddData: add})
		if round == 0 {
			tbl = e.Commit(t, tbl, table.Change{Operation: spec.OperationOverwrite, AddDeletes: e.dvs(t, tbl, "shared", []string{add[0].FilePath, add[1].FilePath})})
		}
		keep := e.dataFile(t, tbl, fmt.Sprintf("keep%d", round))
		rm := make([]table.FileKey, len(add))
		for i, d := range add {
			rm[i] = table.PathKey(d.FilePath)
		}
		tbl = e.Commit(t, tbl, table.Change{Operation: spec.OperationOverwrite, AddData: []manifest.DataFile{keep}, Remove: rm})
		if round == 0 {
			tbl = e.ref(t, tbl, refs.Create(spec.RefTypeTag, "month-end", nil, refs.Retention{}))
		}
	}
	time.Sleep(5 * time.Millisecond)
	tbl = e.Commit(t, tbl, table.Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{e.dataFile(t, tbl, "last")}})
	f := &crashFixture{dir: e.Cat.Dir, backup: t.TempDir(), id: e.ID,
		olderThan: fmt.Sprint(tbl.Metadata.Snapshots[len(tbl.Metadata.Snapshots)-1].TimestampMS)}
	f.before = capture(t, tbl, nil)
	e.Cat.Close()
	copyTree(t, f.dir, f.backup)
	return f
}

// copyTree copies the files under src to dst, modification times kept
// (the orphan pass of a re-run must see the fixture's files as old).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", src+"/.", dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
}

// restore puts the fixture back as it was built.
func (f *crashFixture) restore(t *testing.T) {
	t.Helper()
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(f.dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	copyTree(t, f.backup, f.dir)
}

func (f *crashFixture) catalogArgs() []string {
	return []string{"--catalog-uri", caturi.SQLiteURI(filepath.Join(f.dir, "catalog.db")), "--catalog-name", "test"}
}

func (f *crashFixture) expireCmd(bin string) *exec.Cmd {
	args := append([]string{"expire", f.id.String(), "--older-than", f.olderThan, "--max-concurrent-deletes", "1", "--wait", "1m"}, f.catalogArgs()...)
	// A killed run leaves its claim on the table until its lease ends: a
	// short lease, and --wait, let the next run take it over.
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "ICECTL_CLAIM_LEASE=2s")
	return cmd
}

func (f *crashFixture) load(t *testing.T) *catalog.Table {
	t.Helper()
	ctx := context.Background()
	cat, err := sqlcat.Open(ctx, catalog.Config{Name: "test", URI: caturi.SQLiteURI(filepath.Join(f.dir, "catalog.db"))})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	tbl, err := cat.LoadTable(ctx, f.id)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// checkSame fails unless every snapshot of the table lists the files it
// listed before the run and every file a snapshot reaches is there, byte
// for byte.
func (f *crashFixture) checkSame(t *testing.T) *catalog.Table {
	t.Helper()
	tbl := f.load(t)
	now := capture(t, tbl, nil)
	for id, live := range now.live {
		if fmt.Sprint(live) != fmt.Sprint(f.before.live[id]) {
			t.Errorf("snapshot %d reads differently", id)
		}
	}
	for p, h := range now.files {
		if f.before.files[p] != h {
			t.Errorf("%s changed", p)
		}
	}
	return tbl
}

// finished is the table's files once the job is done, metadata.json files
// left out (every run writes its own), and so are the hidden temporary
// files of a write the kill cut short (never visible under their name).
func (f *crashFixture) finished(t *testing.T) map[string][32]byte {
	t.Helper()
	out := tree(t, f.dir)
	maps.DeleteFunc(out, func(p string, _ [32]byte) bool {
		return strings.HasSuffix(p, ".metadata.json") || strings.HasPrefix(filepath.Base(p), ".")
	})
	return out
}

// count is the number of files finished counts, without reading them.
func (f *crashFixture) count(t *testing.T) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Join(f.dir, "wh"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".metadata.json") && !strings.HasPrefix(d.Name(), ".") {
			n++
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil // deleted while walking
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestExpireCrash SIGKILLs `icectl expire` at 32 random moments: half at
// any point of a run, half after it reported its commit, while it
// deletes. After each kill every snapshot the table has reads as before
// and no file one reaches is gone; a re-run of expire finishes the job
// (from the journal when the kill came after the commit): the files are
// exactly those of an uninterrupted run.
func TestExpireCrash(t *testing.T) {
	bin := testenv.Icectl(t)
	f := newCrashFixture(t)
	// Calibration: an uninterrupted run, timed to its commit line and to
	// its end.
	start := time.Now()
	cmd := f.expireCmd(bin)
	committed, log := f.watch(t, cmd)
	at := make(chan time.Duration, 1)
	go func() {
		<-committed
		at <- time.Since(start)
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("calibration run: %v\n%s", err, log)
	}
	full := time.Since(start)
	<-at
	f.checkSame(t)
	want := f.finished(t)
	if n := len(f.load(t).Metadata.Snapshots); n != 2 {
		t.Fatalf("calibration run kept %d snapshots, want main's head and the tag's", n)
	}
	f.restore(t)
	total := f.count(t) - len(want)

	rng := rand.New(rand.NewPCG(10, 0xe4))
	outcomes := map[string]int{}
	for i := range 32 {
		t.Run(fmt.Sprintf("run%02d", i), func(t *testing.T) {
			f.restore(t)
			// Even runs die at any moment; odd ones once they deleted a
			// random number of the files an uninterrupted run deletes.
			if i%2 == 0 {
				outcomes[f.crashRun(t, bin, time.Duration(rng.Int64N(int64(full))), 0)]++
			} else {
				outcomes[f.crashRun(t, bin, 0, 1+rng.IntN(total-1))]++
			}
			got := f.finished(t)
			for p := range want {
				if _, ok := got[p]; !ok {
					t.Errorf("%s, kept by an uninterrupted run, is gone", p)
				}
			}
			for p := range got {
				if _, ok := want[p]; !ok {
					t.Errorf("%s, deleted by an uninterrupted run, is left", p)
				}
			}
		})
	}
	t.Logf("a whole run takes %s and deletes %d files; outcomes of 32 kills: %v", full, total, outcomes)
	if outcomes["killed while deleting"] < 8 {
		t.Errorf("only %d kills landed while deleting", outcomes["killed while deleting"])
	}
}

// watch starts cmd; the channel is closed when its progress says it
// committed (or when it ends), the builder collects its stderr.
func (f *crashFixture) watch(t *testing.T, cmd *exec.Cmd) (<-chan struct{}, *strings.Builder) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	committed := make(chan struct{})
	var log strings.Builder
	go func() {
		var once sync.Once
		defer once.Do(func() { close(committed) })
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), ": committed ") {
				once.Do(func() { close(committed) })
			}
		}
	}()
	return committed, &log
}

// crashRun starts expire and kills it after delay or, when deleted > 0,
// once that many files of the table are gone.
func (f *crashFixture) crashRun(t *testing.T, bin string, delay time.Duration, deleted int) string {
	before := f.load(t).MetadataLocation
	n0 := f.count(t)
	until := killrun.After(delay)
	if deleted > 0 {
		until = func() {
			for deadline := time.Now().Add(time.Minute); f.count(t) > n0-deleted; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Errorf("fewer than %d files deleted in a minute", deleted)
					return
				}
			}
		}
	}
	finished, _ := killrun.Run(t, f.expireCmd(bin), until)
	tbl := f.checkSame(t)
	outcome := "finished"
	if !finished {
		outcome = "killed before the commit"
		if tbl.MetadataLocation != before {
			outcome = "killed while deleting"
		}
	}
	// The re-run: nothing is left to expire when the kill came after the
	// commit; the killed run's journal tells it what to finish deleting.
	if out, err := f.expireCmd(bin).CombinedOutput(); err != nil {
		t.Fatalf("re-run: %v\n%s", err, out)
	}
	f.checkSame(t)
	return outcome
}
