package cli

import (
	"fmt"
	"maps"
	"strings"
	"testing"
)

// A metadata file given in place of a table opens that table version
// read-only, with no catalog: reading works and every change is refused.
func TestMetadataFileInPlaceOfTable(t *testing.T) {
	fx := newFixture(t)
	md := strings.TrimPrefix(fx.table.MetadataLocation, "file://")

	show := runCLI(t, fx.env, "table", "show", md, "--output", "json").mustSucceed(t).decodeJSON(t)
	if got := num(t, show, "current_snapshot", "snapshot_id"); got != fmt.Sprint(fx.snaps[1]) {
		t.Errorf("current snapshot %s, want %d", got, fx.snaps[1])
	}
	files := runCLI(t, fx.env, "files", md, "--output", "json").mustSucceed(t).decodeJSON(t)
	if n := len(at(t, files, "files").([]any)); n != 3 {
		t.Errorf("files lists %d data files, want 3", n)
	}
	old := runCLI(t, fx.env, "files", md, "--snapshot", fmt.Sprint(fx.snaps[0]), "--output", "json").mustSucceed(t).decodeJSON(t)
	if n := len(at(t, old, "files").([]any)); n != 3 {
		t.Errorf("files at the first snapshot lists %d, want 3", n)
	}

	r := runCLI(t, fx.env, "table", "set-properties", md, "owner=someone-else")
	if r.code != ExitFailure || !strings.Contains(r.stderr, "read-only") {
		t.Errorf("set-properties on a metadata file: exit %d, stderr %q; want exit 1 saying read-only", r.code, r.stderr)
	}
	after := runCLI(t, fx.env, "table", "show", md, "--output", "json").mustSucceed(t).decodeJSON(t)
	if at(t, after, "properties", "owner") != "tests" {
		t.Errorf("owner changed to %v", at(t, after, "properties", "owner"))
	}
}

// Compaction plans from a metadata file with --dry-run and refuses to run
// from one, before writing anything.
func TestCompactMetadataFile(t *testing.T) {
	fx := newFixture(t)
	md := strings.TrimPrefix(fx.table.MetadataLocation, "file://")
	before := hashTree(t, fx.dir)
	runCLI(t, fx.env, "compact", md, "--dry-run", "--output", "json").mustSucceed(t)
	r := runCLI(t, fx.env, "compact", md)
	if r.code != ExitFailure || !strings.Contains(r.stderr, "read-only") {
		t.Errorf("compact of a metadata file: exit %d, stderr %q; want exit 1 saying read-only", r.code, r.stderr)
	}
	if after := hashTree(t, fx.dir); !maps.Equal(before, after) {
		t.Error("compacting a metadata file changed files under the warehouse")
	}
}
