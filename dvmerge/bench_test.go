package dvmerge

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/puffin"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/deletefiles"
)

// benchTable builds a v3 table (upgraded from v2) of parts partitions,
// each with filesPer data files (manifest entries only: a merge never
// reads data files) and delsPer partition-scoped position-delete files,
// each deleting 5 positions in each of filesPer/delsPer of the
// partition's files (10 with the defaults), so that every data file has
// deletes to merge.
func benchTable(b *testing.B, parts, filesPer, delsPer int) (*env, []manifest.DataFile) {
	t := &testing.T{}
	e := newEnv(t, true)
	tbl := e.Load(t)
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
			per := max(1, filesPer/delsPer)
			for k := range per {
				f := files[(d*per+k)%filesPer]
				m[f.FilePath] = append(m[f.FilePath], int64(d), int64(d+100), int64(d+200), int64(d+300), int64(d+400))
			}
			df, err := deletefiles.WritePositionDeletes(e.Ctx, tbl.IO, fmt.Sprintf("%s/cat=%s/pos%04d.parquet", loc, cat, d), []any{cat}, m, false)
			if err != nil {
				b.Fatal(err)
			}
			dels = append(dels, df)
		}
	}
	e.Append(t, nil, data...)
	e.AddDeletes(t, nil, dels...)
	e.upgrade(t)
	if t.Failed() {
		b.Fatal("building the benchmark table failed")
	}
	return e, dels
}

// benchPartitions is the number of partitions of the benchmark table,
// each of benchFiles data files and 20 position-delete files:
// ICECTL_BENCH_DV_PARTITIONS, default 100 (20,000 data files); 500 is the
// issue's 100,000 data files and 10,000 delete files.
func benchPartitions(b *testing.B) int { return benchCount(b, "ICECTL_BENCH_DV_PARTITIONS", 100) }

// benchFiles is the number of data files per partition,
// ICECTL_BENCH_DV_FILES (default 200): more of them with the same
// partitions grows the data files and not the delete files.
func benchFiles(b *testing.B) int { return benchCount(b, "ICECTL_BENCH_DV_FILES", 200) }

func benchCount(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive count", name, v)
	}
	return n
}

// resetPeakRSS makes the kernel's peak RSS of this process (VmHWM) start
// again from the current RSS, after returning the garbage of building the
// table to the OS, so that peakRSS measures the merge alone.
func resetPeakRSS(b *testing.B) {
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Logf("peak RSS not measured: %v", err)
	}
}

// peakRSS is VmHWM in MiB, or 0 where /proc does not give it.
func peakRSS() float64 { return procStatus("VmHWM:") }

// rss is VmRSS in MiB: after resetPeakRSS, what the process holds before
// the measured work starts (the table built, the runtime), so that the
// peak less it is the work's own memory.
func rss() float64 { return procStatus("VmRSS:") }

// procStatus reads a size in kB from /proc/self/status, in MiB.
func procStatus(field string) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return 0
			}
			return kb / 1024
		}
	}
	return 0
}

// memStats reads the collector's counters (stopping the world: outside
// the measured work's hot path, once before and once after).
func memStats() *runtime.MemStats {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return &m
}

// cpuSeconds is the user and system CPU time of this process so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkMerge merges 20 position-delete files over 200 data files in
// each of benchPartitions partitions; "bare" is the work it cannot avoid:
// reading the same delete files and serializing the same bitmaps as DV
// blobs, a partition at a time (the merge reads and writes a partition at
// a time too; what it keeps across partitions is what the ratio of peak
// RSS measures). Both report the peak RSS of the measured work (peak-RSS-MiB) and
// its CPU seconds (cpu-s/op: on a loaded machine the fairer figure, since
// wall time there is mostly waiting for a core).
// scripts/bench.d/dvmerge runs it at two table sizes and prints the ratio.
func BenchmarkMerge(b *testing.B) {
	parts, files := benchPartitions(b), benchFiles(b)
	b.Run("merge", func(b *testing.B) {
		var peak, base, cpu, gcs, alloc float64
		for range b.N {
			b.StopTimer()
			e, _ := benchTable(b, parts, files, 20)
			resetPeakRSS(b)
			b.StartTimer()
			base = max(base, rss())
			c0, m0 := cpuSeconds(), memStats()
			var rep *Report
			var err error
			// Labelled, with every goroutine it starts, so that a CPU
			// profile tells the merge apart from building the table
			// (go tool pprof -tagfocus work=merge).
			pprof.Do(e.Ctx, pprof.Labels("work", "merge"), func(context.Context) {
				rep, err = e.merge(&testing.T{}, e.options())
			})
			cpu += cpuSeconds() - c0
			gcs, alloc = gcs+float64(memStats().NumGC-m0.NumGC), alloc+float64(memStats().TotalAlloc-m0.TotalAlloc)/(1<<20)
			if err != nil || rep.PositionDeleteFilesRetired != parts*20 || rep.DVsWritten != parts*files {
				b.Fatalf("merge: %v, %+v", err, rep)
			}
			peak = max(peak, peakRSS())
		}
		b.ReportMetric(peak, "peak-RSS-MiB")
		b.ReportMetric(base, "start-RSS-MiB")
		b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
		b.ReportMetric(gcs/float64(b.N), "gc-cycles/op")
		b.ReportMetric(alloc/float64(b.N), "alloc-MiB/op")
	})
	b.Run("bare", func(b *testing.B) {
		var peak, base, cpu, gcs, alloc float64
		for range b.N {
			b.StopTimer()
			e, dels := benchTable(b, parts, files, 20)
			tbl := e.Load(&testing.T{})
			resetPeakRSS(b)
			b.StartTimer()
			base = max(base, rss())
			c0, m0 := cpuSeconds(), memStats()
			// A partition at a time, as the merge goes: a partition's
			// delete files are consecutive in dels.
			pprof.Do(e.Ctx, pprof.Labels("work", "bare"), func(context.Context) { bare(b, e, tbl, dels) })
			cpu += cpuSeconds() - c0
			gcs, alloc = gcs+float64(memStats().NumGC-m0.NumGC), alloc+float64(memStats().TotalAlloc-m0.TotalAlloc)/(1<<20)
			peak = max(peak, peakRSS())
		}
		b.ReportMetric(peak, "peak-RSS-MiB")
		b.ReportMetric(base, "start-RSS-MiB")
		b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
		b.ReportMetric(gcs/float64(b.N), "gc-cycles/op")
		b.ReportMetric(alloc/float64(b.N), "alloc-MiB/op")
	})
}

// bare reads the delete files dels of the benchmark table and serializes
// the union bitmap of each data file as a DV blob, a partition at a time.
func bare(b *testing.B, e *env, tbl *catalog.Table, dels []manifest.DataFile) {
	for len(dels) > 0 {
		n := 1
		for n < len(dels) && slices.Equal(dels[n].Partition, dels[0].Partition) {
			n++
		}
		byFile := map[string]*roaring64.Bitmap{}
		for i := range dels[:n] {
			bms, err := table.ReadPositionDeletes(e.Ctx, tbl.IO, &dels[i], nil)
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
		dels = dels[n:]
	}
}
