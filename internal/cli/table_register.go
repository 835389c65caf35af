package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/internal/cli/config"
	"github.com/icectl/icectl/relocate"
)

// TableRegisterOptions are the inputs of `icectl table register`.
type TableRegisterOptions struct {
	f            *Factory
	Catalog      config.Flags
	Table        string
	MetadataFile string
	Force        bool
	DryRun       bool
}

// addTableRegisterCmd adds `icectl table register` to table.
func addTableRegisterCmd(table *cobra.Command, f *Factory) *cobra.Command {
	table.AddCommand(NewCmdTableRegister(f, nil))
	return table
}

// NewCmdTableRegister returns `icectl table register`.
func NewCmdTableRegister(f *Factory, runF func(*TableRegisterOptions) error) *cobra.Command {
	opts := &TableRegisterOptions{f: f}
	cmd := &cobra.Command{
		Use:   "register NS.TABLE METADATA-FILE",
		Short: "Register an existing metadata file as a new table of the catalog",
		Long: `Register METADATA-FILE as table NS.TABLE, as Spark's register_table does: the
catalog's new table starts at that version; no file is written or copied.

The file must be the newest metadata file of its directory unless --force:
no other *.metadata.json there has a higher version number in its name
(NNNNN-<uuid>.metadata.json, vN.metadata.json) or the same one,
version-hint.text names no higher version, and for a name without a version,
no other metadata file lists it in its metadata-log. Registering an older
version would silently drop the commits made after it.
--dry-run checks everything and registers nothing.

` + exitCodesHelp + "\n\n" + catalogFlagsHelp,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table, opts.MetadataFile = args[0], args[1]
			if _, err := parseTableArg(opts.Table); err != nil {
				return err
			}
			if !isMetadataFile(opts.MetadataFile) {
				return usageErrorf("%s is not a metadata file (want a path or URI ending in .metadata.json)", opts.MetadataFile)
			}
			if runF != nil {
				return runF(opts)
			}
			return runTableRegister(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "register a metadata file that is not the newest of its directory")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "check the file and the name, register nothing")
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

type tableRegisterView struct {
	Table               string `json:"table"`
	MetadataLocation    string `json:"metadata_location"`
	CurrentSnapshotID   *int64 `json:"current_snapshot_id"`
	TotalRecordsCount   *int64 `json:"total_records_count"`
	TotalDataFilesCount *int64 `json:"total_data_files_count"`
	Newest              bool   `json:"newest"`
	DryRun              bool   `json:"dry_run"`
	Registered          bool   `json:"registered"`
}

func runTableRegister(ctx context.Context, opts *TableRegisterOptions) error {
	id, _ := parseTableArg(opts.Table)
	oc, err := openCatalog(ctx, opts.f, opts.Catalog)
	if err != nil {
		return err
	}
	defer oc.Close()
	reg, ok := oc.cat.(catalog.Registrar)
	if !ok {
		return fmt.Errorf("register %s: the %s catalog does not register existing metadata files; use a SQL or REST catalog", id, oc.cat.Name())
	}
	// Asked first: a REST server may register a table in a namespace it
	// does not have, where no listing finds it.
	if _, err := oc.cat.ListTables(ctx, id.Namespace); errors.Is(err, catalog.ErrNoSuchNamespace) {
		return fmt.Errorf("register %s: namespace %s does not exist; create it first: icectl namespace create %s", id, strings.Join(id.Namespace, "."), strings.Join(id.Namespace, "."))
	} else if err != nil {
		return scrub(oc.cfg, fmt.Errorf("register %s: %w", id, err))
	}
	loc := opts.MetadataFile
	fio, err := catalogLocationIO(ctx, opts.f, oc, loc)
	if err != nil {
		return scrub(oc.cfg, err)
	}
	fio = fileio.ReadOnly(fio)
	md, err := catalog.ReadMetadata(ctx, fio, loc)
	if err != nil {
		return scrub(oc.cfg, fmt.Errorf("register %s: %w", id, err))
	}
	v := tableRegisterView{Table: id.String(), MetadataLocation: loc, CurrentSnapshotID: md.CurrentSnapshotID, Newest: true, DryRun: opts.DryRun}
	if err := relocate.CheckNewest(ctx, fio, loc); err != nil {
		if !errors.Is(err, relocate.ErrNotNewest) || !opts.Force {
			return scrub(oc.cfg, fmt.Errorf("register %s from %s: %w; --force registers it anyway", id, loc, err))
		}
		v.Newest = false
		printf(opts.f.ErrOut, "%s: %v; registering it anyway (--force)\n", id, err)
	}
	if s := md.CurrentSnapshot(); s != nil {
		v.TotalRecordsCount, v.TotalDataFilesCount = summaryCount(s.Summary, "total-records"), summaryCount(s.Summary, "total-data-files")
	}
	if opts.DryRun {
		if _, err := oc.cat.LoadTable(ctx, id); err == nil {
			return fmt.Errorf("register %s: %w", id, catalog.ErrAlreadyExists)
		} else if !errors.Is(err, catalog.ErrNoSuchTable) {
			return loadTableError(oc.cfg, err)
		}
	} else {
		t, err := reg.RegisterTable(ctx, id, loc)
		if err != nil {
			err = scrub(oc.cfg, err)
			if errors.Is(err, catalog.ErrCommitStateUnknown) {
				return &ExitError{Code: ExitCommitState, Err: fmt.Errorf("%w; check with `icectl table show %s`", err, id)}
			}
			return err
		}
		v.Registered, v.MetadataLocation = true, t.MetadataLocation
	}
	if opts.f.Output == outputJSON {
		return writeJSON(opts.f.Out, v)
	}
	if v.DryRun {
		printf(opts.f.Out, "%s: dry run, nothing changed; %s would be registered (current snapshot %s)\n", v.Table, v.MetadataLocation, optInt64(v.CurrentSnapshotID))
		return nil
	}
	printf(opts.f.Out, "%s: registered %s (current snapshot %s)\n", v.Table, v.MetadataLocation, optInt64(v.CurrentSnapshotID))
	return nil
}

func summaryCount(summary map[string]string, key string) *int64 {
	n, err := strconv.ParseInt(summary[key], 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

// catalogLocationIO is a FileIO for loc with the catalog's storage settings
// (s3.*), those the environment gives filling the gaps.
func catalogLocationIO(ctx context.Context, f *Factory, oc *openedCatalog, loc string) (fileio.FileIO, error) {
	props := map[string]string{}
	if oc.cfg != nil {
		for k, v := range oc.cfg.Config().Props {
			props[k] = v
		}
	}
	for k, v := range fileIOProps(S3Options{}, f.Getenv) {
		if _, ok := props[k]; !ok {
			props[k] = v
		}
	}
	return fileio.Load(ctx, loc, props)
}
