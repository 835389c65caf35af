package pyinterop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/icectl/icectl/internal/testing/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveIcectl()
	os.Exit(testenv.Finish(code))
}

// pyEnv is a PyIceberg user's set-up: a .pyiceberg.yaml naming catalog
// "py" (SQLite, a local warehouse) in the directory PYICEBERG_HOME points
// at.
type pyEnv struct {
	python, tool, home string
	served             *servedTool // pyiceberg_tool.py serve, from the first py call on
}

func newPyEnv(t *testing.T) *pyEnv {
	t.Helper()
	python := testenv.Need(t, testenv.PyIceberg, "a python with pyiceberg[sql-sqlite,pyarrow]")
	home := t.TempDir()
	yaml := fmt.Sprintf("catalog:\n  py:\n    type: sql\n    uri: sqlite:///%s\n    warehouse: file://%s\n",
		filepath.Join(home, "catalog.db"), filepath.Join(home, "warehouse"))
	if err := os.WriteFile(filepath.Join(home, ".pyiceberg.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	tool, err := filepath.Abs("pyiceberg_tool.py")
	if err != nil {
		t.Fatal(err)
	}
	return &pyEnv{python: python, tool: tool, home: home}
}

// run runs a command with the user's environment: PYICEBERG_HOME set,
// working directory the user's home.
func (e *pyEnv) run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), name, args...)
	cmd.Dir = e.home
	cmd.Env = append(os.Environ(), "PYICEBERG_HOME="+e.home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", filepath.Base(name), args, err, stderr.String())
	}
	return stdout.Bytes()
}

// py runs a command of pyiceberg_tool.py and answers its JSON document.
// The commands go to one pyiceberg_tool.py serve per test, started at the
// first call (PyIceberg reads .pyiceberg.yaml when it is imported: the
// file must be final by then): a Python start, with pyarrow's and
// PyIceberg's imports, costs about a CPU-second, more than most commands.
// Each command loads the catalog afresh, as a one-shot process does.
func (e *pyEnv) py(t *testing.T, args ...string) []byte {
	t.Helper()
	if e.served == nil {
		e.served = startServed(t, e, filepath.Base(e.tool), "serve")
	}
	return e.served.call(t, args)
}

// servedTool is one of the package's Python tools (pyiceberg_tool.py,
// hive_tool.py) serving: a JSON array of arguments per line in, one JSON
// document per line out, {"error": ...} for a failed command.
type servedTool struct {
	name   string
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *bytes.Buffer
}

// startServed starts script (a file beside pyiceberg_tool.py) with args in
// the test's PyIceberg home; it is stopped when the test ends.
func startServed(t *testing.T, e *pyEnv, script string, args ...string) *servedTool {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), e.python, append([]string{filepath.Join(filepath.Dir(e.tool), script)}, args...)...)
	cmd.Dir = e.home
	cmd.Env = append(os.Environ(), "PYICEBERG_HOME="+e.home)
	p := &servedTool{name: script, stderr: new(bytes.Buffer)}
	cmd.Stderr = p.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s %v: %v", script, args, err)
	}
	t.Cleanup(func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("%s: %v\n%s", script, err, p.stderr)
		}
	})
	p.in, p.out = in, bufio.NewReader(out)
	return p
}

// call sends one command and answers its document; an error fails the
// test with the tool's message (PyIceberg's traceback).
func (p *servedTool) call(t *testing.T, args []string) []byte {
	t.Helper()
	req, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.in.Write(append(req, '\n')); err != nil {
		t.Fatalf("%s %v: %v\n%s", p.name, args, err, p.stderr)
	}
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", p.name, args, err, p.stderr)
	}
	var failed struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(line, &failed) == nil && failed.Error != "" {
		t.Fatalf("%s %v: %s", p.name, args, failed.Error)
	}
	return line
}

// icectl runs a verb on the table with the catalog named as a PyIceberg
// user names it: --catalog py, found in .pyiceberg.yaml.
func (e *pyEnv) icectl(t *testing.T, args ...string) []byte {
	t.Helper()
	return e.run(t, testenv.Icectl(t), append(args, "--catalog", "py")...)
}

// pyRead is what PyIceberg reads of a table.
type pyRead struct {
	Rows     int      `json:"rows"`
	Checksum string   `json:"checksum"`
	IDs      []int64  `json:"ids"`
	Columns  []string `json:"columns"`
	Snapshot int64    `json:"snapshot"`
}

// read is PyIceberg's read of the table's main branch, or of ref.
func (e *pyEnv) read(t *testing.T, table string, ref ...string) pyRead {
	t.Helper()
	var r pyRead
	if err := json.Unmarshal(e.py(t, append([]string{"read", table}, ref...)...), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPyIcebergTable: icectl maintains a table PyIceberg wrote, and
// PyIceberg reads every row and every value back after each verb, then
// keeps writing to it.
func TestPyIcebergTable(t *testing.T) {
	e := newPyEnv(t)
	const table = "shop.orders"
	plain := filepath.Join(e.home, "imported")
	e.py(t, "write", table, "2", plain)
	want := e.read(t, table)
	// 3 appends of 100, one row deleted, 50 with the new column, 30 added
	// from a file without field ids.
	if want.Rows != 379 || !slices.Contains(want.Columns, "note") {
		t.Fatalf("PyIceberg wrote %d rows, columns %v; want 379 with note", want.Rows, want.Columns)
	}
	same := func(step string) {
		t.Helper()
		if got := e.read(t, table); got.Rows != want.Rows || got.Checksum != want.Checksum {
			t.Fatalf("after %s PyIceberg reads %d rows, checksum %s; want %d, %s", step, got.Rows, got.Checksum, want.Rows, want.Checksum)
		}
	}

	e.icectl(t, "compact", table, "--rewrite-all")
	same("compact --rewrite-all")
	e.icectl(t, "rewrite-manifests", table)
	same("rewrite-manifests")
	e.icectl(t, "expire", table, "--older-than", "1s", "--retain-last", "1")
	same("expire")
	// The imported file was PyIceberg's input, outside the table: no
	// longer referenced after the compaction, it is still not ours to
	// delete.
	if _, err := os.Stat(filepath.Join(plain, "plain-400.parquet")); err != nil {
		t.Fatalf("the file add_files imported: %v", err)
	}

	// PyIceberg writes on the maintained table.
	e.py(t, "delete", table, "10")
	e.py(t, "append", table, "1000", "20")
	var ids []int64
	for _, id := range want.IDs {
		if id%10 != 0 {
			ids = append(ids, id)
		}
	}
	for id := int64(1000); id < 1020; id++ {
		ids = append(ids, id)
	}
	want = e.read(t, table)
	if !slices.Equal(want.IDs, ids) {
		t.Fatalf("after PyIceberg's delete and append: ids %v, want %v", want.IDs, ids)
	}
	e.icectl(t, "compact", table)
	same("compact after PyIceberg wrote on")

	// v3: PyIceberg (0.12) reads v3 tables but does not write them.
	e.icectl(t, "upgrade", table, "--to", "3", "--assign-row-ids")
	same("upgrade --to 3")
	e.py(t, "read", table)
	e.icectl(t, "compact", table, "--rewrite-all")
	same("compact --rewrite-all on v3")
	e.icectl(t, "verify", "deletes", table, "--check-files")
}
