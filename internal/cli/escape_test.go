package cli

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	icetable "github.com/icectl/icectl/iceberg/table"
)

func TestEscapeText(t *testing.T) {
	for in, want := range map[string]string{
		"plain path/ä/日本.parquet": "plain path/ä/日本.parquet",
		"\x1b]0;pwn\x07\x1b[2J":   `\x1b]0;pwn\x07\x1b[2J`,
		"a\nb\tc\rd":              `a\nb\tc\rd`,
		"del\x7f c1\u009b":        `del\x7f c1\u009b`,
		"bad \xff utf8":           `bad \xff utf8`,
		"rtl \u202egnp.exe":       `rtl \u202egnp.exe`,
		"sep\u2028x":              `sep\u2028x`,
		`back\slash`:              `back\slash`,
	} {
		if got := escapeText(in); got != want {
			t.Errorf("escapeText(%q) = %q, want %q", in, got, want)
		}
	}
}

// hostile holds what a crafted table puts in front of a terminal.
const hostile = "\x1b]0;owned\x07\x1b[2J\nforged line"

// Text output never carries a control character from the table: not from
// properties (table show, inspect metadata), nor from file paths in
// manifests (files, inspect manifest), nor in errors.
func TestTextOutputEscapesControlCharacters(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	cat, err := sqlcat.Open(ctx, catalog.Config{Name: "default", URI: fx.uri})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	tbl, err := cat.LoadTable(ctx, fx.table.Ident)
	if err != nil {
		t.Fatal(err)
	}
	loc := tbl.Metadata.Location
	tbl, _, err = icetable.CommitChange(ctx, cat, tbl, icetable.Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{{
		Content: manifest.ContentData, FilePath: loc + "/data/region=eu/" + hostile + ".parquet", FileFormat: "PARQUET",
		Partition: []any{"eu"}, RecordCount: 1, FileSizeInBytes: 100,
	}}}, commit.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	fx.run(t, "table", "set-properties", "db.events", "evil="+hostile, hostile+"=key").mustSucceed(t)
	tbl, err = cat.LoadTable(ctx, fx.table.Ident)
	if err != nil {
		t.Fatal(err)
	}
	md := strings.TrimPrefix(tbl.MetadataLocation, "file://")
	mfs, err := icetable.ManifestFiles(ctx, tbl.IO, tbl.Metadata.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]result{
		"table show":       fx.run(t, "table", "show", "db.events"),
		"files":            fx.run(t, "files", "db.events"),
		"snapshots":        fx.run(t, "snapshots", "db.events"),
		"health":           fx.run(t, "health", "db.events"),
		"compact dry run":  fx.run(t, "compact", "db.events", "--dry-run"),
		"inspect metadata": runCLI(t, fx.env, "inspect", "metadata", md),
		"error":            runCLI(t, fx.env, "inspect", "metadata", md+hostile),
	}
	for i, mf := range mfs {
		runs["inspect manifest "+string(rune('0'+i))] = runCLI(t, fx.env, "inspect", "manifest", mf.Path)
	}
	runs["inspect manifest list"] = runCLI(t, fx.env, "inspect", "manifest", tbl.Metadata.CurrentSnapshot().ManifestList)
	sawPath := false
	for name, r := range runs {
		for _, out := range []string{r.stdout, r.stderr} {
			if i := strings.IndexFunc(out, func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f }); i >= 0 {
				t.Errorf("%s prints control character %q: %q", name, out[i], out[max(0, i-20):min(len(out), i+40)])
			}
			if strings.Contains(out, "\nforged line") {
				t.Errorf("%s prints a value's newline", name)
			}
			sawPath = sawPath || strings.Contains(out, `\x1b]0;owned\x07\x1b[2J\nforged line`)
		}
	}
	if !sawPath {
		t.Error("the escaped value appears in no output")
	}
}

func TestOneLineBoundsErrors(t *testing.T) {
	long := strings.Repeat("record r{fields:[", 100000)
	got := oneLine("parse avro schema: " + long + ": unexpected EOF")
	if len(got) > maxErrorLine || !strings.HasPrefix(got, "parse avro schema: ") || !strings.HasSuffix(got, ": unexpected EOF") || !strings.Contains(got, " … ") {
		t.Errorf("a %d-byte error printed as %d bytes: %q", len(long), len(got), got)
	}
	if got := oneLine("a\nb\x1b[2J"); got != `a; b\x1b[2J` {
		t.Errorf("oneLine = %q", got)
	}
}

// A long error loses its middle, never its end: the root cause, which Go
// errors put last, stays.
func TestOneLineKeepsTheRootCause(t *testing.T) {
	dir := "file:///lake/warehouse/shop.db/orders/metadata/"
	msg := "compaction commit: commit shop.orders: commit failed: write table metadata: create " + dir + strings.Repeat("0", 400) +
		".metadata.json: permission denied (committing snapshot 1, manifest list " + dir + "snap-1.avro); removed the 3 files this commit wrote"
	got := oneLine(msg)
	if len(got) > maxErrorLine || !strings.HasPrefix(got, "compaction commit: commit shop.orders: commit failed:") ||
		!strings.HasSuffix(got, "removed the 3 files this commit wrote") || !strings.Contains(got, "permission denied") {
		t.Errorf("oneLine kept %q", got)
	}
	// Cut on rune boundaries.
	if got := oneLine(strings.Repeat("é", 1000)); !utf8.ValidString(got) || len(got) > maxErrorLine {
		t.Errorf("oneLine cut a rune: %q", got)
	}
}

// Multi-line causes read as one line: cobra's suggestions and pgx's
// per-fallback connection errors.
func TestOneLineJoinsLines(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{
			"unknown command \"compat\" for \"icectl\"\n\nDid you mean this?\n\tcompact\n",
			`unknown command "compat" for "icectl"; Did you mean this? compact`,
		},
		{
			"failed to connect to `user=u database=db`:\n\t127.0.0.1:1 (localhost): dial error: refused\n\t[::1]:1 (localhost): dial error: refused\n\t127.0.0.1:1 (localhost): dial error: refused",
			"failed to connect to `user=u database=db`: 127.0.0.1:1 (localhost): dial error: refused; [::1]:1 (localhost): dial error: refused",
		},
	} {
		if got := oneLine(c.in); got != c.want {
			t.Errorf("oneLine(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
