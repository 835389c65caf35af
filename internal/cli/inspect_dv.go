package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/puffin"
	"github.com/icectl/icectl/internal/shared/bytesize"
)

// InspectDVOptions are the inputs of `icectl inspect dv`.
type InspectDVOptions struct {
	f         *Factory
	S3        S3Options
	File      string
	Offset    int64
	hasOffset bool
	Length    int64 // 0: the whole file is the blob, or the Puffin footer says
	All       bool
}

// NewCmdInspectDV returns `icectl inspect dv`. runF replaces the run function
// in tests; nil runs the command.
func NewCmdInspectDV(f *Factory, runF func(*InspectDVOptions) error) *cobra.Command {
	opts := &InspectDVOptions{f: f}
	cmd := &cobra.Command{
		Use:   "dv FILE[@OFFSET]",
		Short: "Decode deletion vectors (deletion-vector-v1 blobs)",
		Long: `Decode deletion vectors: every deletion-vector-v1 blob of a Puffin file; the
blob at FILE@OFFSET (as icectl files --deletes prints a DV) or at --offset of a
Puffin file (its content_offset; the footer gives the length, or --length);
or a file holding one bare blob.

Prints the CRC, the cardinality and the deleted positions (the first 20, or
all with --all).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			fs := cmd.Flags()
			opts.hasOffset = fs.Changed("offset")
			if fs.Changed("length") && !opts.hasOffset {
				return usageErrorf("--length needs --offset: the blob's place in the Puffin file")
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
	cmd.Flags().Int64Var(&opts.Offset, "offset", 0, "byte offset of the blob in a Puffin FILE (content_offset)")
	cmd.Flags().Int64Var(&opts.Length, "length", 0, "byte length of the blob (default: as the Puffin footer says)")
	cmd.Flags().BoolVar(&opts.All, "all", false, "list every deleted position")
	addS3Flags(cmd, &opts.S3)
	return cmd
}

type dvFileView struct {
	File               string `json:"file"`
	Offset             int64  `json:"offset"`
	Length             int64  `json:"length"`
	ReferencedDataFile string `json:"referenced_data_file,omitempty"`
	dvView
}

// puffinDVsView is every deletion vector of one Puffin file.
type puffinDVsView struct {
	File            string       `json:"file"`
	DeletionVectors []dvFileView `json:"deletion_vectors"`
	OtherBlobs      int          `json:"other_blobs"`
}

// splitDVRef splits FILE@OFFSET, the form icectl files prints a DV in.
func splitDVRef(s string) (string, int64, bool) {
	i := strings.LastIndexByte(s, '@')
	if i <= 0 {
		return "", 0, false
	}
	off, err := strconv.ParseInt(s[i+1:], 10, 64)
	if err != nil || off < 0 || strings.ContainsAny(s[i+1:], "+-") {
		return "", 0, false
	}
	return s[:i], off, true
}

func runInspectDV(ctx context.Context, opts *InspectDVOptions) error {
	file, err := openFile(ctx, opts.f, opts.S3, opts.File)
	if err != nil && !opts.hasOffset {
		// A path ending in @OFFSET that does not exist as named is a DV
		// reference as icectl files prints it.
		if name, off, ok := splitDVRef(opts.File); ok {
			if f2, err2 := openFile(ctx, opts.f, opts.S3, name); err2 == nil {
				file, err = f2, nil
				opts.File, opts.Offset, opts.hasOffset = name, off, true
			}
		}
	}
	if err != nil {
		return err
	}
	defer file.Close()
	if opts.Length != 0 || !opts.hasOffset && sniffKind(file) != kindPuffin {
		return inspectDVBlob(file, opts)
	}
	if err := requireKind(file, opts.File, kindPuffin); err != nil {
		return err
	}
	r, err := puffin.OpenReader(file, file.Size())
	if err != nil {
		return fmt.Errorf("%s: %w", opts.File, err)
	}
	if opts.hasOffset {
		return inspectDVAt(file, r, opts)
	}
	v := puffinDVsView{File: opts.File, DeletionVectors: []dvFileView{}}
	for _, b := range r.Metadata().Blobs {
		if b.Type != puffin.DVBlobType {
			v.OtherBlobs++
			continue
		}
		dv, err := readDVBlob(file, r, b, opts.File, opts.All)
		if err != nil {
			return err
		}
		v.DeletionVectors = append(v.DeletionVectors, dv)
	}
	if len(v.DeletionVectors) == 0 {
		return fmt.Errorf("%s holds no deletion vector (%d other blob(s); see icectl inspect puffin %s)", opts.File, v.OtherBlobs, opts.File)
	}
	if opts.f.Output == outputJSON {
		return writeJSON(opts.f.Out, v)
	}
	w := opts.f.Out
	for i, dv := range v.DeletionVectors {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := writeDVFileText(w, dv); err != nil {
			return err
		}
	}
	return nil
}

// inspectDVAt decodes the deletion vector that starts at --offset, its
// length as the footer lists it.
func inspectDVAt(file fileio.File, r *puffin.Reader, opts *InspectDVOptions) error {
	var starts []string
	for _, b := range r.Metadata().Blobs {
		if b.Offset == opts.Offset {
			if b.Type != puffin.DVBlobType {
				return fmt.Errorf("the blob at offset %d of %s is a %s, not a deletion vector", opts.Offset, opts.File, b.Type)
			}
			v, err := readDVBlob(file, r, b, opts.File, opts.All)
			if err != nil {
				return err
			}
			if opts.f.Output == outputJSON {
				return writeJSON(opts.f.Out, v)
			}
			return writeDVFileText(opts.f.Out, v)
		}
		if b.Type == puffin.DVBlobType {
			starts = append(starts, strconv.FormatInt(b.Offset, 10))
		}
	}
	return fmt.Errorf("no blob of %s starts at offset %d; its deletion vectors start at %s (or give --length to read raw bytes)",
		opts.File, opts.Offset, strings.Join(starts, ", "))
}

// readDVBlob decodes the deletion vector b of the Puffin file named name;
// all lists every position.
func readDVBlob(file fileio.File, r *puffin.Reader, b puffin.BlobMetadata, name string, all bool) (dvFileView, error) {
	bm, err := r.ReadDV(b)
	if err != nil {
		return dvFileView{}, fmt.Errorf("%s: blob at offset %d: %w", name, b.Offset, err)
	}
	// ReadDV checked the blob is stored uncompressed, so its CRC is the
	// last four bytes at its place in the file.
	crc := make([]byte, 4)
	if n, err := file.ReadAt(crc, b.Offset+b.Length-4); n != len(crc) {
		return dvFileView{}, fmt.Errorf("%s: blob at offset %d: read CRC: %w", name, b.Offset, err)
	}
	return dvFileView{File: name, Offset: b.Offset, Length: b.Length,
		ReferencedDataFile: b.Properties[puffin.PropReferencedDataFile], dvView: newDVView(crc, bm, all)}, nil
}

// inspectDVBlob decodes a bare blob, or --length bytes at --offset.
func inspectDVBlob(file fileio.File, opts *InspectDVOptions) error {
	if err := requireDVKind(file, opts); err != nil {
		return err
	}
	var blob []byte
	var err error
	if opts.Length == 0 {
		if blob, err = readAll(file, opts.File); err != nil {
			return err
		}
	} else {
		if end := opts.Offset + opts.Length; end > file.Size() || end < opts.Offset {
			return fmt.Errorf("blob at offset %d length %d lies beyond the end of %s (%s)",
				opts.Offset, opts.Length, opts.File, bytesize.Format(file.Size()))
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
	return writeDVFileText(opts.f.Out, v)
}

func writeDVFileText(w io.Writer, v dvFileView) error {
	head := [][2]any{
		{"file", v.File},
		{"offset", v.Offset},
		{"length", bytesize.Format(v.Length)},
	}
	if v.ReferencedDataFile != "" {
		head = append(head, [2]any{"referenced data file", v.ReferencedDataFile})
	}
	return writeDVText(w, head, v.dvView)
}

// requireDVKind checks FILE's kind: a Puffin file holding the blob when
// --length is given, else a bare blob, whose bytes match no file kind.
func requireDVKind(file fileio.File, opts *InspectDVOptions) error {
	if opts.Length != 0 {
		return requireKind(file, opts.File, kindPuffin)
	}
	return requireKind(file, opts.File, kindUnknown)
}
