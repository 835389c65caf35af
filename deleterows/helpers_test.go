package deleterows

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/fixture"
	"github.com/icectl/icectl/internal/testing/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Finish(m.Run())) }

const testCatalog = "test"

// Test tables: id long (the key the model matches rows by), ts timestamp
// (the retention column, with nulls), cat string.
func testSchema() spec.Schema {
	return spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "ts", Type: spec.TimestampType{}},
		{ID: 3, Name: "cat", Type: spec.StringType{}, Required: true},
	}}
}

// row is a row of the test schema; ts is nil for null.
type row struct {
	ID  int64
	TS  *int64
	Cat string
}

func ts(s string) *int64 {
	tm, err := time.Parse("2006-01-02 15:04", s)
	if err != nil {
		panic(err)
	}
	v := tm.UnixMicro()
	return &v
}

// env is a test table with its model: the rows every reader must read.
type env struct {
	*fixture.Table
	model map[int64]row
}

func newEnv(t *testing.T, o fixture.TableOptions) *env {
	t.Helper()
	s := testSchema()
	o.Schema = &s
	c := fixture.NewSQLite(t, fixture.WithName(testCatalog))
	return &env{Table: c.Table(t, o), model: map[int64]row{}}
}

// write writes rows as a data file of partition (in the default spec)
// and appends it; the rows join the model.
func (e *env) write(t *testing.T, name string, partition []any, rows ...row) manifest.DataFile {
	t.Helper()
	s := testSchema()
	vals := make([][]any, len(rows))
	for i, r := range rows {
		var v any
		if r.TS != nil {
			v = *r.TS
		}
		vals[i] = []any{r.ID, v, r.Cat}
		e.model[r.ID] = r
	}
	md := e.Load(t).Metadata
	df := e.WriteRows(t, nil, name, partition, &s, vals)
	df.SpecID = int32(md.DefaultSpecID)
	e.Append(t, nil, df)
	return df
}

// rows reads the table's rows with icectl's scan, by id.
func (e *env) rows(t *testing.T) []row {
	t.Helper()
	tbl := e.Load(t)
	var out []row
	err := scan.SnapshotRows(e.Ctx, tbl.IO, tbl.Metadata, tbl.Metadata.CurrentSnapshot(), nil, func(v []any) error {
		r := row{ID: v[0].(int64), Cat: v[2].(string)}
		if v[1] != nil {
			x := v[1].(int64)
			r.TS = &x
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b row) int { return int(a.ID - b.ID) })
	return out
}

// modelRows is the model, by id.
func (e *env) modelRows() []row {
	var out []row
	for _, r := range e.model {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b row) int { return int(a.ID - b.ID) })
	return out
}

// checkModel asserts that icectl reads the model, every column, and that
// iceberg-go (when available) reads the same rows.
func (e *env) checkModel(t *testing.T) {
	t.Helper()
	got, want := e.rows(t), e.modelRows()
	if !slices.EqualFunc(got, want, func(a, b row) bool {
		return a.ID == b.ID && a.Cat == b.Cat && (a.TS == nil) == (b.TS == nil) && (a.TS == nil || *a.TS == *b.TS)
	}) {
		t.Errorf("icectl reads %d rows %v, want %d rows %v", len(got), ids(got), len(want), ids(want))
	}
	if os.Getenv(testenv.IcebergGoReader) == "" && os.Getenv("CI") == "" {
		return
	}
	sum := e.Checksum(t, nil)
	out := testenv.IcebergGo(e.Ctx, t, "scan", "--catalog-uri", e.Cat.URI, "--catalog-name", testCatalog, "--table", "ns.t")
	var g struct {
		RowCount int64  `json:"row_count"`
		Checksum string `json:"checksum"`
	}
	if err := json.Unmarshal(out, &g); err != nil {
		t.Fatal(err)
	}
	if g.RowCount != sum.RowCount || g.Checksum != sum.Checksum {
		t.Errorf("iceberg-go reads %d rows checksum %s, icectl %+v", g.RowCount, g.Checksum, sum)
	}
}

func ids(rs []row) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// forget drops ids from the model (rows a delete removed).
func (e *env) forget(ids ...int64) {
	for _, id := range ids {
		delete(e.model, id)
	}
}

// digest hashes every file under the catalog's directory (the SQLite
// catalog and the warehouse): equal digests are byte-identical state.
func (e *env) digest(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(e.Cat.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		h := sha256.Sum256(b)
		out[path] = hex.EncodeToString(h[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (e *env) options(where string) Options { return Options{Where: where, Commit: e.Opts} }

// run plans and executes a delete of where.
func (e *env) run(t *testing.T, where string) (*Plan, *Report, error) {
	t.Helper()
	tbl := e.Load(t)
	p, err := PlanTable(e.Ctx, tbl, e.options(where))
	if err != nil {
		return nil, nil, err
	}
	rep, err := Execute(e.Ctx, e.Cat.Catalog, tbl, p, e.options(where))
	return p, rep, err
}
