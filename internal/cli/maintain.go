package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/internal/cli/config"
	"github.com/icectl/icectl/internal/cli/htmlreport"
	"github.com/icectl/icectl/internal/shared/bytesize"
	"github.com/icectl/icectl/maintain"
)

// MaintainOptions are the inputs of `icectl maintain`.
type MaintainOptions struct {
	f         *Factory
	Catalog   config.Flags
	Selectors []string
	Policy    *maintain.Policy
	Run       maintain.Options
	// Wait is how long to wait for a table another run holds (0: skip it).
	Wait        time.Duration
	DryRun      bool
	Quiet       bool
	MetricsFile string
	// HTML is the file a dry run also writes the fleet plan to as a page.
	HTML string
}

type maintainFlags struct {
	policy, maxDuration, maxBytes, wait string
	enable, disable                     []string
	htmlSet                             bool
}

// NewCmdMaintain returns `icectl maintain`. runF replaces the run function
// in tests; nil runs the command.
func NewCmdMaintain(f *Factory, runF func(*MaintainOptions) error) *cobra.Command {
	opts := &MaintainOptions{f: f}
	var fl maintainFlags
	cmd := &cobra.Command{
		Use:   "maintain [NAMESPACE|TABLE ...]",
		Short: "Keep a whole catalog healthy: run the verbs each table is due for",
		Long: `Look at every table of the catalog (or of the namespaces and tables named),
decide per table which maintenance is due under its policy, and run it:
retention when the policy sets it and some row may be past it (delete-rows), dv
merge (v3 position deletes, several DVs per data file),
rewrite-equality-deletes (v2 equality deletes, into position deletes),
compact (small files, delete ratio, equality deletes), rewrite-position-deletes (v2: many small
position-delete files, dangling ones), rewrite-manifests (small manifests),
expire (snapshots past retention) and, only when the policy enables them,
stats-columns (column NDV sketches of the final snapshot) and orphan (it lists
storage), in that order. Never upgrade.

Tables with the most debt go first (debt counts the small files, delete
files, small manifests and expirable snapshots the due verbs remove; tables
are ordered by its power-of-two class, then longest since last maintained),
--concurrency at a time. --max-duration: no table or verb starts after it,
compaction and dv merge in flight start no new group and commit what they
finished. --max-rewrite-bytes bounds the data compaction reads in the run.

Two runs never work on one table at once: each table's work runs under a
claim taken through the catalog, and a table another run holds is skipped
and reported (--wait waits for it instead). Only tables with work due are
claimed, so a healthy table's metadata never moves.

Policy, highest first: --enable/--disable, the --policy file's table
patterns and namespaces, the table's own properties
(history.expire.max-snapshot-age-ms, history.expire.min-snapshots-to-keep,
write.target-file-size-bytes, write.delete.target-file-size-bytes,
commit.manifest.target-size-bytes), the policy
file's defaults, the built-in defaults (docs/maintain.md). gc.enabled=false
turns expire and orphan off whatever the policy says.

--dry-run prints the fleet plan (table, verb, why, estimated bytes, and the
rows past retention of each table whose policy sets it) and changes nothing; with --html FILE it also draws the plan as one
self-contained HTML page (written beside FILE and renamed over it). --quiet prints only failures, for cron. --metrics-file
writes the run's figures in the Prometheus text format (atomically), for
node_exporter's textfile collector.

Exit codes: 0 everything due was done (or nothing was due), by this run or,
for a table another icectl run held, by that run; 3 work left for the next
run (a table failed, or a budget ran out; the last line says what is left);
1 an error before any work; 2 usage.

` + catalogFlagsHelp,
		Example: `  icectl maintain --dry-run --catalog prod
  icectl maintain shop sales.orders --policy /etc/icectl/policy.yaml --concurrency 4 --catalog prod
  icectl maintain --max-duration 50m --max-rewrite-bytes 200GiB --quiet --metrics-file /var/lib/node_exporter/textfile/icectl.prom --catalog prod`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Selectors = args
			fl.htmlSet = cmd.Flags().Changed("html")
			if err := fl.apply(opts); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runMaintain(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&fl.policy, "policy", "", "policy file (YAML): defaults, namespaces and table patterns (see docs/maintain.md)")
	fs.IntVar(&opts.Run.Concurrency, "concurrency", 1, "tables maintained at once")
	fs.StringVar(&fl.maxDuration, "max-duration", "", "start no table, verb or group after this long (e.g. 2h)")
	fs.StringVar(&fl.maxBytes, "max-rewrite-bytes", "", "data bytes compaction may read in the run (e.g. 50GiB)")
	fs.StringVar(&fl.wait, "wait", "", "wait this long for a table another run holds, instead of skipping it (e.g. 10m)")
	fs.StringArrayVar(&fl.enable, "enable", nil, "turn a verb on for every table, above the policy: dv-merge, rewrite-equality-deletes, compact, rewrite-position-deletes, rewrite-manifests, expire, stats-columns, orphan (repeatable)")
	fs.StringArrayVar(&fl.disable, "disable", nil, "turn a verb off for every table (repeatable)")
	fs.BoolVar(&opts.DryRun, "dry-run", false, "print the fleet plan and change nothing")
	fs.BoolVarP(&opts.Quiet, "quiet", "q", false, "print only failures")
	fs.StringVar(&opts.HTML, "html", "", "with --dry-run, also write the fleet plan as a self-contained HTML page to this file (replaced atomically)")
	fs.StringVar(&opts.MetricsFile, "metrics-file", "", "write the run's figures here in the Prometheus text format")
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

// apply parses the flags that need it into opts.
func (fl *maintainFlags) apply(opts *MaintainOptions) error {
	opts.Policy = &maintain.Policy{}
	if fl.policy != "" {
		data, err := os.ReadFile(fl.policy)
		if err != nil {
			return usageErrorf("read --policy: %v", err)
		}
		if opts.Policy, err = maintain.ParsePolicy(fl.policy, data); err != nil {
			return &ExitError{Code: ExitUsage, Err: err}
		}
	}
	on, off := true, false
	for _, c := range []struct {
		verbs []string
		v     *bool
		flag  string
	}{{fl.enable, &on, "enable"}, {fl.disable, &off, "disable"}} {
		for _, verb := range c.verbs {
			sw := opts.Policy.Flags.Switch(verb)
			if sw == nil {
				return usageErrorf("invalid --%s %q: want one of %v", c.flag, verb, maintain.Verbs)
			}
			if slices.Contains(fl.enable, verb) && slices.Contains(fl.disable, verb) {
				return usageErrorf("--enable %s and --disable %s contradict each other", verb, verb)
			}
			*sw = c.v
		}
	}
	if opts.HTML != "" || fl.htmlSet {
		if !opts.DryRun {
			return usageErrorf("--html needs --dry-run: it draws the fleet plan")
		}
		if err := htmlreport.CheckPath(opts.HTML); err != nil {
			return usageErrorf("invalid --html %q: %v", opts.HTML, err)
		}
	}
	if opts.Run.Concurrency < 1 {
		return usageErrorf("invalid --concurrency %d: want >= 1", opts.Run.Concurrency)
	}
	if fl.maxDuration != "" {
		d, err := parseDuration(fl.maxDuration)
		if err != nil || d <= 0 {
			return usageErrorf("invalid --max-duration %q: want a duration like 90m, 8h or 1d", fl.maxDuration)
		}
		opts.Run.MaxDuration = d
	}
	if fl.maxBytes != "" {
		n, err := bytesize.Parse(fl.maxBytes)
		if err != nil || n <= 0 {
			return usageErrorf("invalid --max-rewrite-bytes %q: want a positive size like 50GiB", fl.maxBytes)
		}
		opts.Run.MaxRewriteBytes = n
	}
	if fl.wait != "" {
		d, err := parseDuration(fl.wait)
		if err != nil || d < 0 {
			return usageErrorf("invalid --wait %q: want a duration like 10m", fl.wait)
		}
		opts.Wait = d
	}
	return nil
}

func runMaintain(ctx context.Context, opts *MaintainOptions) error {
	f := opts.f
	oc, err := openCatalog(ctx, f, opts.Catalog)
	if err != nil {
		return err
	}
	defer oc.Close()
	ids, err := maintain.ListTables(ctx, oc.cat, opts.Selectors)
	if err != nil {
		return scrub(oc.cfg, fmt.Errorf("list tables: %w", err))
	}
	now := time.Now()
	states := maintain.ReadStates(ctx, oc.cat, ids, opts.Policy, now, max(opts.Run.Concurrency, 4))
	if ctx.Err() != nil {
		return ctx.Err()
	}
	p := maintain.NewPlan(states, now)
	if len(ids) > 0 && len(p.Failed) == len(ids) {
		// Not one table could be read: an error before any work.
		return scrub(oc.cfg, fmt.Errorf("no table could be read; first: %s: %s", p.Failed[0].Table, p.Failed[0].Error))
	}
	if opts.DryRun {
		if err := writeMaintainPlan(f, p); err != nil {
			return err
		}
		if opts.HTML != "" {
			if err := htmlreport.WriteFile(opts.HTML, func(w io.Writer) error { return htmlreport.Fleet(w, p) }); err != nil {
				return err
			}
		}
		if len(p.Failed) > 0 {
			return &ExitError{Code: ExitPartial, Err: fmt.Errorf("%d tables could not be read (listed above)", len(p.Failed))}
		}
		return nil
	}
	ro := opts.Run
	ro.CommitOptions = f.CommitOptions
	ro.CreatedBy = "icectl " + buildVersion()
	defer f.limitCompactionMemory()()
	if !opts.Quiet {
		ro.Log = f.ErrOut
	}
	if ro.Claim, err = maintainClaimer(f, oc, opts.Wait); err != nil {
		return err
	}
	ro.Policy = opts.Policy
	rep := maintain.Run(ctx, oc.cat, p, ro)
	werr := writeMaintainReport(f, rep, opts.Quiet)
	if opts.MetricsFile != "" {
		werr = errors.Join(werr, maintain.WriteMetrics(opts.MetricsFile, rep))
	}
	if ctx.Err() != nil {
		return fmt.Errorf("maintain interrupted: %s: %w", rep.LeftText(), ctx.Err())
	}
	if werr != nil {
		return werr
	}
	if !rep.Complete() {
		// --quiet mails a person only for failures: a budget that ran
		// out is in the exit code alone.
		quiet := opts.Quiet && rep.Summary.Failed+rep.Summary.Partial == 0
		return &ExitError{Code: ExitPartial, Err: errors.New(rep.LeftText()), Quiet: quiet}
	}
	return nil
}

// maintainClaimer is the claim maintain takes on each table (the one
// the single verbs take), waiting up to wait for a table another run holds.
func maintainClaimer(f *Factory, oc *openedCatalog, wait time.Duration) (maintain.Claimer, error) {
	o, err := claimOptions(f, oc, "maintain", "")
	if err != nil {
		return nil, err
	}
	o.Wait = wait
	return maintain.CatalogClaims{Cat: oc.cat, Options: o}, nil
}

func writeMaintainPlan(f *Factory, p *maintain.Plan) error {
	if f.Output == outputJSON {
		return writeJSON(f.Out, struct {
			DryRun bool `json:"dry_run"`
			*maintain.Plan
		}{true, p})
	}
	w := f.Out
	printf(w, "fleet plan: %d of %d tables due (dry run: nothing changed)\n", len(p.Due), len(p.Due)+len(p.Healthy)+len(p.Failed))
	if len(p.Due) > 0 {
		t := newTable(w)
		t.row("ORDER", "TABLE", "DEBT", "VERB", "ESTIMATED", "WHY")
		for i, tp := range p.Due {
			for j, d := range tp.Due {
				order, name, debt := fmt.Sprint(i+1), tp.Table, fmt.Sprint(tp.Debt)
				if j > 0 {
					order, name, debt = "", "", ""
				}
				t.row(order, name, debt, d.Verb, bytesize.Format(d.EstimatedBytes), d.Reason)
			}
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	for _, tp := range slices.Concat(p.Due, p.Healthy) {
		if tp.Retention != nil {
			printf(w, "%s: retention: %s\n", tp.Table, tp.Retention.Summary())
		}
	}
	writeMaintainNotes(w, p.Due, false)
	writeMaintainNotes(w, p.Healthy, false)
	for _, fl := range p.Failed {
		printf(w, "%s: cannot be read: %s\n", fl.Table, fl.Error)
	}
	_, err := printf(w, "nothing due: %d tables\n", len(p.Healthy))
	return err
}

// writeMaintainNotes prints what the plan leaves off and to a person.
func writeMaintainNotes(w io.Writer, tps []*maintain.TablePlan, attentionOnly bool) {
	for _, tp := range tps {
		if !attentionOnly && tp.Stream != nil {
			printf(w, "%s: %s\n", tp.Table, tp.Stream.Reason)
		}
		if !attentionOnly {
			for _, s := range tp.Off {
				printf(w, "%s: %s\n", tp.Table, s.Reason)
			}
		}
		for _, a := range tp.Attention {
			printf(w, "%s: needs attention: %s\n", tp.Table, a)
		}
	}
}

func writeMaintainReport(f *Factory, rep *maintain.Report, quiet bool) error {
	if f.Output == outputJSON {
		return writeJSON(f.Out, rep)
	}
	w := f.Out
	for _, t := range rep.Tables {
		// What needs a person: a table or verb that failed, even partly.
		failed := t.Status == maintain.StatusFailed || t.Error != "" && t.Held == nil
		for _, v := range t.Verbs {
			failed = failed || v.Error != ""
		}
		if quiet && !failed && len(t.Attention) == 0 {
			continue
		}
		if t.Status == maintain.StatusNothingDue {
			if !quiet {
				printf(w, "%s: nothing due\n", t.Table)
			}
		} else {
			printf(w, "%s: %s (%s)\n", t.Table, t.Status, time.Duration(t.DurationMS)*time.Millisecond)
		}
		for _, v := range t.Verbs {
			if quiet && v.Error == "" {
				continue
			}
			line := fmt.Sprintf("  %s: %s", v.Verb, v.Status)
			if v.Detail != "" {
				line += ": " + v.Detail
			}
			if v.Error != "" {
				line += ": " + v.Error
			}
			printf(w, "%s\n", line)
		}
		if t.TookOver != nil && !quiet {
			printf(w, "  took over the claim of %s: %s\n", t.TookOver.Holder, t.TookOver.Why)
		}
		if t.Held != nil {
			printf(w, "  skipped: claimed by %s until %s\n", t.Held.Holder, rfc3339Millis(t.Held.UntilMS))
		} else if t.Error != "" && len(t.Verbs) == 0 {
			printf(w, "  error: %s\n", t.Error)
		}
		if !quiet {
			if t.Stream != nil {
				printf(w, "  %s\n", t.Stream.Reason)
			}
			for _, s := range t.Off {
				printf(w, "  off: %s\n", s.Reason)
			}
		}
		for _, a := range t.Attention {
			printf(w, "  needs attention: %s\n", a)
		}
	}
	if quiet {
		return nil
	}
	s := rep.Summary
	if len(s.Claimed) > 0 {
		printf(w, "maintain: %d tables are being maintained by another run: %s\n", len(s.Claimed), strings.Join(s.Claimed, ", "))
	}
	_, err := printf(w, "maintain: %d tables: %d due, %d done, %d partial, %d failed, %d skipped, %d not started, %d nothing due (%s)\n",
		s.Tables, s.Due, s.Done, s.Partial, s.Failed, s.Skipped, s.NotStarted, s.NothingDue, time.Duration(rep.DurationMS)*time.Millisecond)
	return err
}
