package deleterows

import (
	"encoding/json"
	"maps"
	"os/exec"
	"strings"
	"testing"

	"github.com/icectl/icectl/internal/testing/testenv"
)

// TestCLI: `icectl delete-rows` as a process on the three-spec table: bad
// input exits 2 with one line and changes nothing, the dry run lists every
// file with its counts and changes no byte, and the run reports the rows
// before, deleted and after.
func TestCLI(t *testing.T) {
	e, files := threeSpecTable(t)
	icectl := func(args ...string) (string, string, int) {
		cmd := exec.Command(testenv.Icectl(t), append(append([]string{"delete-rows", e.Name()}, args...), e.CatalogFlags()...)...)
		return testenv.Run(t, cmd)
	}
	before := e.digest(t)
	for _, args := range [][]string{{}, {"--where", ""}, {"--where", "nope < 1"}} {
		out, errOut, code := icectl(args...)
		if code != 2 || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || errOut == "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one line", args, code, out, errOut)
		}
	}
	out, errOut, code := icectl("--where", cutoff, "--dry-run", "-o", "json")
	if code != 0 {
		t.Fatalf("dry run: exit %d: %s", code, errOut)
	}
	if !maps.Equal(before, e.digest(t)) {
		t.Fatal("bad input or the dry run changed the catalog or the warehouse")
	}
	var dry struct {
		DryRun bool `json:"dry_run"`
		Plan   Plan `json:"plan"`
	}
	if err := json.Unmarshal([]byte(out), &dry); err != nil {
		t.Fatal(err)
	}
	if !dry.DryRun || dry.Plan.Deleted != 27 || len(dry.Plan.Files) != 5 {
		t.Errorf("dry run: %s", out)
	}
	text, _, _ := icectl("--where", cutoff, "--dry-run")
	for _, name := range []string{"a", "b", "c", "f", "g"} {
		if !strings.Contains(text, files[name].FilePath) {
			t.Errorf("dry run does not list %s:\n%s", name, text)
		}
	}
	if strings.Contains(text, files["d"].FilePath) {
		t.Errorf("dry run lists d, which no row of matches:\n%s", text)
	}
	out, errOut, code = icectl("--where", cutoff, "-o", "json")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	var rep Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.RowsBefore != 41 || rep.Deleted != 27 || rep.RowsAfter != 14 {
		t.Errorf("report: %s", out)
	}
	for id, r := range e.model {
		if r.TS != nil && *r.TS < *ts("2024-02-01 00:00") {
			e.forget(id)
		}
	}
	e.checkModel(t)
}
