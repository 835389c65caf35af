package dvmerge

import (
	"fmt"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/puffin"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/deletefiles"
)

// benchTable builds a v3 table (upgraded from v2) of parts partitions,
// each with filesPer data files (manifest entries only: a merge never
// reads data files) and delsPer partition-scoped position-delete files,
// each deleting 5 positions in each of 10 of the partition's files.
func benchTable(b *testing.B, parts, filesPer, delsPer int) (*env, []manifest.DataFile) {
	t := &testing.T{}
	e := newEnv(t, true)
	tbl := e.load(t)
	loc := table.DataLocation(tbl.Metadata)
	var data, dels []manifest.DataFile
	for p := range parts {
		cat := fmt.Sprintf("c%03d", p)
		var files []manifest.DataFile
		for i := range filesPer {
			files = append(files, manifest.DataFile{Content: manifest.ContentData, FilePath: fmt.Sprintf("%s/cat=%s/f%05d.parquet", loc, cat, i),
				FileFormat: "PARQUET", Partition: []any{cat}, RecordCount: 1000, FileSizeInBytes: 1 << 20})
		}
		data = append(data, files...)
		for d := range delsPer {
			m := map[string][]int64{}
			for k := range 10 {
				f := files[(d*10+k)%filesPer]
				m[f.FilePath] = append(m[f.FilePath], int64(d), int64(d+100), int64(d+200), int64(d+300), int64(d+400))
			}
			df, err := deletefiles.WritePositionDeletes(e.ctx, tbl.IO, fmt.Sprintf("%s/cat=%s/pos%04d.parquet", loc, cat, d), []any{cat}, m, false)
			if err != nil {
				b.Fatal(err)
			}
			dels = append(dels, df)
		}
	}
	e.appendFiles(t, data...)
	e.addDeletes(t, dels...)
	e.upgrade(t)
	if t.Failed() {
		b.Fatal("building the benchmark table failed")
	}
	return e, dels
}

// BenchmarkMerge merges 2,000 position-delete files over 20,000 data
// files (100 partitions); "bare" is the work it cannot avoid: reading the
// same delete files and serializing the same bitmaps as DV blobs.
// scripts/bench does not run it yet; run it with
// go test ./dvmerge -run XXX -bench Merge -benchtime 1x.
func BenchmarkMerge(b *testing.B) {
	b.Run("merge", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			e, _ := benchTable(b, 100, 200, 20)
			b.StartTimer()
			rep, err := e.merge(&testing.T{}, e.options())
			if err != nil || rep.PositionDeleteFilesRetired != 2000 {
				b.Fatalf("merge: %v, %+v", err, rep)
			}
		}
	})
	b.Run("bare", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			e, dels := benchTable(b, 100, 200, 20)
			tbl := e.load(&testing.T{})
			b.StartTimer()
			byFile := map[string]*roaring64.Bitmap{}
			for i := range dels {
				bms, err := table.ReadPositionDeletes(e.ctx, tbl.IO, &dels[i], nil)
				if err != nil {
					b.Fatal(err)
				}
				for p, bm := range bms {
					if byFile[p] == nil {
						byFile[p] = roaring64.New()
					}
					byFile[p].Or(bm)
				}
			}
			for _, bm := range byFile {
				if _, err := puffin.EncodeDV(bm); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
