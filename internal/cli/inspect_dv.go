package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/puffin"
	"github.com/icectl/icectl/internal/shared/bytesize"
)

// InspectDVOptions are the inputs of `icectl inspect dv`.
type InspectDVOptions struct {
	f      *Factory
	S3     S3Options
	File   string
	Offset int64
	Length int64 // 0: the whole file is the blob
	All    bool
}

// NewCmdInspectDV returns `icectl inspect dv`. runF replaces the run function
// in tests; nil runs the command.
func NewCmdInspectDV(f *Factory, runF func(*InspectDVOptions) error) *cobra.Command {
	opts := &InspectDVOptions{f: f}
	cmd := &cobra.Command{
		Use:   "dv FILE",
		Short: "Decode a deletion vector (deletion-vector-v1 blob)",
		Long: `Decode a deletion vector: a file holding one deletion-vector-v1 blob, or,
with --offset and --length, the blob at that place in a Puffin file (the
content_offset and content_size_in_bytes of its manifest entry).

Prints the CRC, the cardinality and the deleted positions (the first 20, or
all with --all).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			fs := cmd.Flags()
			if fs.Changed("offset") != fs.Changed("length") {
				return usageErrorf("--offset and --length go together")
			}
			if opts.Offset < 0 {
				return usageErrorf("invalid --offset %d: must not be negative", opts.Offset)
			}
			if fs.Changed("length") && opts.Length <= 0 {
				return usageErrorf("invalid --length %d: must be positive", opts.Length)
			}
			if runF != nil {
				return runF(opts)
			}
			return runInspectDV(cmd.Context(), opts)
		},
	}
	cmd.Flags().Int64Var(&opts.Offset, "offset", 0, "byte offset of the blob in FILE")
	cmd.Flags().Int64Var(&opts.Length, "length", 0, "byte length of the blob")
	cmd.Flags().BoolVar(&opts.All, "all", false, "list every deleted position")
	addS3Flags(cmd, &opts.S3)
	return cmd
}

type dvFileView struct {
	File   string `json:"file"`
	Offset int64  `json:"offset"`
	Length int64  `json:"length"`
	dvView
}

func runInspectDV(ctx context.Context, opts *InspectDVOptions) error {
	file, err := openFile(ctx, opts.f, opts.S3, opts.File)
	if err != nil {
		return err
	}
	defer file.Close()
	if err := requireDVKind(file, opts); err != nil {
		return err
	}

	var blob []byte
	if opts.Length == 0 {
		if blob, err = readAll(file, opts.File); err != nil {
			return err
		}
	} else {
		if end := opts.Offset + opts.Length; end > file.Size() || end < opts.Offset {
			return fmt.Errorf("blob at offset %d length %d lies beyond the end of %s (%d bytes)",
				opts.Offset, opts.Length, opts.File, file.Size())
		}
		blob = make([]byte, opts.Length)
		if n, err := file.ReadAt(blob, opts.Offset); n != len(blob) {
			return fmt.Errorf("read %s: %w", opts.File, err)
		}
	}
	bm, err := puffin.DecodeDV(blob)
	if err != nil {
		return fmt.Errorf("%s: %w", opts.File, err)
	}
	v := dvFileView{File: opts.File, Offset: opts.Offset, Length: int64(len(blob)), dvView: newDVView(blob[len(blob)-4:], bm, opts.All)}
	if opts.f.Output == outputJSON {
		return writeJSON(opts.f.Out, v)
	}
	return writeDVText(opts.f.Out, [][2]any{
		{"file", v.File},
		{"offset", v.Offset},
		{"length", bytesize.Format(v.Length)},
	}, v.dvView)
}

// requireDVKind checks FILE's kind: a Puffin file holding the blob when
// --length is given, else a bare blob, whose bytes match no file kind.
func requireDVKind(file fileio.File, opts *InspectDVOptions) error {
	if opts.Length != 0 {
		return requireKind(file, opts.File, kindPuffin)
	}
	if sniffKind(file) == kindPuffin {
		return usageErrorf("%s is a Puffin file; give --offset and --length of one blob, or list them with `icectl inspect puffin %s`", opts.File, opts.File)
	}
	return requireKind(file, opts.File, kindUnknown)
}
