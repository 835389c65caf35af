package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/iceberg/puffin"
	"github.com/icectl/icectl/internal/shared/bytesize"
)

// InspectPuffinOptions are the inputs of `icectl inspect puffin`.
type InspectPuffinOptions struct {
	f    *Factory
	S3   S3Options
	File string
	All  bool
}

// NewCmdInspectPuffin returns `icectl inspect puffin`. runF replaces the run
// function in tests; nil runs the command.
func NewCmdInspectPuffin(f *Factory, runF func(*InspectPuffinOptions) error) *cobra.Command {
	opts := &InspectPuffinOptions{f: f}
	cmd := &cobra.Command{
		Use:   "puffin FILE",
		Short: "Print a Puffin file's properties and blobs",
		Long: `Print a Puffin file's properties and blobs. Deletion vectors
(deletion-vector-v1 blobs) are decoded: referenced data file, cardinality and
the deleted positions (the first 20, or all with --all).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runInspectPuffin(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "list every deleted position of each deletion vector")
	addS3Flags(cmd, &opts.S3)
	return cmd
}

type puffinView struct {
	File       string            `json:"file"`
	Size       int64             `json:"size"`
	FooterSize int64             `json:"footer_size"`
	Properties map[string]string `json:"properties"`
	Blobs      []puffinBlobView  `json:"blobs"`
}

type puffinBlobView struct {
	Type             string            `json:"type"`
	Fields           []int32           `json:"fields"`
	SnapshotID       int64             `json:"snapshot_id"`
	SequenceNumber   int64             `json:"sequence_number"`
	Offset           int64             `json:"offset"`
	Length           int64             `json:"length"`
	CompressionCodec string            `json:"compression_codec,omitempty"`
	Properties       map[string]string `json:"properties"`
	DeletionVector   *puffinDVView     `json:"deletion_vector,omitempty"`
}

type puffinDVView struct {
	ReferencedDataFile string `json:"referenced_data_file"`
	dvView
}

func runInspectPuffin(ctx context.Context, opts *InspectPuffinOptions) error {
	file, err := openFile(ctx, opts.f, opts.S3, opts.File)
	if err != nil {
		return err
	}
	defer file.Close()
	if err := requireKind(file, opts.File, kindPuffin); err != nil {
		return err
	}
	r, err := puffin.OpenReader(file, file.Size())
	if err != nil {
		return fmt.Errorf("%s: %w", opts.File, err)
	}
	md := r.Metadata()
	v := puffinView{
		File:       opts.File,
		Size:       file.Size(),
		FooterSize: r.FooterSize(),
		Properties: nonNilMap(md.Properties),
		Blobs:      make([]puffinBlobView, 0, len(md.Blobs)),
	}
	for _, b := range md.Blobs {
		bv := puffinBlobView{
			Type:             b.Type,
			Fields:           b.Fields,
			SnapshotID:       b.SnapshotID,
			SequenceNumber:   b.SequenceNumber,
			Offset:           b.Offset,
			Length:           b.Length,
			CompressionCodec: b.CompressionCodec,
			Properties:       nonNilMap(b.Properties),
		}
		if bv.Fields == nil {
			bv.Fields = []int32{}
		}
		if b.Type == puffin.DVBlobType {
			dv, err := readDVBlob(file, r, b, opts.File, opts.All)
			if err != nil {
				return err
			}
			bv.DeletionVector = &puffinDVView{ReferencedDataFile: dv.ReferencedDataFile, dvView: dv.dvView}
		}
		v.Blobs = append(v.Blobs, bv)
	}
	if opts.f.Output == outputJSON {
		return writeJSON(opts.f.Out, v)
	}
	return writePuffinText(opts, v)
}

func writePuffinText(opts *InspectPuffinOptions, v puffinView) error {
	t := newTable(opts.f.Out)
	t.row("file", v.File)
	t.row("size", bytesize.Format(v.Size))
	t.row("footer size", bytesize.Format(v.FooterSize))
	writeProperties(t, "", v.Properties)
	t.row("blobs", len(v.Blobs))
	if err := t.flush(); err != nil {
		return err
	}
	for i, b := range v.Blobs {
		printf(opts.f.Out, "\nblob %d %s\n", i, b.Type)
		t := newTable(opts.f.Out)
		t.row("  fields", fmt.Sprint(b.Fields))
		t.row("  snapshot id", b.SnapshotID)
		t.row("  sequence number", b.SequenceNumber)
		t.row("  offset", b.Offset)
		t.row("  length", bytesize.Format(b.Length))
		codec := b.CompressionCodec
		if codec == "" {
			codec = "none"
		}
		t.row("  compression", codec)
		writeProperties(t, "  ", b.Properties)
		if dv := b.DeletionVector; dv != nil {
			t.row("  referenced data file", dv.ReferencedDataFile)
			dv.writeText(t, "  ")
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	return nil
}

// writeProperties adds a properties section in key order.
func writeProperties(t *table, indent string, props map[string]string) {
	if len(props) == 0 {
		t.row(indent+"properties", "{}")
		return
	}
	t.row(indent+"properties", "")
	for _, k := range sortedKeys(props) {
		t.row(indent+"  "+k, props[k])
	}
}

// nonNilMap makes an absent map print as {} rather than null in JSON.
func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
