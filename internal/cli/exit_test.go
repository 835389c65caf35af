package cli

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/compact"
	"github.com/icectl/icectl/expire"
)

// TestCompactExitCodes: a run whose groups were all dropped because
// concurrent commits removed their inputs lost a conflict (4); one that
// committed some groups and dropped others is partial (3).
func TestCompactExitCodes(t *testing.T) {
	groups := func(statuses ...string) *compact.Report {
		r := &compact.Report{}
		for _, s := range statuses {
			r.Groups = append(r.Groups, compact.GroupResult{Status: s})
		}
		return r
	}
	for _, c := range []struct {
		name    string
		partial bool
		rep     *compact.Report
		want    int
	}{
		{"all committed", false, groups(compact.StatusCommitted, compact.StatusRebased), ExitOK},
		{"nothing to do", false, groups(), ExitOK},
		{"all dropped", false, groups(compact.StatusDropped, compact.StatusDropped), ExitConflict},
		{"all dropped, partial progress", true, groups(compact.StatusDropped), ExitConflict},
		{"some dropped", false, groups(compact.StatusCommitted, compact.StatusDropped), ExitPartial},
		{"some failed, partial progress", true, groups(compact.StatusCommitted, compact.StatusFailed), ExitPartial},
	} {
		got := exitCode(context.Background(), outcomeExit(compact.Outcome(compact.Options{PartialProgress: c.partial}, c.rep, nil)))
		if got != c.want {
			t.Errorf("%s: exit %d, want %d", c.name, got, c.want)
		}
	}
}

// TestErrorsMapByCause: an error a command returns without choosing a
// code gets the README's code for its cause.
func TestErrorsMapByCause(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{fmt.Errorf("rollback: %w", catalog.ErrCommitConflict), ExitConflict},
		{fmt.Errorf("expire: %w", catalog.ErrCommitStateUnknown), ExitCommitState},
		{fmt.Errorf("x: %w", expire.ErrInvalidOptions), ExitUsage},
		{fmt.Errorf("x: %w", compact.ErrInvalidOptions), ExitUsage},
		{errors.New("disk on fire"), ExitFailure},
	} {
		cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return c.err }}
		markRunErrors(cmd)
		if got := exitCode(context.Background(), cmd.RunE(cmd, nil)); got != c.want {
			t.Errorf("%v: exit %d, want %d", c.err, got, c.want)
		}
	}
}
