package compact_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/compact"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/plan"
)

// Benchmark knobs (scripts/bench sets them; the defaults are the issue's
// table: 400 files x 20k rows, 5 columns, zstd).
const (
	benchFilesEnv   = "ICECTL_BENCH_FILES"
	benchRowsEnv    = "ICECTL_BENCH_ROWS"
	benchDirEnv     = "ICECTL_BENCH_DIR"     // reuse (or build once) the tables here
	benchMkTableEnv = "ICECTL_BENCH_MKTABLE" // TestMain: build DIR's tables and exit
	benchCloneEnv   = "ICECTL_BENCH_CLONE"   // TestMain: DIR:SRC:DST registers a copy of ns.SRC as ns.DST
	benchPlanEnv    = "ICECTL_BENCH_PLAN_FILES"
)

// benchMain handles the TestMain hooks scripts/bench uses to build and
// copy benchmark tables; it reports whether it ran one.
func benchMain() (bool, error) {
	ctx := context.Background()
	if dir := os.Getenv(benchMkTableEnv); dir != "" {
		files, rows := envInt(benchFilesEnv, 400), envInt(benchRowsEnv, 20000)
		if _, err := benchTables(ctx, dir, files, rows); err != nil {
			return true, err
		}
		if n := envInt(benchPlanEnv, 0); n > 0 {
			if err := buildPlanTable(ctx, dir, n, 200); err != nil {
				return true, err
			}
		}
		return true, nil
	}
	if v := os.Getenv(benchCloneEnv); v != "" {
		parts := strings.Split(v, ":")
		if len(parts) != 3 {
			return true, fmt.Errorf("%s=%q: want DIR:SRC:DST", benchCloneEnv, v)
		}
		fx, err := openBench(ctx, parts[0])
		if err != nil {
			return true, err
		}
		defer fx.cat.Close()
		_, err = cloneTable(ctx, fx, parts[1], parts[2])
		return true, err
	}
	return false, nil
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// benchTB lets the fixture builder run outside a test.
type benchTB struct {
	testing.TB
	cleanups []func()
}

func (b *benchTB) Helper()          {}
func (b *benchTB) Cleanup(f func()) { b.cleanups = append(b.cleanups, f) }
func (b *benchTB) Fatal(args ...any) {
	panic(fmt.Sprint(args...))
}
func (b *benchTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (b *benchTB) TempDir() string                   { panic("benchTB has no temp dir") }

// benchTables builds, in dir (once: an existing catalog is reused), ns.clean
// with files data files of rows rows in one partition, and ns.deleted, the
// same rows with every tenth position deleted by partition-scoped position
// deletes (10% of rows).
func benchTables(ctx context.Context, dir string, files, rows int) (*fixture, error) {
	if _, err := os.Stat(filepath.Join(dir, "catalog.db")); err == nil {
		return openBench(ctx, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var f *fixture
	err := catchFatal(func(tb testing.TB) {
		f = newFixtureIn(tb, dir, 2, 1, map[string]string{"write.target-file-size-bytes": strconv.Itoa(1 << 30)})
	})
	if err != nil {
		return nil, err
	}
	part := f.partitions(1)
	for done := 0; done < files; done += 50 {
		if err := f.appendFiles(part, min(50, files-done), rows); err != nil {
			return nil, err
		}
	}
	if _, err := cloneTable(ctx, f, fxTable, "clean"); err != nil {
		return nil, err
	}
	// 10% of the rows deleted: every tenth position, one delete file per
	// 40 data files.
	fs, err := table.LiveFiles(ctx, f.tbl.IO, f.tbl.Metadata.CurrentSnapshot())
	if err != nil {
		return nil, err
	}
	var add []manifest.DataFile
	for i := 0; i < len(fs.Data); i += 40 {
		del := map[string][]int64{}
		for _, e := range fs.Data[i:min(i+40, len(fs.Data))] {
			for p := int64(0); p < e.Entry.DataFile.RecordCount; p += 10 {
				del[e.Entry.DataFile.FilePath] = append(del[e.Entry.DataFile.FilePath], p)
			}
		}
		df, err := f.writePosDeletes(fs.Data[i], del)
		if err != nil {
			return nil, err
		}
		add = append(add, df)
	}
	if err := f.commit(table.Change{Operation: spec.OperationDelete, AddDeletes: add}); err != nil {
		return nil, err
	}
	if _, err := cloneTable(ctx, f, fxTable, "deleted"); err != nil {
		return nil, err
	}
	return f, f.cat.DropTable(ctx, f.ident)
}

func catchFatal(fn func(tb testing.TB)) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	fn(&benchTB{})
	return nil
}

func openBench(ctx context.Context, dir string) (*fixture, error) {
	var f *fixture
	err := catchFatal(func(tb testing.TB) {
		f = &fixture{tb: tb, ctx: ctx, dir: dir, uri: "sqlite:///" + filepath.Join(dir, "catalog.db")}
	})
	if err != nil {
		return nil, err
	}
	cat, err := openCatalog(ctx, f.uri, dir)
	if err != nil {
		return nil, err
	}
	f.cat = cat
	return f, nil
}

// cloneTable registers the current metadata of ns.src as a new table
// ns.dst: same files, its own history from here on. Compacting the clone
// leaves the source as it was.
func cloneTable(ctx context.Context, f *fixture, src, dst string) (*catalog.Table, error) {
	t, err := f.cat.LoadTable(ctx, catalog.Ident{Namespace: []string{fxNS}, Name: src})
	if err != nil {
		return nil, err
	}
	md := *t.Metadata
	return f.cat.CreateTable(ctx, catalog.Ident{Namespace: []string{fxNS}, Name: dst}, &md)
}

// benchCompaction is one measured compaction of a fresh clone of src into
// one output file.
func benchCompaction(b *testing.B, f *fixture, src string, n int) (time.Duration, int64) {
	b.Helper()
	t, err := cloneTable(f.ctx, f, src, fmt.Sprintf("%s_run%d_%d", src, n, time.Now().UnixNano()))
	if err != nil {
		b.Fatal(err)
	}
	opts := compact.Options{Plan: plan.Options{RewriteAll: true, TargetFileSize: 4 << 30}}
	start := time.Now()
	p, err := compact.PlanTable(f.ctx, t, opts)
	if err != nil {
		b.Fatal(err)
	}
	rep, err := compact.Execute(f.ctx, f.cat, t, p, opts)
	if err != nil {
		b.Fatal(err)
	}
	d := time.Since(start)
	if rep.FilesOut != 1 {
		b.Logf("compaction wrote %d files", rep.FilesOut)
	}
	var rows int64
	for _, g := range p.Groups {
		rows += g.InputRecords
	}
	return d, rows
}

// arrowBaseline reads the data files of src with arrow-go (two decoders)
// and writes them, less the rows deleted (every tenth when deleted), with
// one buffered zstd writer: the bare cost of the same rewrite.
func arrowBaseline(b *testing.B, f *fixture, src string, deleted bool) time.Duration {
	b.Helper()
	t, err := f.cat.LoadTable(f.ctx, catalog.Ident{Namespace: []string{fxNS}, Name: src})
	if err != nil {
		b.Fatal(err)
	}
	fs, err := table.LiveFiles(f.ctx, t.IO, t.Metadata.CurrentSnapshot())
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	out, err := os.Create(filepath.Join(f.dir, "baseline.parquet"))
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(out.Name())
	defer out.Close()
	recs := make(chan arrow.RecordBatch, 4)
	paths := make(chan string)
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range paths {
				if err := readAll(f.ctx, localPath(p), deleted, recs); err != nil {
					errs <- err
				}
			}
		}()
	}
	go func() {
		for _, e := range fs.Data {
			paths <- e.Entry.DataFile.FilePath
		}
		close(paths)
		wg.Wait()
		close(recs)
	}()
	var w *pqarrow.FileWriter
	for rec := range recs {
		if w == nil {
			props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithMaxRowGroupLength(1<<20))
			if w, err = pqarrow.NewFileWriter(rec.Schema(), out, props, pqarrow.DefaultWriterProps()); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.WriteBuffered(rec); err != nil {
			b.Fatal(err)
		}
		rec.Release()
	}
	if w != nil {
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	return time.Since(start)
}

func readAll(ctx context.Context, path string, deleted bool, recs chan<- arrow.RecordBatch) error {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	var pos int64
	for rr.Next() {
		rec := rr.RecordBatch()
		n := rec.NumRows()
		if !deleted {
			rec.Retain()
			recs <- rec
		} else {
			// Drop every tenth position with arrow's filter kernel.
			mb := array.NewBooleanBuilder(memory.DefaultAllocator)
			for i := range n {
				mb.Append((pos+i)%10 != 0)
			}
			mask := mb.NewBooleanArray()
			mb.Release()
			out, err := compute.FilterRecordBatch(ctx, rec, mask, compute.DefaultFilterOptions())
			mask.Release()
			if err != nil {
				return err
			}
			recs <- out
		}
		pos += n
	}
	if err := rr.Err(); err != nil && err != io.EOF {
		return err
	}
	return nil
}

// BenchmarkCompact compacts the benchmark table (by default 400 files x
// 20k rows into one file) with compact.Execute, delete-free and with 10% of
// rows position-deleted, and measures a bare arrow-go read + buffered zstd
// write of the same files in the same run. Metrics: rows/s of each, and
// their ratio (target >= 0.9).
func BenchmarkCompact(b *testing.B) {
	dir := os.Getenv(benchDirEnv)
	if dir == "" {
		dir = b.TempDir()
	}
	files, rows := envInt(benchFilesEnv, 400), envInt(benchRowsEnv, 20000)
	f, err := benchTables(context.Background(), dir, files, rows)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.cat.Close() })
	for _, src := range []string{"clean", "deleted"} {
		b.Run(src, func(b *testing.B) {
			var compactTime, baseTime time.Duration
			var inRows int64
			for i := 0; b.Loop(); i++ {
				d, n := benchCompaction(b, f, src, i)
				compactTime += d
				inRows += n
				b.StopTimer()
				baseTime += arrowBaseline(b, f, src, src == "deleted")
				b.StartTimer()
			}
			b.ReportMetric(float64(inRows)/compactTime.Seconds(), "rows/s")
			b.ReportMetric(float64(inRows)/baseTime.Seconds(), "arrow-rows/s")
			b.ReportMetric(baseTime.Seconds()/compactTime.Seconds(), "ratio")
		})
	}
}

