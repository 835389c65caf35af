package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/icectl/icectl/interop/icebergread"
)

// parse parses flags that may come before or after the positional
// arguments, and returns the positional ones.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func oneFile(fs *flag.FlagSet, args []string) (string, error) {
	pos, err := parse(fs, args)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		return "", fmt.Errorf("want exactly one FILE, got %d arguments", len(pos))
	}
	return pos[0], nil
}

func manifestListCmd(_ context.Context, args []string) (any, error) {
	file, err := oneFile(flag.NewFlagSet("manifest-list", flag.ContinueOnError), args)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return icebergread.ReadManifestList(data)
}

func manifestCmd(_ context.Context, args []string) (any, error) {
	fs := flag.NewFlagSet("manifest", flag.ContinueOnError)
	list := fs.String("manifest-list", "", "manifest list whose entry for this manifest supplies inherited values")
	path := fs.String("path", "", "the manifest's path as listed in the manifest list (default: matched by file name)")
	file, err := oneFile(fs, args)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if *list == "" {
		p := *path
		if p == "" {
			p = file
		}
		return icebergread.ReadManifest(data, p, nil)
	}
	ldata, err := os.ReadFile(*list)
	if err != nil {
		return nil, err
	}
	ml, err := icebergread.ReadManifestList(ldata)
	if err != nil {
		return nil, err
	}
	for i := range ml.Manifests {
		mf := &ml.Manifests[i]
		if mf.Path == *path || (*path == "" && filepath.Base(mf.Path) == filepath.Base(file)) {
			return icebergread.ReadManifest(data, mf.Path, mf)
		}
	}
	return nil, fmt.Errorf("manifest list %s has no entry for %s", *list, file)
}

func dvCmd(_ context.Context, args []string) (any, error) {
	fs := flag.NewFlagSet("dv", flag.ContinueOnError)
	offset := fs.Int64("offset", -1, "content_offset of the DV blob")
	length := fs.Int64("length", -1, "content_size_in_bytes of the DV blob")
	ref := fs.String("referenced-data-file", "", "referenced_data_file (default: the blob's property)")
	count := fs.Int64("record-count", -1, "record_count of the delete entry (default: the blob's cardinality property)")
	file, err := oneFile(fs, args)
	if err != nil {
		return nil, err
	}
	if *offset < 0 || *length < 0 {
		return nil, errors.New("--offset and --length are required")
	}
	return icebergread.ReadDV(icebergread.DVRequest{
		Path: file, Offset: *offset, Length: *length, ReferencedDataFile: *ref, RecordCount: *count,
	})
}

func puffinCmd(_ context.Context, args []string) (any, error) {
	file, err := oneFile(flag.NewFlagSet("puffin", flag.ContinueOnError), args)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return icebergread.ReadPuffin(data)
}

type propFlag map[string]string

func (p propFlag) String() string { return fmt.Sprint(map[string]string(p)) }
func (p propFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("--prop %q: want k=v", s)
	}
	p[k] = v
	return nil
}

func scanCmd(ctx context.Context, args []string) (any, error) {
	fs := flag.NewFlagSet("scan", flag.ContinueOnError)
	req := icebergread.ScanRequest{Props: map[string]string{}}
	fs.StringVar(&req.CatalogURI, "catalog-uri", "", "SQL catalog: sqlite:////abs/path.db, sqlite:PATH, file:PATH or postgres://...")
	fs.StringVar(&req.RESTURI, "rest-uri", "", "REST catalog URI")
	fs.StringVar(&req.Warehouse, "warehouse", "", "REST catalog warehouse")
	fs.StringVar(&req.CatalogName, "catalog-name", "", "catalog name")
	fs.StringVar(&req.Table, "table", "", "ns.tbl")
	snapshot := fs.Int64("snapshot", 0, "snapshot id (default: current)")
	fs.BoolVar(&req.Lineage, "lineage", false, "add _row_id and _last_updated_sequence_number")
	fs.Var(propFlag(req.Props), "prop", "catalog or FileIO property k=v (repeatable)")
	pos, err := parse(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) != 0 {
		return nil, fmt.Errorf("unexpected arguments %q", pos)
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "snapshot" {
			req.SnapshotID = snapshot
		}
	})
	switch {
	case req.Table == "":
		return nil, errors.New("--table is required")
	case req.CatalogName == "":
		return nil, errors.New("--catalog-name is required")
	case (req.CatalogURI == "") == (req.RESTURI == ""):
		return nil, errors.New("give exactly one of --catalog-uri and --rest-uri")
	}
	return icebergread.Scan(ctx, req)
}

