package sqlcat

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogtest"
)

// childEnv carries "<db path>|<warehouse>|<snapshot id>" to a re-executed
// test binary acting as one committing process.
const childEnv = "ICECTL_SQLCAT_CHILD"

// TestSQLiteProcessChild is the body of one child process of
// TestSQLiteMultiProcess; run directly it has nothing to do.
func TestSQLiteProcessChild(t *testing.T) {
	spec := os.Getenv(childEnv)
	if spec == "" {
		return
	}
	parts := strings.Split(spec, "|")
	id, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	c := openSQLite(t, parts[0], parts[1])
	if err := catalogtest.CommitWithRetry(context.Background(), c, catalog.Ident{Namespace: []string{"db"}, Name: "t"}, id); err != nil {
		t.Fatal(err)
	}
}

// TestSQLiteMultiProcess has 20 OS processes commit to one SQLite catalog
// at once, each retrying on conflict: no update may be lost.
func TestSQLiteMultiProcess(t *testing.T) {
	const procs = 20
	dir := t.TempDir()
	dbPath, wh := filepath.Join(dir, "catalog.db"), "file://"+dir+"/wh"
	c := createSQLite(t, dbPath, wh)
	id := catalog.Ident{Namespace: []string{"db"}, Name: "t"}
	catalogtest.NewTable(t, c, id, nil)

	var wg sync.WaitGroup
	var ids []int64
	errs := make([]error, procs)
	outs := make([][]byte, procs)
	for i := range procs {
		sid := int64(5000 + i)
		ids = append(ids, sid)
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestSQLiteProcessChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%s|%d", childEnv, dbPath, wh, sid))
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("process %d: %v\n%s", i, err, outs[i])
		}
	}
	catalogtest.CheckAllCommitted(t, c, id, ids)
}