// buildPlanTable commits a table ns.plan of files data files (which do not
// exist: planning reads only manifests) in manifests manifests, 100
// partitions.
func buildPlanTable(ctx context.Context, dir string, files, manifests int) error {
	f, err := openBench(ctx, dir)
	if err != nil {
		return err
	}
	defer f.cat.Close()
	// A kept table (ICECTL_BENCH_DIR) is reused, as benchTables reuses its.
	if _, err := f.cat.LoadTable(ctx, catalog.Ident{Namespace: []string{fxNS}, Name: "plan"}); err == nil {
		return nil
	} else if !errors.Is(err, catalog.ErrNoSuchTable) {
		return err
	}
	md, err := spec.NewTableMetadata(fxSchema(), fxSpecCat(), spec.SortOrder{OrderID: 0},
		"file://"+filepath.Join(dir, "wh", fxNS, "plan"), nil, 2)
	if err != nil {
		return err
	}
	t, err := f.cat.CreateTable(ctx, catalog.Ident{Namespace: []string{fxNS}, Name: "plan"}, md)
	if err != nil {
		return err
	}
	f.tbl = t
	per := files / manifests
	n := 0
	for m := range manifests {
		add := make([]manifest.DataFile, per)
		for i := range add {
			n++
			add[i] = manifest.DataFile{Content: manifest.ContentData, FileFormat: "PARQUET",
				FilePath:  fmt.Sprintf("%s/m%03d/f%06d.parquet", table.DataLocation(t.Metadata), m, n),
				Partition: []any{fmt.Sprintf("c%03d", n%100)}, RecordCount: 100, FileSizeInBytes: 4096 + int64(n%512)}
		}
		if err := f.commit(table.Change{Operation: spec.OperationAppend, AddData: add}); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkPlan plans a table of ICECTL_BENCH_PLAN_FILES (default 100,000)
// small files in 200 manifests: "plan" with compact.PlanTable (the whole
// plan, as Execute gets it), "dry-run-text" and "dry-run-json" with
// compact.PlanTableResult and the output `icectl compact --dry-run` writes.
func BenchmarkPlan(b *testing.B) {
	dir := os.Getenv(benchDirEnv)
	if dir == "" {
		dir = b.TempDir()
	}
	ctx := context.Background()
	files := envInt(benchPlanEnv, 100000)
	f, err := openBench(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.cat.Close() })
	id := catalog.Ident{Namespace: []string{fxNS}, Name: "plan"}
	if _, err := f.cat.LoadTable(ctx, id); err != nil {
		if err := buildPlanTable(ctx, dir, files, 200); err != nil {
			b.Fatal(err)
		}
	}
	t, err := f.cat.LoadTable(ctx, id)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("plan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, err := compact.PlanTable(ctx, t, compact.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if p.Totals.LiveDataFiles == 0 {
				b.Fatal("planned an empty table")
			}
		}
	})
	for _, out := range []string{"text", "json"} {
		b.Run("dry-run-"+out, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := compact.PlanTableResult(ctx, t, compact.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if out == "text" {
					err = res.WriteText(io.Discard)
				} else {
					err = res.WriteJSON(io.Discard)
				}
				if cerr := res.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
