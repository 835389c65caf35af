package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/internal/cli/config"
	"github.com/icectl/icectl/internal/shared/bytesize"
	"github.com/icectl/icectl/internal/shared/verbrun"
	"github.com/icectl/icectl/partstats"
)

// NewCmdStats returns `icectl stats`.
func NewCmdStats(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "stats <command>",
		Short: "Table statistics: compute and register partition statistics and column sketches",
		Example: `  icectl stats partitions shop.orders --catalog prod
  icectl stats columns shop.orders --catalog prod`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(NewCmdStatsPartitions(f, nil), NewCmdStatsColumns(f, nil))
	return cmd
}

// StatsPartitionsOptions are the inputs of `icectl stats partitions`.
type StatsPartitionsOptions struct {
	f          *Factory
	Catalog    config.Flags
	Table      string
	SnapshotID *int64
	Full       bool
	DryRun     bool
	Wait       string
}

// NewCmdStatsPartitions returns `icectl stats partitions`. runF replaces
// the run function in tests; nil runs the command.
func NewCmdStatsPartitions(f *Factory, runF func(*StatsPartitionsOptions) error) *cobra.Command {
	opts := &StatsPartitionsOptions{f: f}
	var snapshot string
	cmd := &cobra.Command{
		Use:   "partitions TABLE [--snapshot ID]",
		Short: "Compute a snapshot's partition statistics file and register it",
		Example: `  icectl stats partitions shop.orders --catalog prod
  icectl stats partitions shop.orders --snapshot 4358109269869137293 --dry-run --catalog prod -o json
  icectl stats partitions shop.orders --full --catalog prod`,
		Long: `Compute the partition statistics of a snapshot (default: main's head), as
Spark's compute_partition_stats does: one row per partition and spec with
its data files, records and bytes, position-delete files, deletion vectors
and equality deletes and the last snapshot that changed it, written as a
Parquet file in the table's metadata directory and registered in the
table's partition-statistics. The computation starts from the newest
ancestor snapshot that has a file (reading only the manifests each snapshot
since added) or, without one or with --full, reads every manifest of the
snapshot. A previous file that cannot be read is an error (--full computes
without it). A snapshot that has a file, an unpartitioned table or a
snapshot without files is nothing to do. --dry-run computes and changes
nothing.

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
			return runStatsPartitions(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&snapshot, "snapshot", "", "the snapshot to compute for (default: the current snapshot)")
	cmd.Flags().BoolVar(&opts.Full, "full", false, "compute from the snapshot's manifests, not from an earlier snapshot's file")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "compute and show the statistics, write and change nothing")
	addClaimWait(cmd, &opts.Wait)
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

type statsPartitionsView struct {
	Table               string `json:"table"`
	SnapshotID          int64  `json:"snapshot_id"`
	Mode                string `json:"mode"`
	BaseSnapshotID      *int64 `json:"base_snapshot_id"`
	SnapshotsRead       int    `json:"snapshots_read"`
	ManifestsRead       int    `json:"manifests_read"`
	Partitions          int    `json:"partitions"`
	DataFiles           int64  `json:"data_files"`
	DataRecords         int64  `json:"data_records"`
	DataBytes           int64  `json:"data_bytes"`
	PositionDeleteFiles int64  `json:"position_delete_files"`
	DeletionVectors     int64  `json:"deletion_vectors"`
	EqualityDeleteFiles int64  `json:"equality_delete_files"`
	StatisticsPath      string `json:"statistics_path"`
	FileSizeInBytes     int64  `json:"file_size_in_bytes"`
	DryRun              bool   `json:"dry_run"`
	Committed           bool   `json:"committed"`
	MetadataLocation    string `json:"metadata_location"`
}

func runStatsPartitions(ctx context.Context, opts *StatsPartitionsOptions) error {
	po := partstats.RunOptions{SnapshotID: opts.SnapshotID, Full: opts.Full}
	return runStats(ctx, opts.f, statsRun[*partstats.Plan, *partstats.Report]{
		catalog: opts.Catalog, table: opts.Table, wait: opts.Wait, dryRun: opts.DryRun,
		verb: func(oc *openedCatalog, t *catalog.Table) verbrun.Verb[*partstats.Plan, *partstats.Report] {
			po.Commit = opts.f.CommitOptions(t.Metadata.Properties)
			return partstats.Verb(oc.cat, po, opts.f.CommitOptions)
		},
		badFile: partstats.ErrBadFile, noSnapshot: partstats.ErrNoSnapshot,
		plan: func(r *partstats.Report) *partstats.Plan { return r.Plan },
		idle: func(p *partstats.Plan, r *partstats.Report) string {
			if r != nil && r.Idle != "" {
				return r.Idle
			}
			return p.Idle
		},
		render: func(t *catalog.Table, p *partstats.Plan, r *partstats.Report) error {
			v := statsView(t.Ident.String(), p.Result, opts.DryRun, t.MetadataLocation)
			if r != nil {
				v.StatisticsPath, v.FileSizeInBytes, v.Committed, v.MetadataLocation = r.File.StatisticsPath, r.File.FileSizeInBytes, true, r.Committed.MetadataLocation
			}
			return writeStatsPartitions(opts.f, v)
		},
	})
}

func writeStatsPartitions(f *Factory, v statsPartitionsView) error {
	if f.Output == outputJSON {
		return writeJSON(f.Out, v)
	}
	from := "every manifest of the snapshot"
	if v.BaseSnapshotID != nil {
		from = fmt.Sprintf("snapshot %d's file and the manifests of %d snapshots since", *v.BaseSnapshotID, v.SnapshotsRead)
	}
	tb := statsHeader(f.Out, v.Table, v.DryRun, fmt.Sprintf("partition statistics of snapshot %d (%s, from %s)", v.SnapshotID, v.Mode, from))
	tb.row("  partitions", v.Partitions)
	tb.row("  data files", fmt.Sprintf("%d, %d rows, %s", v.DataFiles, v.DataRecords, bytesize.Format(v.DataBytes)))
	tb.row("  delete files", fmt.Sprintf("%d position, %d deletion vectors, %d equality", v.PositionDeleteFiles, v.DeletionVectors, v.EqualityDeleteFiles))
	tb.row("  manifests read", v.ManifestsRead)
	return statsFooter(tb, v.Committed, v.StatisticsPath, v.FileSizeInBytes, v.MetadataLocation)
}

// statsRun is what the two stats commands tell runStats: how to make
// their verb, the error of an unreadable earlier file, why a run had
// nothing to do, and how to render a plan (dry run) or its report.
type statsRun[P, R any] struct {
	catalog    config.Flags
	table      string
	wait       string
	dryRun     bool
	verb       func(oc *openedCatalog, t *catalog.Table) verbrun.Verb[P, R]
	badFile    error
	noSnapshot error
	plan       func(r R) P // the plan a report is of
	idle       func(p P, r R) string
	render     func(t *catalog.Table, p P, r R) error
}

// runStats runs a stats command through the verb runner: a metadata
// file path is refused unless dry, a refusal (a bad column, a snapshot
// the table lacks, an unreadable earlier file) comes before the claim,
// and a run with nothing to do says why in one line.
func runStats[P, R any](ctx context.Context, f *Factory, s statsRun[P, R]) error {
	if isMetadataFile(s.table) && !s.dryRun {
		return refuseMetadataFile(s.table, "register statistics", true)
	}
	oc, t, err := loadTable(ctx, f, s.catalog, s.table)
	if err != nil {
		return err
	}
	defer oc.Close()
	v := s.verb(oc, t)
	res, err := runVerb(ctx, f, oc, t, v, s.wait, s.dryRun)
	if err != nil {
		hint := ""
		switch {
		case errors.Is(err, s.badFile):
			hint = "; nothing was changed (--full computes without it)"
		case errors.Is(err, s.noSnapshot):
			hint = fmt.Sprintf(" (see icectl snapshots %s)", t.Ident)
		}
		return rewriteExit(oc.cfg, t.Ident, fmt.Errorf("%s %s: %w%s", v.Name, t.Ident, err, hint),
			"may or may not have its statistics registered", "the statistics of %s were not registered; run it again")
	}
	p, r := res.Plan, *new(R)
	if res.Executed {
		p, r = s.plan(res.Report), res.Report
	}
	if why := s.idle(p, r); why != "" {
		_, err := printf(f.Out, "%s: nothing to %s: %s\n", t.Ident, v.Name, why)
		return err
	}
	return s.render(res.Table, p, r)
}

// statsHeader prints a stats command's first line and returns the table
// its rows go in.
func statsHeader(w io.Writer, name string, dryRun bool, what string) *table {
	if dryRun {
		printf(w, "%s: dry run, nothing changed; %s\n", name, what)
	} else {
		printf(w, "%s: registered %s\n", name, what)
	}
	return newTable(w)
}

// statsFooter adds the registered file's rows and flushes tb.
func statsFooter(tb *table, committed bool, path string, size int64, metadata string) error {
	if committed {
		tb.row("  file", fmt.Sprintf("%s (%s)", path, bytesize.Format(size)))
		tb.row("  metadata", metadata)
	}
	return tb.flush()
}

func statsView(name string, res *partstats.Result, dryRun bool, loc string) statsPartitionsView {
	v := statsPartitionsView{Table: name, SnapshotID: res.SnapshotID, Mode: "full", SnapshotsRead: res.Snapshots,
		ManifestsRead: res.Manifests, Partitions: len(res.Rows), DryRun: dryRun, MetadataLocation: loc}
	if res.Base != nil {
		v.Mode = "incremental"
		id := res.Base.SnapshotID
		v.BaseSnapshotID = &id
	}
	for _, r := range res.Rows {
		v.DataFiles += int64(r.DataFileCount)
		v.DataRecords += r.DataRecordCount
		v.DataBytes += r.TotalDataFileSizeInBytes
		v.PositionDeleteFiles += int64(r.PositionDeleteFileCount)
		v.DeletionVectors += int64(r.DVCount)
		v.EqualityDeleteFiles += int64(r.EqualityDeleteFileCount)
	}
	return v
}
