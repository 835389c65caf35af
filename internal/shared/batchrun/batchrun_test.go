package batchrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/metastore"
)

// A caller that sets only hooks (Warn, Sleep, Now) gets the default retry
// settings and keeps every hook: before, only Sleep survived.
func TestCommitOptionsKeepsEveryFieldSet(t *testing.T) {
	var warned, slept, asked bool
	in := commit.Options{
		Warn:  func(error) { warned = true },
		Sleep: func(context.Context, time.Duration) error { slept = true; return nil },
		Now:   func() time.Time { asked = true; return time.Time{} },
	}
	got := CommitOptions(in)
	d := commit.DefaultOptions()
	if got.NumRetries != d.NumRetries || got.MinWait != d.MinWait || got.MaxWait != d.MaxWait || got.TotalTimeout != d.TotalTimeout {
		t.Errorf("retry settings = %+v, want the defaults %+v", got, d)
	}
	if got.Warn == nil || got.Sleep == nil || got.Now == nil {
		t.Fatalf("hooks lost: Warn %v, Sleep %v, Now %v", got.Warn != nil, got.Sleep != nil, got.Now != nil)
	}
	got.Warn(errors.New("x"))
	_ = got.Sleep(context.Background(), 0)
	got.Now()
	if !warned || !slept || !asked {
		t.Errorf("hooks replaced: warned %v, slept %v, asked %v", warned, slept, asked)
	}
}

func TestCommitOptionsKeepsCallersRetrySettings(t *testing.T) {
	in := commit.Options{NumRetries: 0, MinWait: time.Millisecond}
	got := CommitOptions(in)
	if got.NumRetries != 0 || got.MinWait != time.Millisecond || got.MaxWait != 0 || got.TotalTimeout != 0 {
		t.Errorf("CommitOptions(%+v) = %+v, want it unchanged", in, got)
	}
}

func TestLimitsWithDefaults(t *testing.T) {
	for _, tc := range []struct {
		in, want Limits
		err      string
	}{
		{in: Limits{}, want: Limits{MaxCommits: 10, MaxFailedCommits: 10}},
		{in: Limits{MaxCommits: 3}, want: Limits{MaxCommits: 3, MaxFailedCommits: 3}},
		{in: Limits{MaxCommits: 3, MaxFailedCommits: 1, MaxDuration: time.Hour}, want: Limits{MaxCommits: 3, MaxFailedCommits: 1, MaxDuration: time.Hour}},
		{in: Limits{MaxCommits: -1}, err: "max commits is -1 but must be > 0"},
		{in: Limits{MaxFailedCommits: -2}, err: "max failed commits is -2 but must be >= 0"},
		{in: Limits{MaxDuration: -time.Second}, err: "max duration is -1s but must be >= 0"},
	} {
		got, err := tc.in.WithDefaults()
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%+v: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%+v: got %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestOutcome(t *testing.T) {
	errInvalid := errors.New("invalid x options")
	errUnits := errors.New("x unit failed")
	base := Run{Verb: "x", Unit: "unit", Reported: true, InvalidOptions: errInvalid, UnitsFailed: errUnits}
	with := func(f func(*Run)) Run { r := base; f(&r); return r }
	for _, tc := range []struct {
		name string
		r    Run
		err  error
		want Outcome
		msg  string
	}{
		{"done", base, nil, Done, ""},
		{"no report", Run{}, nil, Done, ""},
		{"failed units with partial progress", with(func(r *Run) { r.PartialProgress, r.Failed, r.Committed = true, 2, 1 }), nil, Partial, "x partly failed: 2 unit(s) failed, 0 commit(s) failed"},
		{"failed commit with partial progress", with(func(r *Run) { r.PartialProgress, r.FailedCommits = true, 1 }), nil, Partial, "1 commit(s) failed"},
		{"all dropped", with(func(r *Run) { r.Dropped = 2 }), nil, Conflict, "x committed nothing: 2 unit(s) dropped"},
		{"some dropped", with(func(r *Run) { r.Dropped, r.Committed = 1, 3 }), nil, Partial, "x partly committed: 3 unit(s) committed, 1 dropped"},
		{"state unknown", base, fmt.Errorf("commit: %w", metastore.ErrCommitStateUnknown), StateUnknown, "commit"},
		{"conflict", base, fmt.Errorf("commit: %w", metastore.ErrCommitConflict), Conflict, "commit"},
		{"too many failed", base, fmt.Errorf("%w: 3", ErrTooManyFailedCommits), Partial, "too many failed commits: 3"},
		{"invalid", base, fmt.Errorf("%w: max commits", errInvalid), Usage, "invalid x options: max commits"},
		{"units failed", with(func(r *Run) { r.Failed = 2 }), fmt.Errorf("%w: u1: boom", errUnits), Failed, "x failed: 2 unit(s) failed (see the report); nothing was committed (use --partial-progress to commit the units that succeed)"},
		{"units failed without report", with(func(r *Run) { r.Reported = false }), fmt.Errorf("%w: u1: boom", errUnits), Failed, "x unit failed: u1: boom"},
		{"other", base, errors.New("boom"), Failed, "boom"},
	} {
		got, err := tc.r.Outcome(tc.err)
		if got != tc.want {
			t.Errorf("%s: outcome %d, want %d", tc.name, got, tc.want)
		}
		switch {
		case tc.msg == "" && err != nil:
			t.Errorf("%s: error %v, want none", tc.name, err)
		case tc.msg != "" && (err == nil || !strings.Contains(err.Error(), tc.msg)):
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.msg)
		}
	}
}

func TestFill(t *testing.T) {
	warned := false
	maxCommits, maxFailed := 4, 0
	c := commit.Options{Warn: func(error) { warned = true }}
	if err := Fill(&maxCommits, &maxFailed, time.Minute, &c); err != nil {
		t.Fatal(err)
	}
	if maxCommits != 4 || maxFailed != 4 || c.NumRetries != commit.DefaultNumRetries || c.Warn == nil {
		t.Fatalf("Fill: max commits %d, max failed %d, commit %+v", maxCommits, maxFailed, c)
	}
	c.Warn(nil)
	if !warned {
		t.Error("Fill replaced Warn")
	}
	maxCommits = -3
	if err := Fill(&maxCommits, &maxFailed, 0, &c); err == nil || !strings.Contains(err.Error(), "max commits is -3") {
		t.Errorf("Fill with max commits -3: %v", err)
	}
}
