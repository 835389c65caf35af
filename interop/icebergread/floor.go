package icebergread

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// FloorResult is what the floor of a compaction cost: every page of the
// table's data files read, decompressed and compressed again, every delete
// file read, and the bytes of the given manifests written again.
type FloorResult struct {
	DataFiles     int     `json:"data_files"`
	DeleteFiles   int     `json:"delete_files"`
	InputBytes    int64   `json:"input_bytes"` // of the data files
	Pages         int64   `json:"pages"`
	PageBytes     int64   `json:"page_bytes"`       // decompressed bytes of the data files' pages
	WrittenBytes  int64   `json:"written_bytes"`    // recompressed pages plus manifests
	ManifestBytes int64   `json:"manifest_bytes"`   // of WrittenBytes
	Codec         string  `json:"codec"`            // what the pages were compressed with again
	Level         int     `json:"level"`            // and at which level (arrow-go's default: -1)
	CPUSeconds    float64 `json:"cpu_seconds"`      // user + system of the work alone
	Seconds       float64 `json:"seconds"`          // wall of the work alone
	PlanSeconds   float64 `json:"plan_cpu_seconds"` // user + system of loading and planning, not in CPUSeconds
}

// Floor measures the least work a compaction of req.Table (every live data
// file, local files only) can do without decoding values: each page of each
// data file is read and decompressed (arrow-go's page reader, the page
// header decoded with thrift) and compressed again with the codec and level
// the table's write.parquet.* properties name (as icectl's writer does:
// zstd and arrow-go's default level unless set), and the result written to
// out. Each delete file the data files carry is read once (its pages
// decompressed when it is Parquet). The bytes of the files named in
// manifests (the manifests and manifest list a compaction of the table
// wrote) are read and written to out too. Only that work is timed, in CPU
// seconds of this process (getrusage), not the catalog load and planning.
func Floor(ctx context.Context, req ScanRequest, out string, manifests []string) (*FloorResult, error) {
	cpu0 := cpuSeconds()
	tbl, closeCat, err := loadTable(ctx, req)
	if err != nil {
		return nil, err
	}
	defer closeCat()
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", req.Table, err)
	}
	if len(tasks) == 0 {
		return nil, errors.New("table has no data files")
	}
	codec, level, err := writeCodec(tbl.Properties())
	if err != nil {
		return nil, err
	}
	enc, err := compress.GetCodec(codec)
	if err != nil {
		return nil, err
	}
	res := &FloorResult{Codec: codec.String(), Level: level}

	start, cpu1 := time.Now(), cpuSeconds()
	res.PlanSeconds = cpu1 - cpu0
	f, err := os.Create(out)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	var buf []byte
	seenDeletes := map[string]bool{}
	for _, t := range tasks {
		path := strings.TrimPrefix(t.File.FilePath(), "file://")
		err := eachPage(path, func(p []byte) error {
			res.Pages++
			res.PageBytes += int64(len(p))
			if need := int(enc.CompressBound(int64(len(p)))); cap(buf) < need {
				buf = make([]byte, need)
			}
			c := enc.EncodeLevel(buf[:cap(buf)], p, level)
			n, err := w.Write(c)
			res.WrittenBytes += int64(n)
			return err
		})
		if err != nil {
			return nil, err
		}
		res.DataFiles++
		res.InputBytes += t.File.FileSizeBytes()
		for _, d := range t.DeleteFiles {
			dp := strings.TrimPrefix(d.FilePath(), "file://")
			if seenDeletes[dp] {
				continue
			}
			seenDeletes[dp] = true
			res.DeleteFiles++
			if strings.HasSuffix(dp, ".parquet") {
				err = eachPage(dp, func([]byte) error { return nil })
			} else {
				_, err = os.ReadFile(dp)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	for _, m := range manifests {
		b, err := os.ReadFile(strings.TrimPrefix(m, "file://"))
		if err != nil {
			return nil, err
		}
		n, err := w.Write(b)
		res.WrittenBytes += int64(n)
		res.ManifestBytes += int64(n)
		if err != nil {
			return nil, err
		}
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	res.Seconds = time.Since(start).Seconds()
	res.CPUSeconds = cpuSeconds() - cpu1
	return res, nil
}

// eachPage calls fn with the decompressed bytes of every page (dictionary
// and data) of every column chunk of the Parquet file at path.
func eachPage(path string, fn func([]byte) error) error {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer pf.Close()
	for rg := 0; rg < pf.NumRowGroups(); rg++ {
		r := pf.RowGroup(rg)
		for c := 0; c < r.NumColumns(); c++ {
			pr, err := r.GetColumnPageReader(c)
			if err != nil {
				return fmt.Errorf("%s: row group %d column %d: %w", path, rg, c, err)
			}
			for pr.Next() {
				// The reader releases the page on its next Next.
				if err := fn(pr.Page().Data()); err != nil {
					return err
				}
			}
			if err := pr.Err(); err != nil {
				return fmt.Errorf("%s: row group %d column %d: %w", path, rg, c, err)
			}
		}
	}
	return nil
}

// writeCodec is the codec and level icectl's writer uses for a table with
// properties props (iceberg/datafile/writer_props.go).
func writeCodec(props map[string]string) (compress.Compression, int, error) {
	codec, level := compress.Codecs.Zstd, compress.DefaultCompressionLevel
	if v, ok := props["write.parquet.compression-codec"]; ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "zstd":
		case "snappy":
			codec = compress.Codecs.Snappy
		case "gzip":
			codec = compress.Codecs.Gzip
		case "lz4", "lz4_raw":
			codec = compress.Codecs.Lz4Raw
		case "brotli":
			codec = compress.Codecs.Brotli
		case "uncompressed", "none":
			codec = compress.Codecs.Uncompressed
		default:
			return 0, 0, fmt.Errorf("write.parquet.compression-codec=%q: unsupported", v)
		}
	}
	if v := strings.TrimSpace(props["write.parquet.compression-level"]); v != "" {
		l, err := strconv.Atoi(v)
		if err != nil {
			return 0, 0, fmt.Errorf("write.parquet.compression-level=%q: not an integer", v)
		}
		level = l
	}
	return codec, level, nil
}

// cpuSeconds is this process's user + system CPU time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
