package dvmerge

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/internal/testing/fixture"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// TestMergeIcebergGoTable: a v2 table iceberg-go wrote (its deletes are
// partition-scoped position-delete files over several data files), with a
// file-scoped position-delete file added, upgraded to v3 and merged:
// iceberg-go reads the same rows and checksum, and only DVs remain.
func TestMergeIcebergGoTable(t *testing.T) {
	for _, partitioned := range []bool{false, true} {
		t.Run(map[bool]string{false: "unpartitioned", true: "by day"}[partitioned], func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			uri := "sqlite:///" + filepath.Join(dir, "catalog.db")
			args := []string{"write-fixture", "--catalog-uri", uri, "--warehouse", "file://" + dir, "--catalog-name", testCatalog,
				"--table", "ns.t", "--format-version", "2", "--rows", "300", "--delete-every", "7"}
			if partitioned {
				args = append(args, "--partitioned")
			}
			testenv.IcebergGo(ctx, t, args...)
			c := fixture.NewSQLite(t, fixture.InDir(dir), fixture.WithName(testCatalog), fixture.WithWarehouse("file://"+dir))
			e := envOf(c.Existing(catalog.Ident{Namespace: []string{"ns"}, Name: "t"}))
			fs := liveFiles(t, e)
			if countKind(fs, false, manifest.ContentPositionDeletes) == 0 {
				t.Fatal("iceberg-go wrote no position-delete file")
			}
			// A file-scoped position-delete file for the first data file.
			first := fs.Data[0].Entry.DataFile
			e.AddDeletes(t, nil, e.writePos(t, "scoped", first, map[string][]int64{first.FilePath: {first.RecordCount - 1}}, true))
			before := e.icebergGo(t)
			e.upgrade(t)
			rep := e.mustMerge(t, e.options())
			after := e.icebergGo(t)
			if after != before {
				t.Errorf("iceberg-go reads %+v after the merge, %+v before", after, before)
			}
			if got := e.Checksum(t, nil); got.RowCount != before.RowCount || got.Checksum != before.Checksum {
				t.Errorf("icectl reads %+v, iceberg-go read %+v", got, before)
			}
			checkMerged(t, e)
			if rep.PositionDeleteFilesRetired < 2 || rep.DVsWritten == 0 {
				t.Errorf("report = %+v", rep)
			}
		})
	}
}