func writeFixtureCmd(ctx context.Context, args []string) (any, error) {
	fs := flag.NewFlagSet("write-fixture", flag.ContinueOnError)
	req := icebergread.FixtureRequest{Props: map[string]string{}}
	fs.StringVar(&req.CatalogURI, "catalog-uri", "", "SQL catalog: sqlite:////abs/path.db, sqlite:PATH, file:PATH or postgres://...")
	fs.StringVar(&req.RESTURI, "rest-uri", "", "REST catalog URI")
	fs.StringVar(&req.Warehouse, "warehouse", "", "warehouse: REST warehouse, or the SQL catalog's table root (file:///dir)")
	fs.StringVar(&req.CatalogName, "catalog-name", "", "catalog name")
	fs.StringVar(&req.Table, "table", "", "ns.tbl (created; must not exist)")
	fs.IntVar(&req.FormatVersion, "format-version", 2, "table format version, 2 or 3")
	fs.IntVar(&req.Rows, "rows", 100, "rows to append, in a few commits")
	fs.IntVar(&req.DeleteEvery, "delete-every", 0, "delete every K-th row (ids divisible by K) with merge-on-read; 0 deletes nothing")
	fs.BoolVar(&req.Partitioned, "partitioned", false, "partition by day(ts)")
	fs.IntVar(&req.Evolve, "evolve", 0, "then add column dt (date), partition by bucket(4, id) alone, and append N more rows (before the deletes)")
	fs.StringVar(&req.Location, "location", "", "table location (default: the catalog's, under the warehouse)")
	fs.Var(propFlag(req.Props), "prop", "catalog or FileIO property k=v (repeatable)")
	pos, err := parse(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) != 0 {
		return nil, fmt.Errorf("unexpected arguments %q", pos)
	}
	switch {
	case req.Table == "":
		return nil, errors.New("--table is required")
	case req.CatalogName == "":
		return nil, errors.New("--catalog-name is required")
	case (req.CatalogURI == "") == (req.RESTURI == ""):
		return nil, errors.New("give exactly one of --catalog-uri and --rest-uri")
	}
	return icebergread.WriteFixture(ctx, req)
}

type idsFlag []int64

func (p *idsFlag) String() string { return fmt.Sprint([]int64(*p)) }
func (p *idsFlag) Set(s string) error {
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return fmt.Errorf("--delete-ids %q: %w", s, err)
		}
		*p = append(*p, n)
	}
	return nil
}

func appendDeleteCmd(ctx context.Context, args []string) (any, error) {
	fs := flag.NewFlagSet("append-delete", flag.ContinueOnError)
	req := icebergread.AppendDeleteRequest{Target: icebergread.ScanRequest{Props: map[string]string{}}}
	fs.StringVar(&req.Target.CatalogURI, "catalog-uri", "", "SQL catalog: sqlite:PATH, file:PATH or postgres://...")
	fs.StringVar(&req.Target.RESTURI, "rest-uri", "", "REST catalog URI")
	fs.StringVar(&req.Target.Warehouse, "warehouse", "", "warehouse")
	fs.StringVar(&req.Target.CatalogName, "catalog-name", "", "catalog name")
	fs.StringVar(&req.Target.Table, "table", "", "ns.tbl (must exist)")
	fs.Int64Var(&req.From, "from", 0, "first fixture row to append")
	fs.Int64Var(&req.To, "to", 0, "append rows up to this one, exclusive")
	fs.Var((*idsFlag)(&req.DeleteIDs), "delete-ids", "ids to delete, comma-separated")
	fs.BoolVar(&req.Target.Lineage, "lineage", false, "scan with _row_id and _last_updated_sequence_number")
	fs.Var(propFlag(req.Target.Props), "prop", "catalog or FileIO property k=v (repeatable)")
	pos, err := parse(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) != 0 {
		return nil, fmt.Errorf("unexpected arguments %q", pos)
	}
	switch {
	case req.Target.Table == "":
		return nil, errors.New("--table is required")
	case req.Target.CatalogName == "":
		return nil, errors.New("--catalog-name is required")
	case (req.Target.CatalogURI == "") == (req.Target.RESTURI == ""):
		return nil, errors.New("give exactly one of --catalog-uri and --rest-uri")
	}
	return icebergread.AppendDelete(ctx, req)
}
