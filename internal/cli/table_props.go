package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/cli/config"
	"github.com/icectl/icectl/internal/cli/tableprops"
)

// TablePropsOptions are the inputs of `icectl table set-properties` and
// `icectl table remove-properties`: exactly one of Set and Remove is used.
type TablePropsOptions struct {
	f       *Factory
	Catalog config.Flags
	Table   string
	Set     map[string]string
	Remove  []string
	DryRun  bool
	// Open, when set, replaces opening the catalog the flags select. Tests
	// use it to put a fault below a real catalog (at the database/sql seam)
	// and still run the command's own commit and error mapping.
	Open func(ctx context.Context) (catalog.Catalog, error)
}

// NewCmdTableSetProperties returns `icectl table set-properties`. runF
// replaces the run function in tests; nil runs the command.
func NewCmdTableSetProperties(f *Factory, runF func(*TablePropsOptions) error) *cobra.Command {
	opts := &TablePropsOptions{f: f}
	cmd := &cobra.Command{
		Use:   "set-properties TABLE KEY=VALUE [KEY=VALUE...]",
		Short: "Set table properties (write.target-file-size-bytes, history.expire.*, ...)",
		Long: `Set table properties in one commit. A conflicting commit by someone else
is retried on the new table version with the table's commit.retry.* backoff.
Reserved properties (format-version, uuid, ...) cannot be set: they change
through their own table updates. The properties icectl reads
(write.target-file-size-bytes, history.expire.*, commit.retry.*,
write.metadata.*, write.parquet.*, gc.enabled, ...) are checked for type and
range first: a value icectl would refuse later is refused now (exit 2), and
nothing is committed. Other keys are free-form.

` + exitCodesHelp + "\n\n" + catalogFlagsHelp,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			set, err := parsePropAssignments(args[1:])
			if err != nil {
				return err
			}
			opts.Set = set
			for _, k := range slices.Sorted(maps.Keys(set)) {
				// Allowed, as Iceberg allows any key, but said: a slip
				// like history.expire.max-snapshot-age (no -ms) would
				// otherwise do nothing, silently.
				if near, ok := tableprops.Suggest(k); ok {
					printf(f.ErrOut, "icectl: warning: %s is not a table property Iceberg reads; did you mean %s? (set as given)\n", k, near)
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return RunTableProps(cmd.Context(), opts)
		},
	}
	addCatalogFlags(cmd, &opts.Catalog)
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print what would change, commit nothing")
	return cmd
}

// NewCmdTableRemoveProperties returns `icectl table remove-properties`.
// runF replaces the run function in tests; nil runs the command.
func NewCmdTableRemoveProperties(f *Factory, runF func(*TablePropsOptions) error) *cobra.Command {
	opts := &TablePropsOptions{f: f}
	cmd := &cobra.Command{
		Use:   "remove-properties TABLE KEY [KEY...]",
		Short: "Remove table properties",
		Long: `Remove table properties in one commit. Keys the table does not have are
ignored. A conflicting commit by someone else is retried on the new table
version with the table's commit.retry.* backoff.

` + exitCodesHelp + "\n\n" + catalogFlagsHelp,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			keys, err := parsePropKeys(args[1:])
			if err != nil {
				return err
			}
			opts.Remove = keys
			if runF != nil {
				return runF(opts)
			}
			return RunTableProps(cmd.Context(), opts)
		},
	}
	addCatalogFlags(cmd, &opts.Catalog)
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print what would change, commit nothing")
	return cmd
}

// parsePropAssignments parses KEY=VALUE arguments. Values may be empty and
// may contain "="; a key given twice with different values is ambiguous.
func parsePropAssignments(args []string) (map[string]string, error) {
	set := make(map[string]string, len(args))
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return nil, usageErrorf("property %q: want KEY=VALUE", a)
		}
		if err := checkPropKey(k); err != nil {
			return nil, err
		}
		if old, dup := set[k]; dup && old != v {
			return nil, usageErrorf("property %q given twice with different values", k)
		}
		// A value icectl itself would refuse when it reads the table
		// later (health, compact, expire, commits) is refused now,
		// before anything is committed.
		if err := tableprops.Check(k, v); err != nil {
			return nil, &ExitError{Code: ExitUsage, Err: err}
		}
		set[k] = v
	}
	return set, nil
}

