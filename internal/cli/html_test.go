package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	icetable "github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/shared/bytesize"
	icefx "github.com/icectl/icectl/internal/testing/fixture"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// TestHealthHTMLInChromium opens the demo table's health page in headless
// Chromium: it renders, the screenshot is not blank, every number the
// rendered page marks equals `health --output json`'s, and the catalog and
// warehouse are byte-identical afterwards.
func TestHealthHTMLInChromium(t *testing.T) {
	chromium := testenv.Need(t, testenv.Chromium, "headless Chromium (Debian's chromium)")
	d := newDemo(t)
	before := fileTree(t, d.dir)
	want := d.run(t, "health", "shop.orders", "-o", "json").mustSucceed(t).decodeJSON(t)
	page := filepath.Join(t.TempDir(), "health.html")
	d.run(t, "health", "shop.orders", "--html", page).mustSucceed(t)
	if !reflect.DeepEqual(before, fileTree(t, d.dir)) {
		t.Fatal("health --html changed the catalog or the warehouse")
	}
	checkSelfContained(t, page)
	marks := checkInChromium(t, chromium, page, os.Getenv("ICECTL_HTML_SCREENSHOT_TABLE"))
	checkMarks(t, marks, want)
	// Every partition, bucket and finding is on the page.
	parts := at(t, want, "partitions").([]any)
	findings := at(t, want, "findings").([]any)
	if len(parts) == 0 || len(findings) == 0 {
		t.Fatalf("the demo table has %d partitions and %d findings", len(parts), len(findings))
	}
	for _, k := range []string{
		fmt.Sprintf("partitions.%d.data_files.size_histogram.4.files", len(parts)-1),
		fmt.Sprintf("partitions.%d.delete_files.delete_ratio", len(parts)-1),
		fmt.Sprintf("findings.%d.recommendation", len(findings)-1),
		"delete_files.equality_deletes.count", "delete_files.deletion_vectors.count", "delete_files.position_deletes.count",
		"snapshots.per_day.0.count", "metadata_files.log_per_day.0.count", "data_files.size_histogram.4.files",
	} {
		if _, ok := marks[k]; !ok {
			t.Errorf("the page lacks %s", k)
		}
	}

}

// TestHTMLReplacesPage: an existing page is replaced whole, keeping its
// permissions, with nothing left beside it.
func TestHTMLReplacesPage(t *testing.T) {
	fx := newFixture(t)
	page := filepath.Join(t.TempDir(), "health.html")
	if err := os.WriteFile(page, []byte("old page"), 0o600); err != nil {
		t.Fatal(err)
	}
	fx.run(t, "health", "db.events", "--html", page).mustSucceed(t)
	b, err := os.ReadFile(page)
	if err != nil || !bytes.Contains(b, []byte(`<span data-k="table">db.events</span>`)) {
		t.Errorf("replaced page: %v %.300s", err, b)
	}
	if fi, err := os.Stat(page); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("replaced page: %v %v", fi, err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(page)); len(ents) != 1 {
		t.Errorf("files beside the page: %v", ents)
	}
}

