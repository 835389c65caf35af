package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/icectl/icectl/internal/testing/testenv"
)

// Inspects a Parquet file written by an independent writer (DuckDB) with
// Iceberg field ids.
func TestInspectParquet(t *testing.T) {
	dir := testenv.Need(t, testenv.DuckDBNode, "DuckDB node API")
	path := filepath.Join(t.TempDir(), "data.parquet")
	script := `const { DuckDBInstance } = require('@duckdb/node-api');
(async () => {
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  await con.run("COPY (SELECT range::BIGINT AS id, 'v' || range AS name FROM range(100)) TO '" + process.argv[1] + "' (FORMAT parquet, FIELD_IDS {id: 1, name: 2})");
})().catch(e => { console.error(e); process.exit(1); });`
	cmd := exec.Command("node", "-e", script, path)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("duckdb: %v\n%s", err, out)
	}

	m := runCLI(t, nil, "-o", "json", "inspect", "parquet", path).mustSucceed(t).decodeJSON(t)
	if num(t, m, "num_rows") != "100" {
		t.Errorf("num_rows = %v", m["num_rows"])
	}
	cols := at(t, m, "row_groups", 0, "columns").([]any)
	if len(cols) != 2 || at(t, cols[0], "path") != "id" || num(t, cols[0], "field_id") != "1" || num(t, cols[1], "field_id") != "2" {
		t.Errorf("columns = %v", cols)
	}
	out := runCLI(t, nil, "inspect", "parquet", path).mustSucceed(t).stdout
	if got := textField(t, out, "rows"); got != "100" {
		t.Errorf("text rows = %q\n%s", got, out)
	}
}
