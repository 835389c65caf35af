package claim

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogs"
	"github.com/icectl/icectl/catalog/catalogtest"
	"github.com/icectl/icectl/catalog/rest"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// The test binary doubles as the separate processes of the multi-process
// tests: with childEnv set it runs one child (see runChild) and exits.
const childEnv = "ICECTL_CLAIM_TEST_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		if err := runChild(spec); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(testenv.Finish(m.Run()))
}

// child is what a child process does, passed as JSON in childEnv.
type child struct {
	Config catalog.Config
	Table  string
	Mode   string // "loop": take and release Rounds times; "hold": take, say so, wait to be killed
	Rounds int
	Lease  time.Duration
	// Marker is created exclusively while a loop child holds the claim:
	// two holders at once make the second creation fail.
	Marker string
}

func runChild(js string) error {
	var c child
	if err := json.Unmarshal([]byte(js), &c); err != nil {
		return err
	}
	ctx := context.Background()
	cat, err := catalogs.Open(ctx, c.Config)
	if err != nil {
		return err
	}
	defer cat.Close()
	id, err := catalog.ParseIdent(c.Table)
	if err != nil {
		return err
	}
	o := Options{Verb: "test-" + c.Mode, Lease: c.Lease, Wait: time.Minute, Poll: 5 * time.Millisecond}
	switch c.Mode {
	case "hold":
		o.Wait = 0
		cl, err := Take(ctx, cat, id, o)
		if err != nil {
			return err
		}
		fmt.Printf("held %s\n", cl.Info().Token)
		time.Sleep(time.Hour)
		return nil
	case "loop":
		for range c.Rounds {
			err := Do(ctx, cat, id, o, func(context.Context) error {
				f, err := os.OpenFile(c.Marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
				if err != nil {
					return fmt.Errorf("two holders at once: %w", err)
				}
				f.Close()
				time.Sleep(time.Millisecond)
				return os.Remove(c.Marker)
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown mode %q", c.Mode)
}

// backend is a catalog the tests claim tables in.
type backend struct {
	name string
	cfg  catalog.Config
}

func sqliteBackend(t *testing.T) backend {
	dir := t.TempDir()
	return backend{"sqlite", catalog.Config{Name: "claim", URI: "sqlite:///" + filepath.Join(dir, "catalog.db"),
		Warehouse: "file://" + filepath.Join(dir, "wh")}}
}

func postgresBackend(t *testing.T) backend {
	url := testenv.Need(t, testenv.PostgresURL, "PostgreSQL database")
	return backend{"postgres", catalog.Config{Name: testenv.UniqueName(t, "claim_"), URI: url, Warehouse: "file://" + t.TempDir()}}
}

func restBackend(t *testing.T) backend {
	uri := testenv.Need(t, testenv.RESTCatalog, "REST catalog server")
	wh := testenv.Need(t, testenv.RESTWarehouse, "REST catalog warehouse")
	cred := testenv.Need(t, testenv.RESTCredential, "REST catalog OAuth2 credential")
	s3 := testenv.Need(t, testenv.RESTS3Endpoint, "S3 endpoint of the REST catalog")
	key, secret, _ := strings.Cut(cred, ":")
	return backend{"rest", catalog.Config{Name: "rest", URI: uri, Warehouse: wh, Props: map[string]string{
		rest.PropCredential:      cred,
		fileio.S3Endpoint:        s3,
		fileio.S3AccessKeyID:     key,
		fileio.S3SecretAccessKey: secret,
		fileio.S3PathStyleAccess: "true",
		fileio.ClientRegion:      "us-east-1",
	}}}
}

func fileBackend(t *testing.T) backend {
	return backend{"file", catalog.Config{Name: "claim", URI: "file://" + filepath.Join(t.TempDir(), "wh")}}
}

var backends = []struct {
	name string
	mk   func(*testing.T) backend
}{{"SQLite", sqliteBackend}, {"Postgres", postgresBackend}, {"REST", restBackend}, {"File", fileBackend}}

// forEach runs test once per catalog kind.
func forEach(t *testing.T, test func(t *testing.T, b backend)) {
	for _, k := range backends {
		t.Run(k.name, func(t *testing.T) { test(t, k.mk(t)) })
	}
}

func (b backend) open(t testing.TB) catalog.Catalog {
	t.Helper()
	cat, err := catalogs.Create(context.Background(), b.cfg)
	if err != nil {
		t.Fatalf("open %s catalog: %v", b.name, err)
	}
	t.Cleanup(func() { cat.Close() })
	return cat
}

// newTable creates a table with snapshots snapshots on main.
func newTable(t testing.TB, cat catalog.Catalog, snapshots int) catalog.Ident {
	t.Helper()
	ctx := context.Background()
	id := catalog.Ident{Namespace: []string{testenv.UniqueName(t, "claim_")}, Name: "t"}
	tbl := catalogtest.NewTable(t, cat, id, nil)
	for i := range snapshots {
		reqs, ups := catalogtest.AppendSnapshot(tbl.Metadata, int64(100+i))
		var err error
		if tbl, err = cat.CommitTable(ctx, tbl, reqs, ups); err != nil {
			t.Fatalf("append snapshot: %v", err)
		}
	}
	return id
}

// startChild starts the test binary as a child process.
func startChild(t *testing.T, c child) *exec.Cmd {
	t.Helper()
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(js))
	cmd.Stderr = os.Stderr
	return cmd
}

// holdInChild starts a child that takes the claim and waits; it returns
// once the child holds it.
func holdInChild(t *testing.T, b backend, id catalog.Ident, lease time.Duration) *exec.Cmd {
	t.Helper()
	cmd := startChild(t, child{Config: b.cfg, Table: id.String(), Mode: "hold", Lease: lease})
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "held ") {
		t.Fatalf("child did not take the claim: %q, %v", line, err)
	}
	return cmd
}

// exclusive counts holders in this process; more than one at a time is a
// violation.
type exclusive struct {
	holders, max atomic.Int32
}

func (e *exclusive) enter() {
	n := e.holders.Add(1)
	for {
		m := e.max.Load()
		if n <= m || e.max.CompareAndSwap(m, n) {
			return
		}
	}
}

func (e *exclusive) leave() { e.holders.Add(-1) }

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
