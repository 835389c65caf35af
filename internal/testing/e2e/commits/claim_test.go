package commits

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogs"
	"github.com/icectl/icectl/iceberg/claim"
)

// demoCatalog builds `icectl demo` in a temp dir and returns its catalog
// flags.
func demoCatalog(t *testing.T, env []string) (dir string, flags []string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "demo")
	if r := icectl(t, env, "demo", "--dir", dir, "--walkthrough=false"); r.code != 0 {
		t.Fatal(r)
	}
	return dir, []string{"--catalog-uri", "sqlite:///" + filepath.Join(dir, "catalog.db"), "--catalog-name", "demo"}
}

// replaceSnapshots counts the table's compaction commits, and checks that
// no claim is left on it.
func replaceSnapshots(t *testing.T, dir string) int {
	t.Helper()
	ctx := context.Background()
	cat, err := catalogs.Open(ctx, catalog.Config{Name: "demo", URI: "sqlite:///" + filepath.Join(dir, "catalog.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	id := catalog.Ident{Namespace: []string{"shop"}, Name: "orders"}
	tbl, err := cat.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := claim.Show(ctx, cat, id); err != nil || info != nil {
		t.Errorf("claim left after the runs: %+v, %v", info, err)
	}
	n := 0
	for _, s := range tbl.Metadata.Snapshots {
		if s.Summary["operation"] == "replace" {
			n++
		}
	}
	return n
}

// Two compactions started together on one table (issue 23): before the
// claim, both did all the work and one threw it away (exit 4). Now one
// works; the other either reports the held claim (exit 4, saying who and
// what to type) or, with --wait, waits and finds nothing left to do. The
// work is never done twice.
func TestConcurrentCompactionsWorkOnce(t *testing.T) {
	for _, wait := range []bool{true, false} {
		name := "NoWait"
		if wait {
			name = "Wait"
		}
		t.Run(name, func(t *testing.T) {
			env := baseEnv(t)
			dir, flags := demoCatalog(t, env)
			before := replaceSnapshots(t, dir)
			args := append([]string{"compact", "shop.orders", "-o", "json"}, flags...)
			if wait {
				args = append(args, "--wait", "2m")
			}
			var wg sync.WaitGroup
			results := make([]result, 2)
			for i := range results {
				wg.Add(1)
				go func() {
					defer wg.Done()
					results[i] = icectl(t, env, args...)
				}()
			}
			wg.Wait()
			worked, idle := 0, 0
			for _, r := range results {
				switch {
				case r.code == 0:
					var rep struct {
						Groups []json.RawMessage `json:"groups"`
					}
					if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
						t.Fatalf("%s\n%v", r, err)
					}
					if len(rep.Groups) > 0 {
						worked++
					} else {
						idle++
					}
				case r.code == 4 && !wait && strings.Contains(r.stderr, "is being maintained by ") &&
					strings.Contains(r.stderr, "(compact)") && strings.Contains(r.stderr, "--wait 10m"):
					idle++
				default:
					t.Errorf("unexpected outcome: %s", r)
				}
			}
			if worked != 1 || idle != 1 {
				t.Errorf("%d runs compacted, %d did not; want exactly one of each", worked, idle)
			}
			if n := replaceSnapshots(t, dir) - before; n != 1 {
				t.Errorf("%d compaction commits, want 1", n)
			}
		})
	}
}