// TestMaintainHTMLInChromium: the fleet page of a dry run over 50 small
// tables ranks the tables with work due as the JSON plan does, with the
// same debts and verbs, and changes no byte of the catalog or warehouse.
func TestMaintainHTMLInChromium(t *testing.T) {
	chromium := testenv.Need(t, testenv.Chromium, "headless Chromium (Debian's chromium)")
	c := icefx.NewSQLite(t)
	flags := []string{"--catalog-uri", c.URI, "--catalog-name", icefx.CatalogName}
	for i := range 50 {
		var props map[string]string
		if i%6 == 1 {
			// Every snapshot but the current one is past its age.
			props = map[string]string{"history.expire.max-snapshot-age-ms": "1"}
		}
		tb := c.Table(t, icefx.TableOptions{Namespace: "fleet", Name: fmt.Sprintf("t%02d", i), Props: props})
		tbl := tb.Load(t)
		// Table i has i%9 small files (5 or more are due for compaction)
		// and every seventh a position delete (a third of a file's rows).
		var files []manifest.DataFile
		for j := range i % 9 {
			files = append(files, icefx.Listed(fmt.Sprintf("%s/data/f%d.parquet", tbl.Metadata.Location, j), nil, 30, int64(1000*(j+1))))
		}
		switch {
		case i%5 == 1:
			// One commit per file: a manifest each.
			for _, f := range files {
				tbl = tb.Append(t, tbl, f)
			}
		case len(files) > 0:
			tbl = tb.Append(t, tbl, files...)
		}
		if i%7 == 3 && len(files) > 0 {
			pos := manifest.DataFile{Content: manifest.ContentPositionDeletes, FilePath: tbl.Metadata.Location + "/data/pos.parquet",
				FileFormat: "PARQUET", RecordCount: 10, FileSizeInBytes: 700, Partition: []any{}}
			ref := files[0].FilePath
			pos.ReferencedDataFile = &ref
			tb.Commit(t, tbl, icetable.Change{Operation: spec.OperationDelete, AddDeletes: []manifest.DataFile{pos}})
		}
	}
	c.Close()
	before := fileTree(t, c.Dir)
	env := map[string]string{"HOME": t.TempDir()}
	want := runCLI(t, env, append([]string{"maintain", "--dry-run", "-o", "json"}, flags...)...).mustSucceed(t).decodeJSON(t)
	page := filepath.Join(t.TempDir(), "fleet.html")
	runCLI(t, env, append([]string{"maintain", "--dry-run", "--html", page}, flags...)...).mustSucceed(t)
	if !reflect.DeepEqual(before, fileTree(t, c.Dir)) {
		t.Fatal("maintain --dry-run --html changed the catalog or the warehouse")
	}
	checkSelfContained(t, page)
	marks := checkInChromium(t, chromium, page, os.Getenv("ICECTL_HTML_SCREENSHOT_FLEET"))
	checkMarks(t, marks, want)
	due, healthy := at(t, want, "due").([]any), at(t, want, "nothing_due").([]any)
	if len(due) < 10 || len(healthy) < 10 || len(due)+len(healthy) != 50 {
		t.Fatalf("the fleet has %d tables due and %d healthy", len(due), len(healthy))
	}
	for _, k := range []string{fmt.Sprintf("due.%d.debt", len(due)-1), fmt.Sprintf("due.%d.due.0.estimated_bytes", len(due)-1),
		fmt.Sprintf("nothing_due.%d.table", len(healthy)-1)} {
		if _, ok := marks[k]; !ok {
			t.Errorf("the page lacks %s", k)
		}
	}
}

// TestHTMLBadInput: a page that cannot be written is refused before
// anything is read, in one line, and a fleet page needs --dry-run.
func TestHTMLBadInput(t *testing.T) {
	d := newFixture(t)
	before := fileTree(t, d.dir)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"health", "db.events", "--html", filepath.Join(d.dir, "no", "such", "dir", "p.html")}, "invalid --html"},
		{[]string{"health", "db.events", "--html", d.dir}, "is a directory"},
		{[]string{"health", "db.events", "--html", ""}, "the file name is empty"},
		{[]string{"maintain", "--html", filepath.Join(t.TempDir(), "p.html")}, "--html needs --dry-run"},
		{[]string{"maintain", "--dry-run", "--html", filepath.Join(d.dir, "no", "p.html")}, "invalid --html"},
	} {
		r := d.run(t, c.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, r.code, r.stderr, c.want)
		}
	}
	if !reflect.DeepEqual(before, fileTree(t, d.dir)) {
		t.Fatal("refused runs changed files")
	}
}

// checkSelfContained fails when the page could fetch anything: no script,
// no external stylesheet, image or font, no URL of a network scheme.
func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	low := strings.ToLower(string(b))
	for _, bad := range []string{"<script", "<link", "<img", "<iframe", "src=", "href=", "url(", "@import", "http://", "https://"} {
		if strings.Contains(low, bad) {
			t.Errorf("the page holds %q: it must need nothing from the network", bad)
		}
	}
}

