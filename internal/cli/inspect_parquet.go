package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/internal/shared/bytesize"
)

// InspectParquetOptions are the inputs of `icectl inspect parquet`.
type InspectParquetOptions struct {
	f    *Factory
	S3   S3Options
	File string
}

// NewCmdInspectParquet returns `icectl inspect parquet`. runF replaces the
// run function in tests; nil runs the command.
func NewCmdInspectParquet(f *Factory, runF func(*InspectParquetOptions) error) *cobra.Command {
	opts := &InspectParquetOptions{f: f}
	cmd := &cobra.Command{
		Use:   "parquet FILE",
		Short: "Print a Parquet file's schema (with field ids), row groups and metadata",
		Long: `Print a Parquet file's footer: the schema with Iceberg field ids, each row
group's column chunks with their statistics, and the key/value metadata.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runInspectParquet(cmd.Context(), opts)
		},
	}
	addS3Flags(cmd, &opts.S3)
	return cmd
}

type parquetView struct {
	File string `json:"file"`
	Size int64  `json:"size"`
	*datafile.ParquetInfo
}

func runInspectParquet(ctx context.Context, opts *InspectParquetOptions) error {
	file, err := openFile(ctx, opts.f, opts.S3, opts.File)
	if err != nil {
		return err
	}
	defer file.Close()
	if err := requireKind(file, opts.File, kindParquet); err != nil {
		return err
	}
	info, err := datafile.InspectParquet(file, file.Size())
	if err != nil {
		return fmt.Errorf("%s: %w", opts.File, err)
	}
	v := parquetView{File: opts.File, Size: file.Size(), ParquetInfo: info}
	if opts.f.Output == outputJSON {
		return writeJSON(opts.f.Out, v)
	}
	return writeParquetText(opts.f.Out, v)
}

func writeParquetText(w io.Writer, v parquetView) error {
	t := newTable(w)
	t.row("file", v.File)
	t.row("size", bytesize.Format(v.Size))
	t.row("created by", v.CreatedBy)
	t.row("format version", v.FormatVersion)
	t.row("rows", v.NumRows)
	t.row("row groups", len(v.RowGroups))
	if err := t.flush(); err != nil {
		return err
	}

	fmt.Fprintln(w, "\nschema")
	t = newTable(w)
	t.row("  name", "field id", "repetition", "type", "logical type")
	var walk func(nodes []datafile.ParquetNode, depth int)
	walk = func(nodes []datafile.ParquetNode, depth int) {
		for _, n := range nodes {
			id := "-"
			if n.FieldID != nil {
				id = fmt.Sprint(*n.FieldID)
			}
			typ := n.PhysicalType
			if n.TypeLength > 0 {
				typ = fmt.Sprintf("%s(%d)", typ, n.TypeLength)
			}
			logical := n.LogicalType
			if logical == "" {
				logical = n.ConvertedType
			}
			t.row("  "+strings.Repeat("  ", depth)+n.Name, id, n.Repetition, typ, logical)
			walk(n.Children, depth+1)
		}
	}
	walk(v.Schema, 0)
	if err := t.flush(); err != nil {
		return err
	}

	for i, rg := range v.RowGroups {
		fmt.Fprintf(w, "\nrow group %d: %d rows, offset %d, %s compressed, %s uncompressed\n",
			i, rg.NumRows, rg.FileOffset, bytesize.Format(rg.CompressedSize), bytesize.Format(rg.TotalByteSize))
		t := newTable(w)
		t.row("  column", "field id", "type", "codec", "values", "nulls", "compressed", "min", "max")
		for _, c := range rg.Columns {
			id := "-"
			if c.FieldID != nil {
				id = fmt.Sprint(*c.FieldID)
			}
			nulls, lo, hi := "-", "-", "-"
			if st := c.Statistics; st != nil {
				nulls = optInt64(st.NullCount)
				if st.Min != nil {
					lo = fmt.Sprint(st.Min)
				}
				if st.Max != nil {
					hi = fmt.Sprint(st.Max)
				}
			}
			t.row("  "+c.Path, id, c.PhysicalType, c.Codec, c.NumValues, nulls, bytesize.Format(c.CompressedSize), lo, hi)
		}
		if err := t.flush(); err != nil {
			return err
		}
	}

	if len(v.KeyValueMetadata) > 0 {
		fmt.Fprintln(w, "\nkey/value metadata")
		t := newTable(w)
		for _, kv := range v.KeyValueMetadata {
			val := kv.Value
			// Arrow's serialized schema and similar blobs are long and not
			// meant for people; their length says enough.
			if len(val) > 200 {
				val = fmt.Sprintf("(%d bytes)", len(val))
			}
			t.row("  "+kv.Key, val)
		}
		return t.flush()
	}
	return nil
}
