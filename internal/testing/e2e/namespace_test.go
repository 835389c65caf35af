package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogtest"
)

// icectl namespace create|list|drop on each catalog kind: create with
// properties, list at the top and under a parent, drop refused while the
// namespace holds a table or a child namespace (the catalog unchanged:
// on SQLite the database file byte for byte), then allowed once empty.
// Bad input is a usage error that changes nothing.

func TestNamespaceCommandsSQLite(t *testing.T) {
	t.Parallel()
	namespaceCommands(t, sqliteBackend)
}

func TestNamespaceCommandsPostgres(t *testing.T) {
	t.Parallel()
	namespaceCommands(t, postgresBackend)
}

func TestNamespaceCommandsREST(t *testing.T) {
	t.Parallel()
	namespaceCommands(t, restBackend)
}

func namespaceCommands(t *testing.T, mk func(*testing.T) backend) {
	ctx := context.Background()
	b := mk(t)
	cat := b.open(t)
	ns := uniqueName(t, "nscmd_")
	child := ns + ".child"
	run := func(wantCode int, wantErr string, args ...string) string {
		t.Helper()
		out, stderr, code := runICECTLOn(t, b, args...)
		if code != wantCode || !strings.Contains(stderr, wantErr) || code != 0 && strings.Count(stderr, "\n") != 1 {
			t.Fatalf("icectl %s: exit %d, stderr %q; want exit %d and %q", strings.Join(args, " "), code, stderr, wantCode, wantErr)
		}
		return out
	}
	// snapshot is what a refused command must leave as it was: the
	// SQLite database file, or what the catalog lists.
	snapshot := func() string {
		t.Helper()
		if path, ok := strings.CutPrefix(b.cfg.URI, "sqlite:///"); ok {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			return string(data)
		}
		var out []string
		for _, n := range [][]string{{ns}, {ns, "child"}} {
			tables, err := cat.ListTables(ctx, n)
			children, err2 := cat.ListNamespaces(ctx, n)
			out = append(out, fmt.Sprint(n, tables, err, children, err2))
		}
		return strings.Join(out, "; ")
	}

	run(0, "", "namespace", "create", ns, "owner=ann", "comment=a b=c")
	run(1, "exists already", "namespace", "create", ns)
	run(0, "", "namespace", "create", child)
	run(2, "", "namespace", "create", ns+"..x")
	run(2, "want KEY=VALUE", "namespace", "create", ns+"2", "novalue")
	if out := run(0, "", "namespace", "list"); !strings.Contains("\n"+out, "\n"+ns+"\n") {
		t.Errorf("namespace list does not list %s:\n%s", ns, out)
	}
	if out := run(0, "", "namespace", "list", ns); out != child+"\n" {
		t.Errorf("namespace list %s = %q, want %s", ns, out, child)
	}
	run(1, "does not exist", "namespace", "list", ns+"_missing")

	tbl := catalogtest.NewTable(t, cat, catalog.Ident{Namespace: []string{ns}, Name: "t"}, nil)
	before := snapshot()
	run(1, "not empty", "namespace", "drop", ns)
	if after := snapshot(); after != before {
		t.Errorf("a refused drop changed the catalog:\nbefore %s\nafter  %s", before, after)
	}
	run(0, "", "namespace", "drop", child)
	before = snapshot()
	run(1, "not empty", "namespace", "drop", ns)
	if after := snapshot(); after != before {
		t.Errorf("a refused drop changed the catalog:\nbefore %s\nafter  %s", before, after)
	}
	if _, err := cat.LoadTable(ctx, tbl.Ident); err != nil {
		t.Fatalf("the table after refused drops: %v", err)
	}
	if err := cat.DropTable(ctx, tbl.Ident); err != nil {
		t.Fatal(err)
	}
	run(0, "", "namespace", "drop", ns)
	if out := run(0, "", "namespace", "list"); strings.Contains("\n"+out, "\n"+ns+"\n") {
		t.Errorf("namespace list still lists the dropped %s:\n%s", ns, out)
	}
	run(1, "does not exist", "namespace", "drop", ns)
}