var markRE = regexp.MustCompile(`data-k="([^"]+)"[^>]*>([^<]*)<`)

// checkInChromium renders page in headless Chromium: a screenshot that
// decodes and is not blank (copied to keep when it is not ""), and the
// rendered DOM, whose marked values it returns by JSON path (each path
// with every value it shows).
func checkInChromium(t *testing.T, chromium, page, keep string) map[string][]string {
	t.Helper()
	dir := t.TempDir()
	shot := filepath.Join(dir, "page.png")
	// The screenshot and the DOM at once, each browser with a profile and
	// home of its own.
	start := func(name string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
		home := filepath.Join(dir, name)
		args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + filepath.Join(home, "profile"),
			"--window-size=1200,2000", "--hide-scrollbars"}, append(args, "file://"+page)...)
		cmd := exec.Command(chromium, args...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		cmd.Env = append(os.Environ(), "HOME="+home)
		if err := cmd.Start(); err != nil {
			t.Fatalf("chromium: %v", err)
		}
		return cmd, &out, &errOut
	}
	shotCmd, _, shotErr := start("shot", "--screenshot="+shot)
	domCmd, domOut, domErr := start("dom", "--dump-dom")
	for _, c := range []struct {
		cmd    *exec.Cmd
		stderr *bytes.Buffer
	}{{shotCmd, shotErr}, {domCmd, domErr}} {
		if err := c.cmd.Wait(); err != nil {
			t.Fatalf("chromium %v: %v\n%s", c.cmd.Args, err, c.stderr.String())
		}
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("chromium wrote no screenshot: %v", err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	bounds := img.Bounds()
	colours := map[[3]uint32]bool{}
	inked := 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, b >> 8}] = true
			if r>>8 < 240 || g>>8 < 240 || b>>8 < 240 {
				inked++
			}
		}
	}
	total := bounds.Dx() * bounds.Dy()
	if bounds.Dx() != 1200 || inked*50 < total || len(colours) < 8 {
		t.Errorf("the screenshot looks blank: %v, %d of %d pixels not white, %d colours", bounds, inked, total, len(colours))
	}
	if keep != "" {
		data, err := os.ReadFile(shot)
		if err == nil {
			err = os.WriteFile(keep, data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}

	dom := domOut.String()
	marks := map[string][]string{}
	for _, m := range markRE.FindAllStringSubmatch(dom, -1) {
		marks[m[1]] = append(marks[m[1]], html.UnescapeString(m[2]))
	}
	if len(marks) == 0 {
		t.Fatalf("the rendered DOM marks no number:\n%.2000s", dom)
	}
	return marks
}

// checkMarks compares every value the page marks with the JSON document's
// at the mark's path, shown as the page shows it: sizes as bytesize
// formats them, ratios as percents with one decimal.
func checkMarks(t *testing.T, marks map[string][]string, doc map[string]any) {
	t.Helper()
	for k, shown := range marks {
		var path []any
		for _, p := range strings.Split(k, ".") {
			if i, err := strconv.Atoi(p); err == nil {
				path = append(path, i)
			} else {
				path = append(path, p)
			}
		}
		var want string
		switch v := at(t, doc, path...).(type) {
		case json.Number:
			switch {
			case strings.HasSuffix(k, "bytes"):
				n, _ := v.Int64()
				want = bytesize.Format(n)
			case strings.HasSuffix(k, "ratio"):
				f, _ := v.Float64()
				want = fmt.Sprintf("%.1f%%", f*100)
			default:
				want = v.String()
			}
		case string:
			want = v
			if k != "table" && strings.HasSuffix(k, ".partition") && v == "" {
				want = "(unpartitioned)"
			}
		default:
			t.Errorf("%s: %T %v in the JSON", k, v, v)
			continue
		}
		for _, s := range shown {
			if strings.TrimSpace(s) != want {
				t.Errorf("%s: the page shows %q, the JSON %q", k, s, want)
			}
		}
	}
}
