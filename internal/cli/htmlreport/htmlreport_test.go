package htmlreport

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/health"
	"github.com/icectl/icectl/maintain"
)

// TestWriteFileKeepsOldPageOnFailure: a render that fails leaves the old
// page as it was and nothing beside it; one that succeeds replaces it.
func TestWriteFileKeepsOldPageOnFailure(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "page.html")
	if err := os.WriteFile(p, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(p, func(w io.Writer) error {
		io.WriteString(w, "half a page")
		return errors.New("boom")
	})
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("WriteFile: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("the old page became %q", b)
	}
	if err := WriteFile(p, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("the page is %q", b)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the old page's 0640", fi.Mode().Perm())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files left beside the page: %v", ents)
	}
}

func TestCheckPath(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "p.html"), ""},
		{dir, "is a directory"},
		{filepath.Join(dir, "missing", "p.html"), "no such file or directory"},
		{"", "empty"},
	} {
		err := CheckPath(c.path)
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckPath(%q) = %v, want %q", c.path, err, c.want)
		}
	}
}

// TestEmptyPages: a table without snapshots, a report judged from
// partition statistics (no histogram) and an empty fleet render.
func TestEmptyPages(t *testing.T) {
	var b bytes.Buffer
	r := health.Report{Table: "ns.t", FormatVersion: 2, NowMS: time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC).UnixMilli(),
		Partitions: []health.Partition{{Partition: ""}}, Findings: []health.Finding{}}
	if err := Table(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"No findings", "Not known", "(unpartitioned)", "2026-12-07 00:00:00 UTC"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	b.Reset()
	if err := Fleet(&b, &maintain.Plan{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Nothing due: every table is healthy") {
		t.Errorf("empty fleet page:\n%s", b.String())
	}
}

// TestPageEscapes: names and messages are text, never markup.
func TestPageEscapes(t *testing.T) {
	var b bytes.Buffer
	r := health.Report{Table: `ns.<script>x</script>`, Findings: []health.Finding{{Kind: "k", Message: `a "<b>" & c`, Recommendation: "icectl compact 'x'"}}}
	if err := Table(&b, r); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); strings.Contains(s, "<script>") || strings.Contains(s, "<b>") {
		t.Errorf("unescaped markup in the page")
	}
}

// TestFleetRetention: the fleet page lists the tables whose policy sets
// retention with the plan's counts, marked by their JSON paths.
func TestFleetRetention(t *testing.T) {
	p := &maintain.Plan{NowMS: 1,
		Due: []*maintain.TablePlan{{Table: "db.old", Due: []maintain.Due{{Verb: maintain.VerbRetention, Reason: "r"}}, Off: []maintain.Skip{}, Attention: []string{},
			Retention: &health.RetentionStats{Column: "ts", Keep: "90d", WholeFiles: 2, WholeRows: 20, PartialFiles: 1, PartialRowsMax: 7}}},
		Healthy: []*maintain.TablePlan{{Table: "db.fresh", Due: []maintain.Due{}, Off: []maintain.Skip{}, Attention: []string{},
			Retention: &health.RetentionStats{Column: "d", Keep: "30d"}}, {Table: "db.none"}},
	}
	var b bytes.Buffer
	if err := Fleet(&b, p); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Rows past retention", `data-k="due.0.retention.whole_files">2<`, `data-k="due.0.retention.whole_rows">20<`,
		`data-k="due.0.retention.partial_files">1<`, `data-k="due.0.retention.partial_rows_at_most">7<`, `data-k="nothing_due.0.retention.whole_files">0<`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(b.String(), "nothing_due.1.retention") {
		t.Error("a table without retention is listed")
	}
}
