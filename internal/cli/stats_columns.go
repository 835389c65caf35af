package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/colstats"
	"github.com/icectl/icectl/internal/cli/config"
	"github.com/icectl/icectl/internal/shared/verbrun"
)

// StatsColumnsOptions are the inputs of `icectl stats columns`.
type StatsColumnsOptions struct {
	f          *Factory
	Catalog    config.Flags
	Table      string
	Columns    []string
	SnapshotID *int64
	Full       bool
	DryRun     bool
	Wait       string
}

// NewCmdStatsColumns returns `icectl stats columns`. runF replaces the
// run function in tests; nil runs the command.
func NewCmdStatsColumns(f *Factory, runF func(*StatsColumnsOptions) error) *cobra.Command {
	opts := &StatsColumnsOptions{f: f}
	var snapshot string
	cmd := &cobra.Command{
		Use:   "columns TABLE [--columns A,B] [--snapshot ID] [--full]",
		Short: "Compute columns' distinct-value sketches (NDV) of a snapshot and register them",
		Example: `  icectl stats columns shop.orders --catalog prod
  icectl stats columns shop.orders --columns customer_id,sku --dry-run --catalog prod -o json`,
		Long: `Compute, as Spark's compute_table_stats does, a Theta sketch of the
distinct values of each column (default: every top-level column of a
primitive type) over the live rows of a snapshot (default: main's head),
deletes applied: an apache-datasketches-theta-v1 blob per column, with its
estimate in the ndv property, in a Puffin file in the table's metadata
directory, registered as the snapshot's statistics file. The sketches are
Apache DataSketches' (4096 nominal entries, seed 9001): exact up to 4096
distinct values, within about 1.6% (one standard error) past that.
When every snapshot since an ancestor whose statistics file has sketches
of these columns is an append, the computation starts from those sketches
and reads only the data files appended since (the result is the same);
--full reads every live row. An ancestor's file that cannot be read is an
error (--full computes without it).
The blobs of the snapshot's previous statistics file (sketches of other
columns, other types of blob) are carried into the new file, and columns
it has a sketch of are not computed again: a snapshot whose file has a
sketch of every column asked for is nothing to do. --dry-run computes and
changes nothing.

` + exitCodesHelp + "\n\n" + catalogFlagsHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			var err error
			if opts.SnapshotID, err = snapshotFlag(cmd, snapshot); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runStatsColumns(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringSliceVar(&opts.Columns, "columns", nil, "the columns to sketch, comma-separated; a struct's field by its path, a.b (default: every top-level primitive column)")
	cmd.Flags().StringVar(&snapshot, "snapshot", "", "the snapshot to compute for (default: the current snapshot)")
	cmd.Flags().BoolVar(&opts.Full, "full", false, "read every live row, not an earlier snapshot's sketches and the rows appended since")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "compute and show the estimates, write and change nothing")
	addClaimWait(cmd, &opts.Wait)
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

type statsColumnView struct {
	Name     string  `json:"name"`
	FieldID  int     `json:"field_id"`
	Type     string  `json:"type"`
	NDV      int64   `json:"ndv"`
	Estimate float64 `json:"estimate"`
	Exact    bool    `json:"exact"`
}

type statsColumnsView struct {
	Table            string            `json:"table"`
	SnapshotID       int64             `json:"snapshot_id"`
	Mode             string            `json:"mode"`
	BaseSnapshotID   *int64            `json:"base_snapshot_id"`
	DataFiles        int               `json:"data_files"`
	Rows             int64             `json:"rows"`
	Columns          []statsColumnView `json:"columns"`
	CarriedBlobs     int               `json:"carried_blobs"`
	Replaces         string            `json:"replaces"`
	StatisticsPath   string            `json:"statistics_path"`
	FileSizeInBytes  int64             `json:"file_size_in_bytes"`
	DryRun           bool              `json:"dry_run"`
	Committed        bool              `json:"committed"`
	MetadataLocation string            `json:"metadata_location"`
}

func runStatsColumns(ctx context.Context, opts *StatsColumnsOptions) error {
	co := colstats.RunOptions{Columns: opts.Columns, SnapshotID: opts.SnapshotID, Full: opts.Full, CreatedBy: "icectl " + buildVersion()}
	return runStats(ctx, opts.f, statsRun[*colstats.Plan, *colstats.Report]{
		catalog: opts.Catalog, table: opts.Table, wait: opts.Wait, dryRun: opts.DryRun,
		verb: func(oc *openedCatalog, t *catalog.Table) verbrun.Verb[*colstats.Plan, *colstats.Report] {
			co.Commit = opts.f.CommitOptions(t.Metadata.Properties)
			return colstats.Verb(oc.cat, co, opts.f.CommitOptions)
		},
		badFile: colstats.ErrBadFile, noSnapshot: colstats.ErrNoSnapshot,
		plan: func(r *colstats.Report) *colstats.Plan { return r.Plan },
		idle: func(p *colstats.Plan, _ *colstats.Report) string { return p.Idle },
		render: func(t *catalog.Table, p *colstats.Plan, r *colstats.Report) error {
			return writeStatsColumns(opts.f, statsColumns(t, p, r, opts.DryRun))
		},
	})
}

func statsColumns(t *catalog.Table, p *colstats.Plan, r *colstats.Report, dryRun bool) statsColumnsView {
	res := p.Result
	v := statsColumnsView{Table: t.Ident.String(), SnapshotID: p.SnapshotID, Mode: "full", DataFiles: res.DataFiles, Rows: res.Rows,
		CarriedBlobs: len(p.Carried), DryRun: dryRun, MetadataLocation: t.MetadataLocation}
	if res.Base != nil {
		v.Mode, v.BaseSnapshotID = "incremental", &res.Base.SnapshotID
	}
	if p.Prev != nil {
		v.Replaces = p.Prev.StatisticsPath
	}
	for i, c := range res.Columns {
		sk := res.Sketches[i]
		v.Columns = append(v.Columns, statsColumnView{Name: c.Name, FieldID: c.ID, Type: c.Type.String(),
			NDV: sk.NDV(), Estimate: sk.Estimate(), Exact: sk.Theta == 1<<63-1})
	}
	if r != nil {
		v.StatisticsPath, v.FileSizeInBytes, v.Committed, v.MetadataLocation = r.File.StatisticsPath, r.File.FileSizeInBytes, true, r.Committed.MetadataLocation
	}
	return v
}

func writeStatsColumns(f *Factory, v statsColumnsView) error {
	if f.Output == outputJSON {
		return writeJSON(f.Out, v)
	}
	from := fmt.Sprintf("%d rows of %d data files", v.Rows, v.DataFiles)
	if v.BaseSnapshotID != nil {
		from = fmt.Sprintf("snapshot %d's sketches and the %d rows of %d data files appended since", *v.BaseSnapshotID, v.Rows, v.DataFiles)
	}
	tb := statsHeader(f.Out, v.Table, v.DryRun, fmt.Sprintf("column sketches of snapshot %d (%s, from %s)", v.SnapshotID, v.Mode, from))
	tb.row("  COLUMN", "TYPE", "NDV")
	for _, c := range v.Columns {
		ndv := fmt.Sprint(c.NDV)
		if !c.Exact {
			ndv = fmt.Sprintf("~%d", c.NDV)
		}
		tb.row("  "+c.Name, c.Type, ndv)
	}
	if v.CarriedBlobs > 0 {
		tb.row("  carried", fmt.Sprintf("%d blobs of %s", v.CarriedBlobs, v.Replaces))
	}
	return statsFooter(tb, v.Committed, v.StatisticsPath, v.FileSizeInBytes, v.MetadataLocation)
}
