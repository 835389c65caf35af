package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/health"
	"github.com/icectl/icectl/iceberg/scan"
	icetable "github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/cli/config"
	"github.com/icectl/icectl/internal/cli/htmlreport"
	"github.com/icectl/icectl/internal/shared/bytesize"
	"github.com/icectl/icectl/maintain"
)

// HealthOptions are the inputs of `icectl health`.
type HealthOptions struct {
	f       *Factory
	Catalog config.Flags
	Table   string
	now     func() time.Time
	root    *cobra.Command // the command tree recommendations must exist in
	// FailOnFindings makes a report with findings exit ExitFindings, for
	// monitoring.
	FailOnFindings bool
	// FromStats judges the table from its partition statistics file
	// instead of its manifests.
	FromStats bool
	// HTML is the file the report is also written to as a page ("": none).
	HTML string
	// Policy is maintain's policy file (--policy, "": none): the table's
	// retention setting, resolved as maintain resolves it, is judged.
	Policy string
	policy *maintain.Policy
}

// NewCmdHealth returns `icectl health`. runF replaces the run function in
// tests; nil runs the command.
func NewCmdHealth(f *Factory, runF func(*HealthOptions) error) *cobra.Command {
	opts := &HealthOptions{f: f, now: time.Now}
	cmd := &cobra.Command{
		Use:   "health TABLE",
		Short: "Report small files, deletes, manifests, snapshots and metadata files, with recommendations",
		Long: `Report the health of a table's current snapshot: data files per partition with a
size histogram and the small files (below 0.75 x write.target-file-size-bytes,
default 512 MiB), delete files by kind with the delete ratio, manifests, the
snapshot history and the metadata files, and on a table with a sort order the
data files not written in it, and the data files whose column metrics show an
identity partition column stored otherwise than their partition value (such
as all NULL: engines that prune on metrics skip their rows; icectl verify
partitions also reads the files whose metrics do not say). Each finding comes with the icectl
command recommended for it, complete with the catalog flags given (only
commands this build has are recommended). Nothing is changed.

With --from-stats the report is judged from the current snapshot's partition
statistics file (icectl stats partitions) and the manifest list, without
reading the manifests: on a large table two reads instead of every manifest.
File sizes are then each partition's average, every position-delete file
counts as small, and unsorted files, resurrected rows and partition values are not judged (a
note on stderr says so). A snapshot without the file is an error.

With --html FILE the report is also drawn as one self-contained HTML page
(charts as inline SVG, nothing fetched when it is viewed), written to a
temporary file beside FILE and renamed over it.

With --policy FILE (maintain's policy file, docs/maintain.md) the table's
retention setting, resolved as icectl maintain resolves it, is judged: the
live data files whose partition values or column metrics prove every row past
it (with their live rows) and those that may hold rows past it (with an upper
bound on those rows), and a rows-past-retention finding recommends the
delete-rows command maintain's retention runs. It needs the manifests' metrics,
so --from-stats refuses it.

With --fail-on-findings a report with findings exits 3 (and says so on
stderr), so a monitoring check can alert on maintenance debt. The findings
and their thresholds: docs/commands.md.

` + catalogFlagsHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			opts.root = cmd.Root()
			if cmd.Flags().Changed("html") {
				if err := htmlreport.CheckPath(opts.HTML); err != nil {
					return usageErrorf("invalid --html %q: %v", opts.HTML, err)
				}
			}
			if cmd.Flags().Changed("policy") {
				if opts.FromStats {
					return usageErrorf("--policy judges retention by the data files' metrics, which --from-stats does not read: give one of them")
				}
				data, err := os.ReadFile(opts.Policy)
				if err != nil {
					return usageErrorf("read --policy: %v", err)
				}
				if opts.policy, err = maintain.ParsePolicy(opts.Policy, data); err != nil {
					return usageErrorf("%v", err)
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return runHealth(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.FailOnFindings, "fail-on-findings", false, "exit 3 when the report has findings (for monitoring)")
	cmd.Flags().BoolVar(&opts.FromStats, "from-stats", false, "judge from the partition statistics file, without reading the manifests (sizes are partition averages)")
	cmd.Flags().StringVar(&opts.Policy, "policy", "", "maintain's policy file (YAML): judge the table's retention setting (rows past it)")
	cmd.Flags().StringVar(&opts.HTML, "html", "", "also write the report as a self-contained HTML page to this file (replaced atomically)")
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

func runHealth(ctx context.Context, opts *HealthOptions) error {
	oc, t, err := loadTable(ctx, opts.f, opts.Catalog, opts.Table)
	if err != nil {
		return err
	}
	defer oc.Close()
	var r health.Report
	var rt *health.Retention
	if opts.policy != nil {
		res, err := opts.policy.Resolve(t.Ident, t.Metadata.Properties)
		if err != nil {
			return &ExitError{Code: ExitUsage, Err: fmt.Errorf("table %s: %w", t.Ident, err)}
		}
		if rt = res.Retention(); rt == nil {
			printf(opts.f.ErrOut, "icectl: note: %s: the policy %s sets no retention for this table: %s\n", t.Ident, opts.Policy, res.Off[maintain.VerbRetention])
		}
	}
	if opts.FromStats {
		r, err = statsHealth(ctx, t, opts.now())
	} else {
		r, err = tableHealthWith(ctx, t, opts.now(), rt)
	}
	if err != nil {
		return scrub(oc.cfg, err)
	}
	renderRecommendations(&r, opts.root, opts.Catalog, isMetadataFile(opts.Table))
	for _, n := range r.Notes {
		printf(opts.f.ErrOut, "icectl: note: %v\n", scrub(oc.cfg, errors.New(n)))
	}
	if err := writeHealth(opts.f, r); err != nil {
		return err
	}
	if opts.HTML != "" {
		if err := htmlreport.WriteFile(opts.HTML, func(w io.Writer) error { return htmlreport.Table(w, r) }); err != nil {
			return err
		}
	}
	if opts.FailOnFindings && len(r.Findings) > 0 {
		kinds := make([]string, len(r.Findings))
		for i, fd := range r.Findings {
			kinds[i] = fd.Kind
		}
		return &ExitError{Code: ExitFindings, Err: fmt.Errorf("%s has %d finding(s): %s (--fail-on-findings)",
			r.Table, len(r.Findings), strings.Join(kinds, ", "))}
	}
	return nil
}

// tableHealth gathers the input of health.Analyze for t's current snapshot.
func tableHealth(ctx context.Context, t *catalog.Table, now time.Time) (health.Report, error) {
	return tableHealthWith(ctx, t, now, nil)
}

// tableHealthWith is tableHealth judging retention setting rt too (nil:
// none).
func tableHealthWith(ctx context.Context, t *catalog.Table, now time.Time, rt *health.Retention) (health.Report, error) {
	in, err := health.ReadInput(ctx, t, now)
	if err != nil {
		return health.Report{}, healthInputError(t, err)
	}
	in.Retention = rt
	if in.Files != nil && t.Metadata.FormatVersion >= 3 {
		if in.Resurrected, err = resurrectedRows(ctx, t, in.Files); err != nil {
			return health.Report{}, fmt.Errorf("table %s: %w", t.Ident, err)
		}
	}
	return health.Analyze(in), nil
}

// statsHealth judges t's current snapshot from its partition statistics
// file (health --from-stats).
func statsHealth(ctx context.Context, t *catalog.Table, now time.Time) (health.Report, error) {
	in, err := health.ReadStatsInput(ctx, t, now)
	if errors.Is(err, health.ErrNoPartitionStats) {
		return health.Report{}, fmt.Errorf("%w: write one with `icectl stats partitions %s`, or run health without --from-stats", err, t.Ident)
	}
	if err != nil {
		return health.Report{}, healthInputError(t, err)
	}
	return health.Analyze(in), nil
}

// healthInputError maps an error reading health's input: a malformed
// property is fixed with set-properties, as a usage error is fixed by the
// caller.
func healthInputError(t *catalog.Table, err error) error {
	var prop *health.PropertyError
	if errors.As(err, &prop) {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("table %s: %w (fix it with icectl table set-properties)", t.Ident, err)}
	}
	return err
}

// resurrectedShown is how many positions (and rows) of each data file
// with resurrected rows the health report names.
const resurrectedShown = 5

// resurrectedRows finds the data files whose DV lost positions older
// deletes had (only v3 tables have DVs) and reads the first few rows
// readers see again.
func resurrectedRows(ctx context.Context, t *catalog.Table, fs *icetable.FileSet) ([]health.ResurrectedFile, error) {
	rs, err := icetable.FindResurrectedIn(ctx, t.IO, t.Metadata, fs)
	if err != nil {
		return nil, err
	}
	out := make([]health.ResurrectedFile, 0, len(rs))
	for _, r := range rs {
		first := r.First(resurrectedShown)
		rows, err := scan.RowsAt(ctx, t.IO, t.Metadata, r.DataFile, first)
		if err != nil {
			return nil, err
		}
		f := health.ResurrectedFile{DataFile: r.DataFile.Entry.DataFile.FilePath, DV: r.DV.Key().String(),
			Rows: r.Count(), FirstPositions: first, FirstRows: rows, DeleteFiles: make([]string, 0, len(r.Sources))}
		for _, k := range r.Sources {
			f.DeleteFiles = append(f.DeleteFiles, k.String())
		}
		out = append(out, f)
	}
	return out, nil
}

func writeHealth(f *Factory, r health.Report) error {
	if f.Output == outputJSON {
		return writeJSON(f.Out, r)
	}
	return writeHealthText(f.Out, r)
}

func writeHealthText(w io.Writer, r health.Report) error {
	t := newTable(w)
	t.row("table", r.Table)
	t.row("format version", r.FormatVersion)
	t.row("snapshot", optInt64(r.SnapshotID))
	if r.Basis == health.BasisPartitionStats {
		t.row("judged from", "partition statistics "+r.PartitionStatistics)
	}
	t.row("data files", r.Data.Files)
	t.row("rows", r.Data.Records)
	t.row("size", bytesize.Format(r.Data.Bytes))
	t.row("small files", fmt.Sprintf("%d (below %s)", r.Data.SmallFiles, bytesize.Format(r.SmallFileBytes)))
	if r.SortOrderID != nil {
		t.row("unsorted files", fmt.Sprintf("%d (not written in sort order %d)", r.UnsortedFiles, *r.SortOrderID))
	}
	if err := t.flush(); err != nil {
		return err
	}

	fmt.Fprintln(w, "\nfile sizes")
	t = newTable(w)
	if r.Data.Histogram == nil {
		t.row("  not known: the partition statistics file has each partition's totals")
	}
	for _, b := range r.Data.Histogram {
		t.row("  "+b.Label, b.Files, bytesize.Format(b.Bytes))
	}
	if err := t.flush(); err != nil {
		return err
	}

	fmt.Fprintln(w, "\ndelete files")
	t = newTable(w)
	bytes := func(k health.KindStats) string {
		if r.Basis == health.BasisPartitionStats {
			return "size not known"
		}
		return bytesize.Format(k.Bytes)
	}
	t.row("  position deletes", r.Deletes.Position.Count, fmt.Sprintf("%d rows", r.Deletes.Position.Records), bytes(r.Deletes.Position))
	t.row("  deletion vectors", r.Deletes.DV.Count, fmt.Sprintf("%d rows", r.Deletes.DV.Records), bytes(r.Deletes.DV))
	t.row("  equality deletes", r.Deletes.Equality.Count, fmt.Sprintf("%d keys", r.Deletes.Equality.Records), bytes(r.Deletes.Equality))
	if r.FormatVersion == 2 && r.Deletes.Position.Count > 0 {
		t.row("  small position deletes", r.Deletes.SmallPositionFiles, "below "+bytesize.Format(r.Thresholds.DeleteTargetFileSize))
	}
	t.row("  deleted rows", r.Deletes.DeletedRows, "ratio "+ratioText(r.Deletes.DeleteRatio))
	if err := t.flush(); err != nil {
		return err
	}

	fmt.Fprintln(w, "\npartitions")
	t = newTable(w)
	if len(r.Partitions) == 0 {
		t.row("  none")
	} else {
		t.row("  SPEC", "PARTITION", "FILES", "SMALL", "ROWS", "SIZE", "POS DELETES", "DVS", "EQ DELETES", "DELETE RATIO")
	}
	for _, p := range r.Partitions {
		name := p.Partition
		if name == "" {
			name = "(unpartitioned)"
		}
		t.row(fmt.Sprintf("  %d", p.SpecID), name, p.Data.Files, p.Data.SmallFiles, p.Data.Records, bytesize.Format(p.Data.Bytes),
			p.Deletes.Position.Count, p.Deletes.DV.Count, p.Deletes.Equality.Count, ratioText(p.Deletes.DeleteRatio))
	}
	if err := t.flush(); err != nil {
		return err
	}

	fmt.Fprintln(w)
	t = newTable(w)
	m := r.Manifests
	t.row("manifests", fmt.Sprintf("%d (%d data, %d delete), %s", m.Count, m.DataManifests, m.DeleteManifests, bytesize.Format(m.Bytes)))
	t.row("small manifests", fmt.Sprintf("%d (below %s)", m.SmallManifests, bytesize.Format(m.SmallBelowBytes)))
	s := r.Snapshots
	t.row("snapshots", s.Count)
	if s.OldestMS != nil {
		t.row("oldest snapshot", fmt.Sprintf("%s, %s old", rfc3339Millis(*s.OldestMS), ageText(*s.OldestAgeMS)))
	}
	t.row("older than max age", fmt.Sprintf("%d (history.expire.max-snapshot-age-ms %d)", s.Expirable, r.Thresholds.MaxSnapshotAge.Milliseconds()))
	mf := r.MetadataFiles
	t.row("metadata files", fmt.Sprintf("%d (current + %d in the log, which keeps %d)", mf.Count, mf.LogEntries, mf.PreviousVersionsMax))
	if r.PartitionStatistics != "" && r.Basis != health.BasisPartitionStats {
		t.row("partition statistics", r.PartitionStatistics+" (agrees with the manifests)")
	}
	if err := t.flush(); err != nil {
		return err
	}

	if rs := r.Resurrected; rs.DataFiles > 0 {
		printf(w, "\nresurrected rows (deleted, visible again): %d in %d data file(s)\n", rs.Rows, rs.DataFiles)
		for _, f := range rs.Files {
			printf(w, "  %s: %d row(s), deletion vector %s lacks positions of %s\n", f.DataFile, f.Rows, f.DV, strings.Join(f.DeleteFiles, ", "))
			for i, row := range f.FirstRows {
				if i < len(f.FirstPositions) {
					printf(w, "    pos %d: %s\n", f.FirstPositions[i], row)
				}
			}
			if f.Rows > int64(len(f.FirstRows)) {
				printf(w, "    ... %d more\n", f.Rows-int64(len(f.FirstRows)))
			}
		}
	}

	if pv := r.PartitionValues; pv.DataFiles > 0 {
		printf(w, "\npartition values (data files storing an identity partition column otherwise than their partition value): %d file(s), %d row(s)\n", pv.DataFiles, pv.Rows)
		t = newTable(w)
		t.row("  SPEC", "PARTITION", "FILES", "ROWS", "FIELDS")
		for _, p := range pv.Partitions {
			t.row(fmt.Sprintf("  %d", p.SpecID), p.Partition, p.DataFiles, p.Rows, strings.Join(p.Fields, ","))
		}
		if err := t.flush(); err != nil {
			return err
		}
	}

	if rt := r.Retention; rt != nil {
		printf(w, "\nretention: %s\n", rt.Summary())
	}

	if len(r.Findings) == 0 {
		_, err := fmt.Fprintln(w, "\nno findings: nothing to recommend")
		return err
	}
	fmt.Fprintln(w, "\nfindings")
	for _, f := range r.Findings {
		rec := f.Recommendation
		if rec == "" {
			rec = "(no icectl command for this in this build)"
		}
		if _, err := printf(w, "  %s: %s\n    recommended: %s\n", f.Kind, f.Message, rec); err != nil {
			return err
		}
	}
	return nil
}

func ratioText(f float64) string {
	return fmt.Sprintf("%.1f%%", f*100)
}

// ageText renders a duration in milliseconds as days, hours and minutes.
func ageText(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	days := d / (24 * time.Hour)
	d -= days * 24 * time.Hour
	if days > 0 {
		return fmt.Sprintf("%dd%dh", days, d/time.Hour)
	}
	return fmt.Sprintf("%dh%dm", d/time.Hour, (d%time.Hour)/time.Minute)
}
