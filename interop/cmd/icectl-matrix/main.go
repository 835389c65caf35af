// Command icectl-matrix writes and checks the tables of the compaction
// shapes benchmark (scripts/bench.d/matrix) with iceberg-go, so that the
// tables are written by an implementation other than the one measured:
//
//	icectl-matrix gen --catalog-uri URI --catalog-name N --warehouse W --table ns.t
//	                  --shape flat|wide|nested|strings|numeric --appends A --rows R
//	                  [--partitioned] [--deletes] [--format-version 2|3]
//	icectl-matrix checksum --catalog-uri URI --catalog-name N --table ns.t
//	icectl-matrix bare --catalog-uri URI --catalog-name N --table ns.t --out FILE
//	icectl-matrix floor --catalog-uri URI --catalog-name N --table ns.t --out FILE
//	                    [--manifests-from LIST]
//
// checksum prints the rows and an order-independent checksum of
// iceberg-go's scan; bare times a plain arrow-go read and write of the
// table's data files; floor times the least work a compaction of them can
// do without decoding values (every page decompressed and compressed
// again, the manifests named one a line in LIST written again; see
// icebergread.Floor). Each prints one JSON document on stdout.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/icectl/icectl/interop/icebergread"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "icectl-matrix:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("want a subcommand: gen, checksum, bare or floor")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	var t icebergread.ScanRequest
	fs.StringVar(&t.CatalogURI, "catalog-uri", "", "SQL catalog URI")
	fs.StringVar(&t.CatalogName, "catalog-name", "", "catalog name")
	fs.StringVar(&t.Warehouse, "warehouse", "", "warehouse root (file:///dir)")
	fs.StringVar(&t.Table, "table", "", "ns.tbl")
	var g icebergread.ShapeRequest
	fs.StringVar(&g.Shape, "shape", "flat", "table shape")
	fs.IntVar(&g.Appends, "appends", 10, "appends (one manifest each)")
	fs.IntVar(&g.Rows, "rows", 10000, "rows per append")
	fs.BoolVar(&g.Partitioned, "partitioned", false, "identity-partition by part (8 values)")
	fs.BoolVar(&g.Deletes, "deletes", false, "two merge-on-read deletes of about 5% of rows each")
	fs.IntVar(&g.FormatVersion, "format-version", 2, "2 or 3")
	out := fs.String("out", "", "bare, floor: output file")
	manifestsFrom := fs.String("manifests-from", "", "floor: a file naming the manifests to write again, one a line")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if t.CatalogURI == "" || t.CatalogName == "" || t.Table == "" {
		return errors.New("--catalog-uri, --catalog-name and --table are required")
	}
	var doc any
	var err error
	switch args[0] {
	case "gen":
		g.Target = t
		err = icebergread.GenerateShape(ctx, g)
		doc = map[string]string{"table": t.Table}
	case "checksum":
		doc, err = icebergread.TableChecksum(ctx, t)
	case "bare":
		if *out == "" {
			return errors.New("bare: --out is required")
		}
		doc, err = icebergread.BareRewrite(ctx, t, *out)
	case "floor":
		if *out == "" {
			return errors.New("floor: --out is required")
		}
		var manifests []string
		if *manifestsFrom != "" {
			b, rerr := os.ReadFile(*manifestsFrom)
			if rerr != nil {
				return fmt.Errorf("floor: %w", rerr)
			}
			manifests = strings.Fields(string(b))
		}
		doc, err = icebergread.Floor(ctx, t, *out, manifests)
	default:
		return fmt.Errorf("unknown subcommand %q: want gen, checksum, bare or floor", args[0])
	}
	if err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	return json.NewEncoder(os.Stdout).Encode(doc)
}
