package compact_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// goScan is a table as iceberg-go (interop/cmd/iceberg-read) reads it.
type goScan struct {
	RowCount int64             `json:"row_count"`
	Checksum string            `json:"checksum"`
	Columns  []string          `json:"columns"`
	Rows     []json.RawMessage `json:"rows"`
}

// goRow is one decoded row of a goScan; numbers stay json.Number so row
// ids are exact.
type goRow map[string]any

// icebergGo reads the fixture's table through iceberg-go.
func icebergGo(tb testing.TB, f *fixture, lineage bool) *goScan {
	tb.Helper()
	args := []string{"scan", "--catalog-uri", f.uri, "--catalog-name", fxCatalog, "--table", f.tableName()}
	if f.goArgs != nil {
		args = append([]string{"scan", "--table", f.tableName()}, f.goArgs...)
	}
	if lineage {
		args = append(args, "--lineage")
	}
	out := testenv.IcebergGo(f.ctx, tb, args...)
	var res goScan
	if err := json.Unmarshal(out, &res); err != nil {
		tb.Fatalf("iceberg-read output: %v", err)
	}
	return &res
}

func (g *goScan) decode(tb testing.TB) []goRow {
	tb.Helper()
	rows := make([]goRow, len(g.Rows))
	for i, raw := range g.Rows {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&rows[i]); err != nil {
			tb.Fatalf("row %d: %v", i, err)
		}
	}
	return rows
}

// ids returns the sorted ids of the scanned rows, failing on a duplicate.
func (g *goScan) ids(tb testing.TB) []int64 {
	tb.Helper()
	var ids []int64
	for _, r := range g.decode(tb) {
		ids = append(ids, mustInt(tb, r["id"]))
	}
	slices.Sort(ids)
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			tb.Errorf("id %d is in the table twice", ids[i])
		}
	}
	return ids
}

func mustInt(tb testing.TB, v any) int64 {
	tb.Helper()
	n, ok := v.(json.Number)
	if !ok {
		tb.Fatalf("%v (%T) is not a number", v, v)
	}
	i, err := n.Int64()
	if err != nil {
		tb.Fatal(err)
	}
	return i
}

// lineage is a row's _row_id and _last_updated_sequence_number (nil = null).
type lineage struct{ rowID, seq *int64 }

func optInt(tb testing.TB, v any) *int64 {
	if v == nil {
		return nil
	}
	i := mustInt(tb, v)
	return &i
}

// lineageByID maps each row's id to its lineage, from a --lineage scan.
func (g *goScan) lineageByID(tb testing.TB) map[int64]lineage {
	tb.Helper()
	out := map[int64]lineage{}
	for _, r := range g.decode(tb) {
		if _, ok := r["_row_id"]; !ok {
			tb.Fatalf("lineage scan has no _row_id column: %v", g.Columns)
		}
		out[mustInt(tb, r["id"])] = lineage{rowID: optInt(tb, r["_row_id"]), seq: optInt(tb, r["_last_updated_sequence_number"])}
	}
	return out
}

func (l lineage) String() string {
	s := func(p *int64) string {
		if p == nil {
			return "null"
		}
		return strconv.FormatInt(*p, 10)
	}
	return "(" + s(l.rowID) + ", " + s(l.seq) + ")"
}

// icectlChecksum reads the table with icectl's own scan.
func icectlChecksum(tb testing.TB, f *fixture) scan.ChecksumResult {
	tb.Helper()
	t := f.reload()
	res, err := scan.Checksum(f.ctx, t.IO, t.Metadata, t.Metadata.CurrentSnapshot(), scan.Options{})
	if err != nil {
		tb.Fatalf("icectl scan: %v", err)
	}
	return res
}

// checkModel compares the ids iceberg-go reads with the fixture's model:
// every live id present once, no deleted id back.
func checkModel(tb testing.TB, f *fixture, g *goScan) {
	tb.Helper()
	got := g.ids(tb)
	want := f.expectedIDs()
	if slices.Equal(got, want) {
		return
	}
	in := map[int64]bool{}
	for _, id := range got {
		in[id] = true
		if f.deleted[id] {
			tb.Errorf("deleted row id %d is back", id)
		} else if !f.live[id] {
			tb.Errorf("unknown row id %d", id)
		}
	}
	lost := 0
	for _, id := range want {
		if !in[id] {
			if lost < 10 {
				tb.Errorf("row id %d is lost", id)
			}
			lost++
		}
	}
	tb.Errorf("iceberg-go reads %d rows, the model has %d (%d lost)", len(got), len(want), lost)
}

// localPath turns a file:// location into a path.
func localPath(loc string) string {
	if p, ok := strings.CutPrefix(loc, "file://"); ok {
		return p
	}
	return strings.TrimPrefix(loc, "file:")
}

// checkConsistent loads the current metadata and checks that every file it
// references (manifest list, manifests, data and delete files) exists.
func checkConsistent(tb testing.TB, f *fixture) {
	tb.Helper()
	t := f.reload()
	snap := t.Metadata.CurrentSnapshot()
	if snap == nil {
		tb.Fatal("table has no current snapshot")
	}
	must := func(p string) {
		if _, err := os.Stat(localPath(p)); err != nil {
			tb.Errorf("referenced file missing: %v", err)
		}
	}
	must(t.MetadataLocation)
	must(snap.ManifestList)
	mfs, err := table.ManifestFiles(f.ctx, t.IO, snap)
	if err != nil {
		tb.Fatalf("read manifest list: %v", err)
	}
	for _, mf := range mfs {
		must(mf.Path)
	}
	live, err := table.LiveFiles(f.ctx, t.IO, snap)
	if err != nil {
		tb.Fatalf("read manifests: %v", err)
	}
	for _, e := range append(live.Data, live.Deletes...) {
		must(e.Entry.DataFile.FilePath)
	}
}

// hashTree hashes every file under dir, by relative path.
func hashTree(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func TestMain(m *testing.M) {
	if ran, err := benchMain(); ran {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(testenv.Finish(m.Run()))
}

// cliArgs are the catalog flags of `icectl compact` for the fixture.
func cliArgs(f *fixture) []string {
	if f.cliArgs != nil {
		return f.cliArgs
	}
	return []string{"--catalog-uri", f.uri, "--catalog-name", fxCatalog}
}

func mustLive(tb testing.TB, f *fixture) *table.FileSet {
	tb.Helper()
	t := f.reload()
	fs, err := table.LiveFiles(f.ctx, t.IO, t.Metadata.CurrentSnapshot())
	if err != nil {
		tb.Fatal(err)
	}
	return fs
}

func openCatalog(ctx context.Context, uri, dir string) (*sqlcat.Catalog, error) {
	return sqlcat.Open(ctx, catalog.Config{Name: fxCatalog, URI: uri, Warehouse: "file://" + filepath.Join(dir, "wh")})
}
