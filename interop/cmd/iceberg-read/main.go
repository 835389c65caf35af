// Command iceberg-read reads Iceberg files and tables with iceberg-go, an
// implementation independent of icectl, and prints what it read as one JSON
// document on stdout. icectl's tests exec it to check that everything icectl
// writes reads the same elsewhere. Errors go to stderr with exit status 1.
//
//	iceberg-read manifest-list FILE
//	iceberg-read manifest FILE [--manifest-list LIST] [--path P]
//	iceberg-read dv FILE --offset N --length M [--referenced-data-file P] [--record-count C]
//	iceberg-read puffin FILE
//	iceberg-read scan (--catalog-uri URI | --rest-uri URI [--warehouse W]) --catalog-name NAME
//	                  --table ns.tbl [--snapshot ID] [--lineage] [--prop k=v]...
//	iceberg-read write-fixture (--catalog-uri URI | --rest-uri URI) [--warehouse W] --catalog-name NAME
//	                  --table ns.tbl [--format-version 2|3] [--rows N] [--delete-every K]
//	                  [--partitioned] [--evolve N] [--location URI] [--prop k=v]...
//	iceberg-read append-delete (--catalog-uri URI | --rest-uri URI) [--warehouse W] --catalog-name NAME
//	                  --table ns.tbl [--from N --to M] [--delete-ids I,J,...] [--lineage] [--prop k=v]...
//
//	iceberg-read serve
//
// serve answers many commands in one long-lived process: each line of
// stdin is a JSON request {"id": N, "args": ["scan", ...]}, answered by a
// line {"id": N, "stdout": "...", "error": "..."} on stdout holding exactly
// what the one-shot command would print (stdout, or its error message).
// It ends when stdin ends.
//
// write-fixture and append-delete are the subcommands that write.
// write-fixture creates a table with
// iceberg-go (id long, name string, amount double, ts timestamptz), appends
// rows in a few commits, deletes every K-th row with merge-on-read, and
// prints iceberg-go's scan of the result in scan's encoding. With
// --evolve N it first evolves the table with iceberg-go's schema and spec
// updates (a date column dt; a spec of bucket(4, id) alone) and appends
// N more rows in the new schema and spec, so that deletes span both. append-delete
// loads an existing table, appends fixture rows N..M-1 in one commit,
// deletes the given ids with iceberg-go's Delete, and prints the scan.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

const usage = `usage:
  iceberg-read manifest-list FILE
  iceberg-read manifest FILE [--manifest-list LIST] [--path P]
  iceberg-read dv FILE --offset N --length M [--referenced-data-file P] [--record-count C]
  iceberg-read puffin FILE
  iceberg-read scan (--catalog-uri URI | --rest-uri URI [--warehouse W]) --catalog-name NAME --table ns.tbl [--snapshot ID] [--lineage] [--prop k=v]...
  iceberg-read write-fixture (--catalog-uri URI | --rest-uri URI) [--warehouse W] --catalog-name NAME --table ns.tbl [--format-version 2|3] [--rows N] [--delete-every K] [--partitioned] [--evolve N] [--prop k=v]...
  iceberg-read append-delete (--catalog-uri URI | --rest-uri URI) [--warehouse W] --catalog-name NAME --table ns.tbl [--from N --to M] [--delete-ids I,J,...] [--lineage] [--prop k=v]...
  iceberg-read serve`

func main() {
	ctx := context.Background()
	var err error
	if len(os.Args) == 2 && os.Args[1] == "serve" {
		err = serve(ctx, os.Stdin, os.Stdout)
	} else {
		err = run(ctx, os.Args[1:], os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "iceberg-read:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("no subcommand\n%s", usage)
	}
	cmds := map[string]func(context.Context, []string) (any, error){
		"manifest-list": manifestListCmd,
		"manifest":      manifestCmd,
		"dv":            dvCmd,
		"puffin":        puffinCmd,
		"scan":          scanCmd,
		"write-fixture": writeFixtureCmd,
		"append-delete": appendDeleteCmd,
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		return fmt.Errorf("unknown subcommand %q\n%s", args[0], usage)
	}
	doc, err := cmd(ctx, args[1:])
	if err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	w := bufio.NewWriter(stdout)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("%s: write output: %w", args[0], err)
	}
	return w.Flush()
}