// parsePropKeys checks the keys of remove-properties; duplicates collapse.
func parsePropKeys(args []string) ([]string, error) {
	var keys []string
	for _, k := range args {
		if err := checkPropKey(k); err != nil {
			return nil, err
		}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

func checkPropKey(k string) error {
	if strings.TrimSpace(k) == "" {
		return usageErrorf("empty property key")
	}
	if spec.IsReservedProperty(k) {
		return usageErrorf("property %q is reserved: it is not a table property but part of the metadata, changed by its own table update", k)
	}
	return nil
}

// Property change kinds in the output.
const (
	propSet       = "set"
	propRemove    = "remove"
	propUnchanged = "unchanged" // set to its current value, or removed while absent
)

type propChangeView struct {
	Key    string  `json:"key"`
	Change string  `json:"change"`
	Old    *string `json:"old"`
	New    *string `json:"new"`
}

type tablePropsView struct {
	Table  string `json:"table"`
	DryRun bool   `json:"dry_run"`
	// Committed is false on a dry run and when nothing had to change.
	Committed bool `json:"committed"`
	// MetadataLocation is the new current metadata when committed, else
	// the metadata the changes were computed against.
	MetadataLocation         string            `json:"metadata_location"`
	PreviousMetadataLocation *string           `json:"previous_metadata_location"`
	Changes                  []propChangeView  `json:"changes"`
	Properties               map[string]string `json:"properties"`
}

// errNothingToChange stops a commit whose base already has every
// requested value: there is no update to commit.
var errNothingToChange = errors.New("nothing to change")

// propChanges works out the effect of opts on base's properties, in key
// order, and the updates that make it (nil when nothing changes).
func propChanges(base map[string]string, opts *TablePropsOptions) ([]propChangeView, []spec.Update) {
	var changes []propChangeView
	var ups []spec.Update
	str := func(s string) *string { return &s }
	if len(opts.Set) > 0 {
		set := map[string]string{}
		for _, k := range sortedKeys(opts.Set) {
			v := opts.Set[k]
			c := propChangeView{Key: k, Change: propSet, New: str(v)}
			if old, ok := base[k]; ok {
				c.Old = str(old)
				if old == v {
					c.Change = propUnchanged
				}
			}
			if c.Change == propSet {
				set[k] = v
			}
			changes = append(changes, c)
		}
		if len(set) > 0 {
			ups = append(ups, spec.SetProperties{Updates: set})
		}
	}
	if len(opts.Remove) > 0 {
		keys := slices.Sorted(slices.Values(opts.Remove))
		var removals []string
		for _, k := range keys {
			c := propChangeView{Key: k, Change: propUnchanged}
			if old, ok := base[k]; ok {
				c.Change, c.Old = propRemove, str(old)
				removals = append(removals, k)
			}
			changes = append(changes, c)
		}
		if len(removals) > 0 {
			ups = append(ups, spec.RemoveProperties{Removals: removals})
		}
	}
	return changes, ups
}

// RunTableProps runs set-properties or remove-properties. The change is
// rebuilt on every retry against the reloaded table, so a concurrent commit
// of other properties is kept and the output describes what this commit
// changed on the version it landed on.
func RunTableProps(ctx context.Context, opts *TablePropsOptions) error {
	if isMetadataFile(opts.Table) {
		return refuseMetadataFile(opts.Table, "change it", false)
	}
	id, err := parseTableArg(opts.Table)
	if err != nil {
		return err
	}
	var cfg *config.Catalog
	var cat catalog.Catalog
	if opts.Open != nil {
		if cat, err = opts.Open(ctx); err != nil {
			return err
		}
	} else {
		oc, err := openCatalog(ctx, opts.f, opts.Catalog)
		if err != nil {
			return err
		}
		cfg, cat = oc.cfg, oc.cat
	}
	defer cat.Close()
	t, err := cat.LoadTable(ctx, id)
	if err != nil {
		return loadTableError(cfg, err)
	}

	v := tablePropsView{Table: id.String(), DryRun: opts.DryRun, MetadataLocation: t.MetadataLocation}
	changes, ups := propChanges(t.Metadata.Properties, opts)
	v.Changes, v.Properties = changes, t.Metadata.Properties
	if opts.DryRun || ups == nil {
		return writeTableProps(opts.f, v)
	}

	last := t // the base of the latest attempt
	build := func(ctx context.Context, base *catalog.Table, attempt int) (*commit.Attempt, error) {
		last = base
		changes, ups := propChanges(base.Metadata.Properties, opts)
		v.Changes = changes
		if ups == nil {
			return nil, errNothingToChange
		}
		return &commit.Attempt{
			Requirements: []spec.Requirement{spec.AssertTableUUID{UUID: base.Metadata.TableUUID}},
			Updates:      ups,
		}, nil
	}
	res, err := commit.Run(ctx, cat, t, build, opts.f.CommitOptions(t.Metadata.Properties))
	switch {
	case err == nil:
		v.Committed = true
		prev := last.MetadataLocation
		v.MetadataLocation, v.PreviousMetadataLocation, v.Properties = res.MetadataLocation, &prev, res.Metadata.Properties
	case errors.Is(err, errNothingToChange):
		// A concurrent commit made the same change; ours has nothing left.
		v.MetadataLocation, v.Properties = last.MetadataLocation, last.Metadata.Properties
	default:
		return propsCommitError(cfg, id, err)
	}
	return writeTableProps(opts.f, v)
}

// propsCommitError maps a failed commit to the documented exit codes.
func propsCommitError(cfg *config.Catalog, id catalog.Ident, err error) error {
	err = scrub(cfg, err)
	switch {
	case errors.Is(err, catalog.ErrCommitStateUnknown):
		return &ExitError{Code: ExitCommitState, Err: fmt.Errorf(
			"commit state unknown: the properties of %s may or may not have changed; nothing was deleted; check the table with `icectl table show %s` before retrying: %w",
			id, id, err)}
	case errors.Is(err, catalog.ErrCommitConflict), errors.Is(err, spec.ErrRequirementFailed):
		return &ExitError{Code: ExitConflict, Err: fmt.Errorf("commit conflict: the properties of %s did not change: %w", id, err)}
	default:
		return err
	}
}

func writeTableProps(f *Factory, v tablePropsView) error {
	v.Properties = redactProps(v.Properties)
	for i, c := range v.Changes {
		if config.IsSecret(c.Key) {
			hidden := "****"
			if c.Old != nil {
				v.Changes[i].Old = &hidden
			}
			if c.New != nil {
				v.Changes[i].New = &hidden
			}
		}
	}
	if v.Changes == nil {
		v.Changes = []propChangeView{}
	}
	if f.Output == outputJSON {
		return writeJSON(f.Out, v)
	}
	return writeTablePropsText(f.Out, v)
}

func writeTablePropsText(w io.Writer, v tablePropsView) error {
	changes := false
	for _, c := range v.Changes {
		changes = changes || c.Change != propUnchanged
	}
	var head string
	switch {
	case v.Committed:
		head = fmt.Sprintf("%s: committed %s", v.Table, v.MetadataLocation)
	case v.DryRun && changes:
		head = fmt.Sprintf("%s: dry run, nothing committed (table at %s)", v.Table, v.MetadataLocation)
	default: // a dry run or a run with nothing to change
		head = fmt.Sprintf("%s: nothing to change: every property is already as asked (table at %s)", v.Table, v.MetadataLocation)
	}
	if _, err := fmt.Fprintln(w, escapeText(head)); err != nil {
		return err
	}
	t := newTable(w)
	for _, c := range v.Changes {
		verb := c.Change
		if v.DryRun && c.Change != propUnchanged {
			verb = "would " + verb
		}
		switch {
		case c.Change == propRemove:
			t.row("  "+verb, c.Key, "was "+*c.Old)
		case c.New == nil:
			t.row("  "+verb, c.Key, "absent")
		case c.Old == nil || c.Change == propUnchanged:
			t.row("  "+verb, c.Key, *c.New)
		default:
			t.row("  "+verb, c.Key, *c.New+" (was "+*c.Old+")")
		}
	}
	return t.flush()
}

// addTablePropsCmds adds set-properties and remove-properties to the
// `icectl table` command and returns it.
func addTablePropsCmds(table *cobra.Command, f *Factory) *cobra.Command {
	table.AddCommand(NewCmdTableSetProperties(f, nil), NewCmdTableRemoveProperties(f, nil))
	return table
}
