package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/compact"
	"github.com/icectl/icectl/health"
)

// demoCompact is the compaction step of `icectl demo`: it compacts the
// demo table with the defaults (partial progress) and returns the run's
// report and the table's health afterwards.
func demoCompact(ctx context.Context, f *Factory, cat catalog.Catalog, t *catalog.Table, now time.Time) (*compactReportView, *health.Report, error) {
	fmt.Fprintln(f.ErrOut, "compacting the demo table")
	co := compact.Options{PartialProgress: true, Commit: f.CommitOptions(t.Metadata.Properties)}
	p, err := compact.PlanTable(ctx, t, co)
	if err != nil {
		return nil, nil, fmt.Errorf("demo compaction: %w", err)
	}
	rep, err := compact.Execute(ctx, cat, t, p, co)
	if err != nil {
		return nil, nil, fmt.Errorf("demo compaction: %w", err)
	}
	v := reportView(rep)
	after, err := cat.LoadTable(ctx, t.Ident)
	if err != nil {
		return nil, nil, err
	}
	h, err := tableHealth(ctx, after, now)
	if err != nil {
		return nil, nil, err
	}
	return &v, &h, nil
}

func writeDemoCompaction(w io.Writer, v demoView) error {
	if v.Compaction == nil || v.HealthAfter == nil {
		return nil
	}
	fmt.Fprintln(w, "\ncompaction")
	if err := writeCompactText(w, *v.Compaction); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nhealth after compaction")
	return writeHealthText(w, *v.HealthAfter)
}
