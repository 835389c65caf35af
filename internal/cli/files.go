package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/health"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	icetable "github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/cli/config"
	"github.com/icectl/icectl/internal/shared/bytesize"
)

// FilesOptions are the inputs of `icectl files`.
type FilesOptions struct {
	f          *Factory
	Catalog    config.Flags
	Table      string
	Deletes    bool
	SnapshotID int64
	hasSnap    bool
}

// NewCmdFiles returns `icectl files`. runF replaces the run function in
// tests; nil runs the command.
func NewCmdFiles(f *Factory, runF func(*FilesOptions) error) *cobra.Command {
	opts := &FilesOptions{f: f}
	var snapshot string
	cmd := &cobra.Command{
		Use:   "files TABLE",
		Short: "List the live data files (or delete files) of a snapshot",
		Long: `List the live data files of a table's current snapshot, or of --snapshot ID;
with --deletes, its delete files instead (position deletes, deletion vectors,
equality deletes). Files are listed in manifest-list order, then manifest order.

` + catalogFlagsHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if cmd.Flags().Changed("snapshot") {
				id, err := strconv.ParseInt(snapshot, 10, 64)
				if err != nil {
					return usageErrorf("invalid --snapshot %q: want a snapshot id", snapshot)
				}
				opts.SnapshotID, opts.hasSnap = id, true
			}
			if runF != nil {
				return runF(opts)
			}
			return runFiles(cmd.Context(), opts)
		},
	}
	addCatalogFlags(cmd, &opts.Catalog)
	cmd.Flags().BoolVar(&opts.Deletes, "deletes", false, "list delete files instead of data files")
	cmd.Flags().StringVar(&snapshot, "snapshot", "", "snapshot id (default: the current snapshot)")
	return cmd
}

type filesView struct {
	Table      string     `json:"table"`
	SnapshotID *int64     `json:"snapshot_id"`
	Content    string     `json:"content"`
	Files      []fileItem `json:"files"`
}

type fileItem struct {
	Path               string  `json:"path"`
	Content            string  `json:"content"`
	Format             string  `json:"format"`
	SpecID             int32   `json:"spec_id"`
	Partition          string  `json:"partition"`
	Records            int64   `json:"records"`
	SizeBytes          int64   `json:"size_bytes"`
	DataSequenceNumber *int64  `json:"data_sequence_number"`
	FileSequenceNumber *int64  `json:"file_sequence_number"`
	ReferencedDataFile *string `json:"referenced_data_file,omitempty"`
	ContentOffset      *int64  `json:"content_offset,omitempty"`
	ContentSizeInBytes *int64  `json:"content_size_in_bytes,omitempty"`
	EqualityIDs        []int   `json:"equality_ids,omitempty"`
	FirstRowID         *int64  `json:"first_row_id,omitempty"`
}

// contentName names what a file holds; DVs are told apart from position
// delete files.
func contentName(df *manifest.DataFile) string {
	switch {
	case icetable.IsDV(df):
		return "deletion-vector"
	case df.Content == manifest.ContentData:
		return "data"
	case df.Content == manifest.ContentPositionDeletes:
		return "position-deletes"
	case df.Content == manifest.ContentEqualityDeletes:
		return "equality-deletes"
	}
	return fmt.Sprintf("content-%d", df.Content)
}

func newFileItem(md *spec.TableMetadata, e icetable.FileEntry) fileItem {
	df := &e.Entry.DataFile
	ps, _ := md.SpecByID(int(df.SpecID))
	return fileItem{
		Path:               df.FilePath,
		Content:            contentName(df),
		Format:             df.FileFormat,
		SpecID:             df.SpecID,
		Partition:          health.PartitionText(ps, df.Partition),
		Records:            df.RecordCount,
		SizeBytes:          df.FileSizeInBytes,
		DataSequenceNumber: e.Entry.SequenceNumber,
		FileSequenceNumber: e.Entry.FileSequenceNumber,
		ReferencedDataFile: df.ReferencedDataFile,
		ContentOffset:      df.ContentOffset,
		ContentSizeInBytes: df.ContentSizeInBytes,
		EqualityIDs:        df.EqualityIDs,
		FirstRowID:         df.FirstRowID,
	}
}

func runFiles(ctx context.Context, opts *FilesOptions) error {
	oc, t, err := loadTable(ctx, opts.f, opts.Catalog, opts.Table)
	if err != nil {
		return err
	}
	defer oc.Close()
	md := t.Metadata
	snap := md.CurrentSnapshot()
	if opts.hasSnap {
		s, ok := md.SnapshotByID(opts.SnapshotID)
		if !ok {
			return usageErrorf("invalid --snapshot %d: table %s has no such snapshot (see icectl snapshots %s)", opts.SnapshotID, t.Ident, t.Ident)
		}
		snap = s
	}
	v := filesView{Table: t.Ident.String(), Content: "data", Files: []fileItem{}}
	walk := icetable.WalkOptions{Content: icetable.DataOnly}
	if opts.Deletes {
		v.Content, walk.Content = "deletes", icetable.DeletesOnly
	}
	if snap != nil {
		v.SnapshotID = &snap.SnapshotID
		err := icetable.WalkEntries(ctx, t.IO, snap, walk, func(e icetable.FileEntry) error {
			v.Files = append(v.Files, newFileItem(md, e))
			return nil
		})
		if err != nil {
			// err names the snapshot or the file that failed.
			return scrub(oc.cfg, fmt.Errorf("table %s: %w", t.Ident, err))
		}
	}
	if opts.f.Output == outputJSON {
		return writeJSON(opts.f.Out, v)
	}
	return writeFilesText(opts.f.Out, opts.f.ErrOut, v)
}

// writeFilesText writes the files to w; that there are none is a note, on
// errOut.
func writeFilesText(w, errOut io.Writer, v filesView) error {
	if len(v.Files) == 0 {
		what := "data files"
		if v.Content == "deletes" {
			what = "delete files"
		}
		_, err := printf(errOut, "no %s\n", what)
		return err
	}
	t := newTable(w)
	if v.Content == "deletes" {
		t.row("PATH", "CONTENT", "FORMAT", "PARTITION", "RECORDS", "SIZE", "SEQ", "FILE SEQ", "REFERENCED DATA FILE")
	} else {
		t.row("PATH", "CONTENT", "FORMAT", "PARTITION", "RECORDS", "SIZE", "SEQ", "FILE SEQ")
	}
	for _, f := range v.Files {
		part := f.Partition
		if part == "" {
			part = "-"
		}
		path := f.Path
		size := f.SizeBytes
		if f.ContentOffset != nil && f.ContentSizeInBytes != nil {
			path = fmt.Sprintf("%s@%d", f.Path, *f.ContentOffset)
			size = *f.ContentSizeInBytes
		}
		cells := []any{path, f.Content, f.Format, part, f.Records, bytesize.Format(size), optInt64(f.DataSequenceNumber), optInt64(f.FileSequenceNumber)}
		if v.Content == "deletes" {
			ref := "-"
			if f.ReferencedDataFile != nil {
				ref = *f.ReferencedDataFile
			}
			cells = append(cells, ref)
		}
		t.row(cells...)
	}
	return t.flush()
}
