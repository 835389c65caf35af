package commits

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogtest"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/internal/cli"
	"github.com/icectl/icectl/internal/testing/lostconn"
)

// lossyCatalog opens the SQLite catalog of dir through the lossy driver.
func lossyCatalog(t *testing.T, dir string, armed *atomic.Bool) catalog.Catalog {
	t.Helper()
	created, err := sqlcat.Create(context.Background(), catalog.Config{Name: "lossy", URI: "sqlite:///" + filepath.Join(dir, "catalog.db")})
	if err != nil {
		t.Fatal(err)
	}
	created.Close()
	db := sql.OpenDB(lostconn.Connector{DSN: "file:" + filepath.Join(dir, "catalog.db") + "?_pragma=busy_timeout(5000)", Armed: armed})
	c, err := sqlcat.New(context.Background(), db, sqlcat.SQLite, catalog.Config{Name: "lossy", Warehouse: "file://" + filepath.Join(dir, "wh")})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestUnknownStateSQLSetProperties runs `table set-properties` (its
// command, commit loop and exit-code mapping) on a catalog whose
// connection drops after the swap UPDATE ran: exit 5, a message naming the
// unknown state, and the metadata file it committed kept and current.
func TestUnknownStateSQLSetProperties(t *testing.T) {
	dir := t.TempDir()
	armed := &atomic.Bool{}
	setup := lossyCatalog(t, dir, armed)
	id := catalog.Ident{Namespace: []string{"db"}, Name: "t"}
	tbl := catalogtest.NewTable(t, setup, id, map[string]string{"commit.retry.num-retries": "3"})
	before := catalogtest.MetadataFiles(t, tbl)
	setup.Close()

	var out, errOut bytes.Buffer
	f := &cli.Factory{Out: &out, ErrOut: &errOut, Getenv: func(string) string { return "" }, Output: "text"}
	opened := 0
	cmd := cli.NewCmdTableSetProperties(f, func(o *cli.TablePropsOptions) error {
		o.Open = func(context.Context) (catalog.Catalog, error) {
			opened++
			armed.Store(true)
			return lossyCatalog(t, dir, armed), nil
		}
		return cli.RunTableProps(context.Background(), o)
	})
	cmd.SetArgs([]string{"db.t", "write.target-file-size-bytes=1048576"})
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.Execute()
	var ee *cli.ExitError
	if !errors.As(err, &ee) || ee.Code != cli.ExitCommitState {
		t.Fatalf("set-properties with the connection lost after the UPDATE: %v (%#v), want exit %d", err, ee, cli.ExitCommitState)
	}
	if opened != 1 {
		t.Fatalf("catalog opened %d times", opened)
	}
	for _, want := range []string{"commit state unknown", "nothing was deleted", "icectl table show db.t", lostconn.ErrLost.Error()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if out.Len() != 0 {
		t.Errorf("stdout after an unknown outcome: %q", out.String())
	}

	check := lossyCatalog(t, dir, &atomic.Bool{})
	defer check.Close()
	loaded, err := check.LoadTable(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	after := catalogtest.MetadataFiles(t, loaded)
	for _, p := range before {
		if !slices.Contains(after, p) {
			t.Errorf("metadata file %s was deleted", p)
		}
	}
	if len(after) != len(before)+1 || !slices.Contains(after, loaded.MetadataLocation) {
		t.Errorf("metadata files %v -> %v; current %s: the committed file must be kept", before, after, loaded.MetadataLocation)
	}
	if got := loaded.Metadata.Properties["write.target-file-size-bytes"]; got != "1048576" {
		t.Errorf("the UPDATE ran, yet the property is %q", got)
	}
}

// TestUnknownStateSQLAppendKeepsFiles appends a real Parquet file through
// the lossy SQL catalog: the commit lands behind the lost connection, and
// the data file, manifests and manifest list must all still exist.
func TestUnknownStateSQLAppendKeepsFiles(t *testing.T) {
	dir := t.TempDir()
	armed := &atomic.Bool{}
	cat := lossyCatalog(t, dir, armed)
	defer cat.Close()
	id := catalog.Ident{Namespace: []string{"db"}, Name: "t"}
	tbl := catalogtest.NewTable(t, cat, id, nil)
	first := writeParquet(t, tbl, "first", []int64{10, 11})
	tbl = appendOK(t, cat, tbl, first)

	armed.Store(true)
	df := appendUnknown(t, cat, tbl)
	loaded, err := cat.LoadTable(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	fio, err := fileio.Load(context.Background(), "file://"+dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkLandedAndKept(t, fio, loaded, tbl.Metadata.CurrentSnapshot(), df)
}
