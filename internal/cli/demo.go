package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/health"
	"github.com/icectl/icectl/internal/cli/config"
	"github.com/icectl/icectl/internal/cli/demo"
)

// DemoOptions are the inputs of `icectl demo`.
type DemoOptions struct {
	f     *Factory
	Dir   string
	Force bool
	Seed  int64
	// Walkthrough builds a second table and maintains it with the
	// commands an operator would run, printing each.
	Walkthrough bool
	now         func() time.Time
	root        *cobra.Command // the command tree recommendations must exist in
}

// NewCmdDemo returns `icectl demo`. runF replaces the run function in
// tests; nil runs the command.
func NewCmdDemo(f *Factory, runF func(*DemoOptions) error) *cobra.Command {
	opts := &DemoOptions{f: f, now: time.Now}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Build a demo table that needs maintenance, and show its health",
		Long: `Build a realistic demo table in a local SQLite catalog (DIR/catalog.db, warehouse
DIR/warehouse, table shop.orders): many small files, every kind of delete,
dozens of snapshots, a tag, a branch and the leftovers of a failed job. Then
print what was built and its health, and last the commands to try on it: the
demo leaves the table with work to do, so the first compact has something to
compact.

Unless --walkthrough=false, the demo also builds shop.walkthrough the same
way and takes it from v2 with delete debt to clean v3 with the commands an
operator would type, printing each and its output: health, upgrade --to 3
--merge-deletes, compact, rewrite-manifests, verify lineage, verify deletes, expire
(keeping the last 5 snapshots), orphan (the failed job's leftovers, which the
demo backdates 4 days so that the default --older-than 3d catches them), and
health again.

Progress goes to stderr. A non-empty DIR is refused unless --force, which
replaces only DIR/catalog.db and DIR/warehouse.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.root = cmd.Root()
			if runF != nil {
				return runF(opts)
			}
			return runDemo(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", "icectl-demo", "directory to build the demo in")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace the catalog and warehouse of an existing demo directory")
	cmd.Flags().Int64Var(&opts.Seed, "seed", 1, "seed of the generated rows (same seed, same rows and checksum)")
	cmd.Flags().BoolVar(&opts.Walkthrough, "walkthrough", true, "also build shop.walkthrough and show the upgrade-and-maintain runbook on it")
	return cmd
}

type demoView struct {
	Table            string        `json:"table"`
	CatalogName      string        `json:"catalog_name"`
	CatalogURI       string        `json:"catalog_uri"`
	Warehouse        string        `json:"warehouse"`
	MetadataLocation string        `json:"metadata_location"`
	Snapshots        int           `json:"snapshots"`
	DataFiles        int           `json:"data_files"`
	PositionDeletes  int           `json:"position_delete_files"`
	EqualityDeletes  int           `json:"equality_delete_files"`
	Rows             int64         `json:"rows"`
	Checksum         string        `json:"checksum"`
	Tag              string        `json:"tag"`
	Branch           string        `json:"branch"`
	Leftovers        []string      `json:"leftover_files"`
	Next             string        `json:"next_command"`
	Health           health.Report `json:"health"`
	// Walkthrough is what the walkthrough ran (nil with --walkthrough=false).
	Walkthrough *walkthroughView `json:"walkthrough,omitempty"`
	// TryNext are the commands to try on the demo table.
	TryNext []string `json:"try_next"`
	// Crontab is the line that keeps the whole catalog healthy from
	// cron, printed last.
	Crontab string `json:"crontab"`
}

func runDemo(ctx context.Context, opts *DemoOptions) error {
	if !opts.Force {
		ents, err := os.ReadDir(opts.Dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("demo directory %s: %w", opts.Dir, err)
		}
		if len(ents) > 0 {
			return fmt.Errorf("demo directory %s is not empty: pass --force to replace its catalog.db and warehouse, or choose another --dir", opts.Dir)
		}
	}
	printf(opts.f.ErrOut, "building the demo table in %s\n", opts.Dir)
	bo := demo.Options{Seed: opts.Seed, Force: opts.Force, Log: opts.f.ErrOut, Now: opts.now}
	if opts.Walkthrough {
		bo.Also = []string{WalkthroughTable}
	}
	res, err := demo.Build(ctx, opts.Dir, bo)
	if err != nil {
		return fmt.Errorf("build demo: %w", err)
	}
	cat, err := sqlcat.Open(ctx, catalog.Config{Name: res.CatalogName, URI: res.CatalogURI, Warehouse: res.Warehouse})
	if err != nil {
		return fmt.Errorf("open demo catalog: %w", err)
	}
	defer cat.Close()
	id, err := catalog.ParseIdent(res.Table)
	if err != nil {
		return err
	}
	t, err := cat.LoadTable(ctx, id)
	if err != nil {
		return err
	}
	r, err := tableHealth(ctx, t, opts.now())
	if err != nil {
		return err
	}
	demoFlags := config.Flags{URI: res.CatalogURI, CatalogName: res.CatalogName}
	renderRecommendations(&r, opts.root, demoFlags, false)
	v := demoView{
		Table: res.Table, CatalogName: res.CatalogName, CatalogURI: res.CatalogURI, Warehouse: res.Warehouse,
		MetadataLocation: res.MetadataLocation, Snapshots: res.Snapshots, DataFiles: res.DataFiles,
		PositionDeletes: res.PositionDeleteFiles, EqualityDeletes: res.EqualityDeleteFiles,
		Rows: res.Rows, Checksum: res.Checksum, Tag: res.Tag, Branch: res.Branch, Leftovers: res.Leftovers,
		Next:    demoNextCommand(res),
		Health:  r,
		TryNext: demoTryNext(opts.root, res.Table, demoFlags),
		Crontab: demoCrontab(opts.root, demoFlags),
	}
	if v.Leftovers == nil {
		v.Leftovers = []string{}
	}
	text := opts.f.Output != outputJSON
	if text {
		// The walkthrough's first step prints the health of a table built
		// the same way: once is enough.
		if err := writeDemoText(opts.f.Out, v, !opts.Walkthrough); err != nil {
			return err
		}
	}
	if opts.Walkthrough {
		if v.Walkthrough, err = runWalkthrough(ctx, opts, res); err != nil {
			return err
		}
	}
	if !text {
		return writeJSON(opts.f.Out, v)
	}
	if opts.Walkthrough {
		writeWalkthroughOutro(opts.f.Out, v.Table)
	}
	if err := writeTryNext(opts.f.Out, v.TryNext); err != nil {
		return err
	}
	if v.Crontab == "" {
		return nil
	}
	_, err = printf(opts.f.Out, "\nthen keep the whole catalog healthy from cron (crontab -e):\n  %s\n", v.Crontab)
	return err
}

// demoCrontab is the crontab line that runs icectl maintain on the demo
// catalog every hour, within the hour, mailing only failures.
func demoCrontab(root *cobra.Command, flags config.Flags) string {
	line := recommend(root, health.Command{Verb: []string{"maintain"}, Args: []string{"--max-duration", "50m", "--quiet"}}, flags, false)
	if line == "" {
		return ""
	}
	return "17 * * * * " + line
}

// demoNextCommand is the command that shows the demo table's health.
func demoNextCommand(res *demo.Result) string {
	return shellJoin([]string{"icectl", "health", res.Table, "--catalog-uri", res.CatalogURI, "--catalog-name", res.CatalogName})
}

// demoTryNext lists the commands to try on the demo table, which the demo
// leaves with work to do: look at it, plan a compaction, compact, look
// again, then the snapshot history. Only commands this build has.
func demoTryNext(root *cobra.Command, table string, flags config.Flags) []string {
	out := []string{}
	for _, c := range []health.Command{
		{Verb: []string{"health"}, Args: []string{table}},
		{Verb: []string{"compact"}, Args: []string{table, "--dry-run"}},
		{Verb: []string{"compact"}, Args: []string{table}},
		{Verb: []string{"health"}, Args: []string{table}},
		{Verb: []string{"expire"}, Args: []string{table, "--dry-run"}},
	} {
		if line := recommend(root, c, flags, false); line != "" {
			out = append(out, line)
		}
	}
	return out
}

func writeDemoText(w io.Writer, v demoView, withHealth bool) error {
	t := newTable(w)
	t.row("table", v.Table)
	t.row("catalog", fmt.Sprintf("%s (catalog name %s)", v.CatalogURI, v.CatalogName))
	t.row("warehouse", v.Warehouse)
	t.row("snapshots", v.Snapshots)
	t.row("data files", v.DataFiles)
	t.row("delete files", fmt.Sprintf("%d position, %d equality", v.PositionDeletes, v.EqualityDeletes))
	t.row("rows", v.Rows)
	t.row("checksum", v.Checksum)
	if v.Tag != "" {
		t.row("tag", v.Tag)
	}
	if v.Branch != "" {
		t.row("branch", v.Branch)
	}
	t.row("leftover files", len(v.Leftovers))
	if err := t.flush(); err != nil {
		return err
	}
	if !withHealth {
		return nil
	}
	printf(w, "\nhealth\n")
	return writeHealthText(w, v.Health)
}

// writeTryNext ends the demo: what to do next comes last, where a
// newcomer's eyes end up.
func writeTryNext(w io.Writer, tryNext []string) error {
	fmt.Fprintln(w, "\ntry next (the demo table has work to do):")
	for _, c := range tryNext {
		if _, err := printf(w, "  %s\n", c); err != nil {
			return err
		}
	}
	return nil
}
