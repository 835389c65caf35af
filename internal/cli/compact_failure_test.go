package cli

import (
	"strings"
	"testing"
)

// A failed group's error is printed once: in the report, not again in a
// log line nor in the final error line; the other group is stopped because
// of it: cancelled when it had started, not started when the failure came
// first (which one depends on scheduling).
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
	stopped := strings.Contains(r.stdout, " cancelled: stopped: group ") ||
		strings.Contains(r.stdout, " 0 cancelled, 1 not started")
	if failed == 1 && !stopped {
		t.Errorf("the other group is reported neither cancelled nor not started:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "see the report") {
		t.Errorf("error line: %q", r.stderr)
	}
}
