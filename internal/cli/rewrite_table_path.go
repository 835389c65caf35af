package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/internal/cli/config"
	"github.com/icectl/icectl/relocate"
)

// RewriteTablePathOptions are the inputs of `icectl rewrite-table-path`.
type RewriteTablePathOptions struct {
	f       *Factory
	Catalog config.Flags
	Table   string
	From    string
	To      string
	Stage   string
	DryRun  bool
	// StartVersion and EndVersion are metadata file names (Java's
	// start_version, end_version).
	StartVersion, EndVersion string
}

// NewCmdRewriteTablePath returns `icectl rewrite-table-path`.
func NewCmdRewriteTablePath(f *Factory, runF func(*RewriteTablePathOptions) error) *cobra.Command {
	opts := &RewriteTablePathOptions{f: f}
	cmd := &cobra.Command{
		Use:   "rewrite-table-path TABLE --from PREFIX --to PREFIX --stage DIR",
		Short: "Write a copy of a table's metadata with its path prefix replaced, and the list of files to copy",
		Long: `Write, under --stage DIR (empty or new), a copy of the table's metadata with
every path that starts with --from starting with --to instead, as Iceberg
1.8's rewrite_table_path procedure does for a whole table: the current
metadata file and those its metadata-log lists, the manifest list of every
snapshot, every manifest, and every live position-delete and deletion-vector
file (they hold data file paths). DIR/file-list then lists, one
"source,target" line each, the staged files and every data, delete and
statistics file, each with its place under --to. Copy every pair, then
register the newest metadata file (latest_version) at the target:

  icectl rewrite-table-path db.t --from s3://old/wh --to s3://new/wh --stage /tmp/move
  while IFS=, read -r src dst; do aws s3 cp "$src" "$dst"; done < /tmp/move/file-list
  icectl table register db.t s3://new/wh/db/t/metadata/<latest_version> --catalog NEW

--end-version NAME copies the table as of that metadata file (the current one
or one of its metadata-log) instead of the current one; --start-version NAME
makes the copy incremental after an earlier copy of that version: only the
metadata files after it, the manifest lists of the snapshots it lacks, the
manifests those list (with their delete files) and the data and delete files
those snapshots added are staged and listed.

The table itself is not changed. A path of the table outside --from, or a
non-empty DIR, stops the run before anything is written (a run that fails
later removes what it wrote). --dry-run checks and counts, writing nothing.
Format v1 tables are refused (upgrade them first).

` + exitCodesHelp + "\n\n" + catalogFlagsHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			switch {
			case strings.TrimSpace(opts.From) == "" || strings.TrimSpace(opts.To) == "":
				return usageErrorf("give --from and --to")
			case strings.TrimSuffix(opts.From, "/") == strings.TrimSuffix(opts.To, "/"):
				return usageErrorf("--from and --to are the same (%s)", opts.From)
			case strings.TrimSpace(opts.Stage) == "":
				return usageErrorf("give --stage DIR, an empty or new directory for the rewritten metadata")
			}
			if runF != nil {
				return runF(opts)
			}
			return runRewriteTablePath(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.From, "from", "", "the prefix the table's paths start with (required)")
	cmd.Flags().StringVar(&opts.To, "to", "", "the prefix they get instead (required)")
	cmd.Flags().StringVar(&opts.Stage, "stage", "", "empty or new directory (path or URI) for the rewritten metadata and the file list (required)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "check and count, write nothing")
	cmd.Flags().StringVar(&opts.StartVersion, "start-version", "", "metadata file name of an earlier copy: copy only what came after it")
	cmd.Flags().StringVar(&opts.EndVersion, "end-version", "", "metadata file name to copy the table as of (default: the current one)")
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

type rewriteTablePathView struct {
	Table                           string         `json:"table"`
	LatestVersion                   string         `json:"latest_version"`
	FileListLocation                *string        `json:"file_list_location"`
	StagingLocation                 string         `json:"staging_location"`
	RewrittenManifestFilePathsCount int            `json:"rewritten_manifest_file_paths_count"`
	RewrittenDeleteFilePathsCount   int            `json:"rewritten_delete_file_paths_count"`
	RewrittenMetadataFilesCount     int            `json:"rewritten_metadata_files_count"`
	RewrittenManifestListFilesCount int            `json:"rewritten_manifest_list_files_count"`
	FilesToCopy                     int            `json:"files_to_copy"`
	DryRun                          bool           `json:"dry_run"`
	FileList                        []filePairView `json:"file_list,omitempty"`
}

type filePairView struct {
	Source string `json:"source"`
	Target string `json:"target"`
}

func runRewriteTablePath(ctx context.Context, opts *RewriteTablePathOptions) error {
	oc, t, err := loadTable(ctx, opts.f, opts.Catalog, opts.Table)
	if err != nil {
		return err
	}
	defer oc.Close()
	stage := opts.Stage
	if !strings.Contains(stage, "://") && !filepath.IsAbs(stage) {
		if stage, err = filepath.Abs(stage); err != nil {
			return err
		}
	}
	sio, err := catalogLocationIO(ctx, opts.f, oc, stage)
	if err != nil {
		return scrub(oc.cfg, err)
	}
	res, err := relocate.Rewrite(ctx, fileio.ReadOnly(t.IO), sio, t.MetadataLocation, t.Metadata,
		relocate.Options{SourcePrefix: opts.From, TargetPrefix: opts.To, StagingDir: stage, DryRun: opts.DryRun,
			StartVersion: opts.StartVersion, EndVersion: opts.EndVersion})
	if err != nil {
		err = scrub(oc.cfg, err)
		if errors.Is(err, relocate.ErrPrefix) {
			return fmt.Errorf("rewrite-table-path %s: %w; nothing was written", t.Ident, err)
		}
		return fmt.Errorf("rewrite-table-path %s: %w", t.Ident, err)
	}
	v := rewriteTablePathView{Table: t.Ident.String(), LatestVersion: res.LatestVersion, StagingLocation: res.StagingLocation,
		RewrittenManifestFilePathsCount: res.RewrittenManifests, RewrittenDeleteFilePathsCount: res.RewrittenDeleteFiles,
		RewrittenMetadataFilesCount: res.MetadataFiles, RewrittenManifestListFilesCount: res.ManifestLists,
		FilesToCopy: len(res.Files), DryRun: opts.DryRun}
	if res.FileListLocation != "" {
		v.FileListLocation = &res.FileListLocation
	}
	if opts.DryRun {
		for _, p := range res.Files {
			v.FileList = append(v.FileList, filePairView{p.Source, p.Target})
		}
	}
	if opts.f.Output == outputJSON {
		return writeJSON(opts.f.Out, v)
	}
	w := opts.f.Out
	if opts.DryRun {
		printf(w, "%s: dry run, nothing written; the copy's newest metadata file would be %s\n", v.Table, v.LatestVersion)
	} else {
		printf(w, "%s: staged under %s; copy the pairs of %s, then register %s at the target\n", v.Table, v.StagingLocation, res.FileListLocation, v.LatestVersion)
	}
	tb := newTable(w)
	tb.row("  metadata files", v.RewrittenMetadataFilesCount)
	tb.row("  manifest lists", v.RewrittenManifestListFilesCount)
	tb.row("  manifests", v.RewrittenManifestFilePathsCount)
	tb.row("  delete files rewritten", v.RewrittenDeleteFilePathsCount)
	tb.row("  files to copy", v.FilesToCopy)
	return tb.flush()
}
