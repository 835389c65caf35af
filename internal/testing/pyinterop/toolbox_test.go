package pyinterop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestPyIcebergToolbox: the toolbox verbs on a table PyIceberg wrote (v2:
// PyIceberg writes no v3 table) and keeps writing. rewrite-position-deletes
// finds nothing to do (PyIceberg deletes copy-on-write) and changes
// nothing; PyIceberg appends to a branch, icectl fast-forwards main to it;
// the branch and main diverge, icectl cherrypicks the branch's append and
// rolls the branch back; PyIceberg reads exactly the rows each should
// have, and appends on after. Then rewrite-table-path moves the table
// (with the file add_files imported from outside the table, by its bare
// path), the copy is registered by icectl and by PyIceberg, and PyIceberg
// reads both as the original.
func TestPyIcebergToolbox(t *testing.T) {
	e := newPyEnv(t)
	const table = "shop.orders"
	e.py(t, "write", table, "2", filepath.Join(e.home, "imported"))
	want := e.read(t, table)

	var rpd struct {
		PositionDeleteFiles int  `json:"position_delete_files"`
		Committed           bool `json:"committed"`
	}
	if err := json.Unmarshal(e.icectl(t, "rewrite-position-deletes", table, "--min-input-files", "1", "--output", "json"), &rpd); err != nil || rpd.Committed {
		t.Fatalf("rewrite-position-deletes on a table without position deletes: %+v (%v)", rpd, err)
	}
	if got := e.read(t, table); got.Snapshot != want.Snapshot || got.Checksum != want.Checksum {
		t.Fatalf("rewrite-position-deletes with nothing to do moved main to %d (%s)", got.Snapshot, got.Checksum)
	}

	// PyIceberg's audit branch, published by fast-forward.
	e.py(t, "branch", table, "audit")
	e.py(t, "append", table, "500", "20", "audit")
	audit := e.read(t, table, "audit")
	if got := e.read(t, table); got.Checksum != want.Checksum {
		t.Fatalf("main reads %d rows while the audit branch is unpublished, want %d", got.Rows, want.Rows)
	}
	e.icectl(t, "fast-forward", table, "--branch", "main", "--to", "audit")
	if got := e.read(t, table); got.Snapshot != audit.Snapshot || got.Checksum != audit.Checksum {
		t.Fatalf("main after the fast-forward: snapshot %d, %d rows; audit: %d, %d rows", got.Snapshot, got.Rows, audit.Snapshot, audit.Rows)
	}

	// Diverged: PyIceberg appends to both; icectl picks audit's append.
	e.py(t, "append", table, "600", "10", "audit")
	picked := e.read(t, table, "audit").Snapshot
	e.py(t, "append", table, "700", "5")
	before := e.read(t, table)
	e.icectl(t, "cherrypick", table, "--snapshot", strconv.FormatInt(picked, 10))
	ids := append(slices.Clone(before.IDs), span(600, 610)...)
	slices.Sort(ids)
	if got := e.read(t, table); !slices.Equal(got.IDs, ids) {
		t.Fatalf("main after the cherrypick: ids %v, want %v", got.IDs, ids)
	}
	e.icectl(t, "rollback", table, "--branch", "audit", "--to-snapshot", strconv.FormatInt(audit.Snapshot, 10))
	if got := e.read(t, table, "audit"); got.Snapshot != audit.Snapshot || got.Checksum != audit.Checksum {
		t.Fatalf("audit after rollback --branch: snapshot %d (%s), want %d (%s)", got.Snapshot, got.Checksum, audit.Snapshot, audit.Checksum)
	}
	e.py(t, "append", table, "800", "5")
	ids = append(ids, span(800, 805)...)
	final := e.read(t, table)
	if !slices.Equal(final.IDs, ids) {
		t.Fatalf("PyIceberg's append after the cherrypick: ids %v, want %v", final.IDs, ids)
	}

	// Move the whole home (warehouse and imported file) elsewhere.
	moved := filepath.Join(t.TempDir(), "moved")
	stage := filepath.Join(t.TempDir(), "stage")
	var res struct {
		LatestVersion    string `json:"latest_version"`
		FileListLocation string `json:"file_list_location"`
	}
	out := e.icectl(t, "rewrite-table-path", table, "--from", "file://"+e.home, "--to", "file://"+moved, "--stage", stage, "--output", "json")
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	list, err := os.ReadFile(res.FileListLocation)
	if err != nil {
		t.Fatal(err)
	}
	imported := false
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		src, dst, _ := strings.Cut(line, ",")
		imported = imported || strings.HasSuffix(src, "plain-400.parquet")
		data, err := os.ReadFile(strings.TrimPrefix(src, "file://"))
		if err != nil {
			t.Fatal(err)
		}
		dst = strings.TrimPrefix(dst, "file://")
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !imported {
		t.Errorf("the file list lacks the file add_files imported:\n%s", list)
	}
	for _, dir := range []string{"warehouse/shop/orders", "imported"} {
		if err := os.Rename(filepath.Join(e.home, dir), filepath.Join(e.home, dir+".gone")); err != nil {
			t.Fatal(err)
		}
	}
	newest := "file://" + filepath.Join(moved, "warehouse", "shop", "orders", "metadata", res.LatestVersion)
	e.icectl(t, "table", "register", "shop.moved", newest)
	if got := e.read(t, "shop.moved"); got.Rows != final.Rows || got.Checksum != final.Checksum {
		t.Errorf("PyIceberg reads the table icectl registered as %d rows (%s), the original %d (%s)", got.Rows, got.Checksum, final.Rows, final.Checksum)
	}
	var reg pyRead
	if err := json.Unmarshal(e.py(t, "register", "shop.moved_py", newest), &reg); err != nil {
		t.Fatal(err)
	}
	if reg.Rows != final.Rows || reg.Checksum != final.Checksum {
		t.Errorf("PyIceberg's register_table of the copy reads %d rows (%s), the original %d (%s)", reg.Rows, reg.Checksum, final.Rows, final.Checksum)
	}
}

func span(lo, hi int64) []int64 {
	var out []int64
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}
