package cli

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Usage errors of the table-move verbs (and of the namespace commands
// register points to) exit 2, refusals 1, and neither
// (nor a dry run) changes a byte of the catalog or the warehouse.
func TestRelocateVerbsBadInput(t *testing.T) {
	fx := newFixture(t)
	loc := fx.table.Metadata.Location
	stage := filepath.Join(t.TempDir(), "stage")
	before := fileTree(t, fx.dir)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"rewrite-table-path", "db.events", "--to", "/x", "--stage", stage}, ExitUsage, "--from and --to"},
		{[]string{"rewrite-table-path", "db.events", "--from", loc, "--to", loc + "/", "--stage", stage}, ExitUsage, "the same"},
		{[]string{"rewrite-table-path", "db.events", "--from", loc, "--to", "/x"}, ExitUsage, "--stage"},
		{[]string{"rewrite-table-path", "db.events", "--from", "/nowhere", "--to", "/x", "--stage", stage}, ExitFailure, "does not start with"},
		{[]string{"rewrite-table-path", "db.events", "--from", loc, "--to", "/x", "--stage", fx.dir}, ExitFailure, "not empty"},
		{[]string{"table", "register", "db.copy", "/tmp/not-metadata.txt"}, ExitUsage, "not a metadata file"},
		{[]string{"table", "register", "nodots", fx.table.MetadataLocation}, ExitUsage, ""},
		{[]string{"table", "register", "db.events", fx.table.MetadataLocation}, ExitFailure, "exists"},
		{[]string{"table", "register", "db.copy", fx.table.Metadata.MetadataLog[0].MetadataFile}, ExitFailure, "not the newest"},
		{[]string{"table", "register", "db.copy", fx.table.MetadataLocation, "--dry-run"}, ExitOK, ""},
		{[]string{"table", "register", "nope.copy", fx.table.MetadataLocation}, ExitFailure, "namespace nope does not exist; create it first: icectl namespace create nope"},
		{[]string{"namespace", "drop", "db"}, ExitFailure, "not empty"},
		{[]string{"namespace", "create", "db"}, ExitFailure, "exists already"},
		{[]string{"namespace", "drop", "nope"}, ExitFailure, "does not exist"},
		{[]string{"namespace", "create", "a..b"}, ExitUsage, "empty level"},
		{[]string{"namespace", "create", "x", "=v"}, ExitUsage, "empty key"},
		{[]string{"rewrite-table-path", "db.events", "--from", loc, "--to", "/x", "--stage", stage, "--dry-run"}, ExitFailure, "pos.parquet: file not found"},
	} {
		r := fx.run(t, c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
	if after := fileTree(t, fx.dir); !reflect.DeepEqual(before, after) {
		t.Fatal("a refused command or a dry run changed the catalog or the warehouse")
	}
}
