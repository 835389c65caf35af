package upgrade

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// TestMain doubles as the table generator of scripts/bench.d/upgrade:
// with ICECTL_BENCH_MKTABLE=DIR it writes the benchmark table and exits
// instead of running tests.
func TestMain(m *testing.M) {
	if dir := os.Getenv("ICECTL_BENCH_MKTABLE"); dir != "" {
		if err := makeBenchTable(context.Background(), dir, os.Getenv("ICECTL_BENCH_TABLE"),
			envInt("ICECTL_BENCH_FILES", 100000), envInt("ICECTL_BENCH_MANIFESTS", 2000)); err != nil {
			fmt.Fprintln(os.Stderr, "make bench table:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(testenv.Finish(m.Run()))
}

func envInt(key string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(key)); err == nil && n > 0 {
		return n
	}
	return def
}

// makeBenchTable creates ns.NAME, format v2, in the SQLite catalog "bench"
// at DIR/catalog.db: one snapshot listing files data files (never written:
// upgrade and rewrite-manifests read manifests only) spread over
// manifests manifests of one partition spec (identity on a day-like int
// column, 100 partitions), so the table has the shape of one that many
// fast appends left.
func makeBenchTable(ctx context.Context, dir, name string, files, manifests int) error {
	if name == "" {
		name = "t"
	}
	wh := "file://" + filepath.Join(dir, "wh")
	cat, err := sqlcat.Create(ctx, catalog.Config{Name: "bench", URI: "sqlite:///" + filepath.Join(dir, "catalog.db"), Warehouse: wh})
	if err != nil {
		cat, err = sqlcat.Open(ctx, catalog.Config{Name: "bench", URI: "sqlite:///" + filepath.Join(dir, "catalog.db"), Warehouse: wh})
		if err != nil {
			return err
		}
	}
	defer cat.Close()
	if err := cat.CreateNamespace(ctx, []string{"ns"}, nil); err != nil {
		if _, lerr := cat.ListTables(ctx, []string{"ns"}); lerr != nil {
			return err
		}
	}
	schema := spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "day", Type: spec.IntType{}, Required: true},
		{ID: 3, Name: "payload", Type: spec.StringType{}},
	}}
	ps := spec.PartitionSpec{Fields: []spec.PartitionField{{SourceID: 2, FieldID: 1000, Name: "day", Transform: spec.Transform{Kind: spec.TransformIdentity}}}}
	id := catalog.Ident{Namespace: []string{"ns"}, Name: name}
	loc := wh + "/ns/" + name
	md, err := spec.NewTableMetadata(schema, ps, spec.SortOrder{}, loc, nil, 2)
	if err != nil {
		return err
	}
	tbl, err := cat.CreateTable(ctx, id, md)
	if err != nil {
		return err
	}
	md = tbl.Metadata
	snapID := table.NewSnapshotID()
	per := (files + manifests - 1) / manifests
	var list []manifest.ManifestFile
	var records int64
	for m := 0; m*per < files; m++ {
		path := fmt.Sprintf("%s/metadata/bench-m%05d.avro", loc, m)
		var mw *manifest.Writer
		n, err := writeTo(ctx, tbl, path, func(w io.Writer) error {
			var err error
			if mw, err = manifest.NewWriter(w, manifest.WriterOptions{Version: 2, Content: manifest.ManifestContentData,
				Schema: md.CurrentSchema(), Spec: *md.DefaultSpec(), SnapshotID: snapID}); err != nil {
				return err
			}
			for f := m * per; f < min(files, (m+1)*per); f++ {
				day := int32(f % 100)
				df := manifest.DataFile{Content: manifest.ContentData, FilePath: fmt.Sprintf("%s/data/day=%d/f%07d.parquet", loc, day, f),
					FileFormat: "PARQUET", Partition: []any{day}, RecordCount: 1000, FileSizeInBytes: 1 << 20, SpecID: int32(md.DefaultSpecID)}
				records += df.RecordCount
				if err := mw.Add(manifest.Entry{Status: manifest.StatusAdded, DataFile: df}); err != nil {
					return err
				}
			}
			return mw.Close()
		})
		if err != nil {
			return err
		}
		list = append(list, mw.ManifestFile(path, n))
	}
	listPath := fmt.Sprintf("%s/metadata/snap-%d-1-bench.avro", loc, snapID)
	if _, err := writeTo(ctx, tbl, listPath, func(w io.Writer) error {
		lw, err := manifest.NewListWriter(w, 2, snapID, nil, 1, nil)
		if err != nil {
			return err
		}
		for _, mf := range list {
			if err := lw.Add(mf); err != nil {
				return err
			}
		}
		return lw.Close()
	}); err != nil {
		return err
	}
	snap := spec.Snapshot{SnapshotID: snapID, SequenceNumber: 1, TimestampMS: md.LastUpdatedMS + 1, ManifestList: listPath,
		Summary: map[string]string{"operation": spec.OperationAppend,
			"added-data-files": strconv.Itoa(files), "total-data-files": strconv.Itoa(files),
			"added-records": strconv.FormatInt(records, 10), "total-records": strconv.FormatInt(records, 10),
			"total-delete-files": "0", "total-position-deletes": "0", "total-equality-deletes": "0",
			"total-files-size": strconv.FormatInt(int64(files)<<20, 10)},
		SchemaID: &md.CurrentSchemaID}
	_, err = cat.CommitTable(ctx, tbl, nil, []spec.Update{spec.AddSnapshot{Snapshot: snap},
		spec.SetSnapshotRef{RefName: "main", Ref: spec.SnapshotRef{SnapshotID: snapID, Type: spec.RefTypeBranch}}})
	return err
}

// writeTo writes what fill writes to path and returns its length: the
// generator's files are small enough to build in memory.
func writeTo(ctx context.Context, tbl *catalog.Table, path string, fill func(io.Writer) error) (int64, error) {
	var buf bytes.Buffer
	if err := fill(&buf); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	if err := fileio.WriteFile(ctx, tbl.IO, path, buf.Bytes()); err != nil {
		return 0, err
	}
	return int64(buf.Len()), nil
}
