package cli

import (
	"strings"
	"testing"
)

// A failed group's error is printed once: in the report, not again in a
// log line nor in the final error line; groups stopped because of it are
// counted as cancelled.
func TestCompactFailurePrintedOnce(t *testing.T) {
	fx := newFixture(t)
	// The fixture's data files do not exist, so every group fails to read.
	r := fx.run(t, "compact", "db.events", "--rewrite-all")
	if r.code != ExitFailure {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	out := r.stdout + r.stderr
	// Both groups may fail before the first failure stops the other; each
	// failure is then reported once, on its own group.
	failed := strings.Count(r.stdout, " failed: rewrite group ")
	if n := strings.Count(out, "file not found"); failed == 0 || n != failed {
		t.Errorf("%d failed groups, their errors printed %d times:\n%s", failed, n, out)
	}
	if failed == 1 && !strings.Contains(r.stdout, " cancelled: stopped: group ") {
		t.Errorf("the other group is not reported cancelled:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "see the report") {
		t.Errorf("error line: %q", r.stderr)
	}
}
