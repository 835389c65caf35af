package compact

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
)

// arrowReason says why a group must take the Arrow path, or "" when it
// may try the column-by-column one: sorting needs whole rows to order,
// only Parquet inputs can be transcoded, and an input larger than an
// output file (maxSize) must be split between outputs row by row, while
// the Transcoder writes whole inputs. (Equality deletes are evaluated
// before transcoding, by reading only their columns.) Schema and file
// layout are checked as the files are opened.
func arrowReason(rw *rewrite, opts Options, maxSize int64) string {
	switch {
	case opts.ArrowOnly:
		return "asked for"
	case opts.sorting():
		return "sorted rewrite"
	case len(rw.inputs) == 0:
		return "no inputs"
	}
	for _, in := range rw.inputs {
		df := &in.entry.Entry.DataFile
		if !strings.EqualFold(df.FileFormat, "PARQUET") {
			return "input " + df.FilePath + " is " + df.FileFormat
		}
		if df.FileSizeInBytes > maxSize {
			return "input " + df.FilePath + " is larger than an output file and is split"
		}
	}
	return ""
}

// wholeFileLimit is the largest remote input read into memory in one
// piece; larger ones are read column chunk by column chunk where they lie.
const wholeFileLimit = 64 << 20

// wholeLocalFileLimit is the same for a local input.
const wholeLocalFileLimit = 4 << 20

// loadedInput is one opened input of a transcode.
type loadedInput struct {
	in    datafile.TranscodeInput
	close func() error
}

// transcode writes the group's outputs with datafile.Transcoder: each
// column of the surviving rows is decoded to typed values and encoded
// again, one goroutine per column, instead of going through Arrow record
// batches. The rows, their order, lineage and metrics are those run's
// Arrow path writes (tests compare the two). It returns an error wrapping
// datafile.ErrNotTranscodable, with its outputs already removed, when an
// input's layout needs the Arrow path; any other error fails the group.
func (x *executor) transcode(ctx context.Context, h *head, rw *rewrite, writeSchema *spec.Schema, dir string, specID int32, partition []any) (err error) {
	md := h.md
	tasks := make([]scan.FileTask, len(rw.inputs))
	for i, in := range rw.inputs {
		tasks[i] = scan.FileTask{File: in.entry, Deletes: in.deletes}
	}
	deletes, err := scan.NewFileReader(h.fio, md, tasks)
	if err != nil {
		return err
	}
	out := newOutputs(ctx, h.fio, md, writeSchema, dir, rw.namePrefix, x.p.Options.WriteMaxFileSize, 0, specID, partition)
	out.rowIDsAssigned = md.FormatVersion >= 3 && !slices.ContainsFunc(rw.inputs, func(in input) bool {
		return in.entry.Entry.DataFile.FirstRowID == nil
	})
	defer func() {
		if err != nil {
			err = errors.Join(err, out.abort())
		}
	}()
	sc := newSelfCheck(writeSchema, rw, md.FormatVersion >= 3, x.opts.selfCheckHooks)
	// Chunks of inputs become row groups: sized by the inputs' bytes
	// scaled by how much the outputs so far shrank them.
	ratio := 1.0
	var inBytes, outBytes int64
	var cur *transcodeFile
	defer func() {
		if cur != nil && err != nil {
			cur.abort()
		}
	}()
	chunks := x.transcodeChunks(rw, md.Properties)
	var next *chunkSource
	defer func() {
		if next != nil {
			next.close() // a failed run still closes what it read ahead
		}
	}()
	next = newChunkSource(ctx, h.fio, deletes, rw, sc, chunks[0], 0)
	for i := range chunks {
		src := next
		next = nil
		src.begin()
		if i+1 < len(chunks) {
			// The start of the next chunk is read while this one is
			// encoded.
			next = newChunkSource(ctx, h.fio, deletes, rw, sc, chunks[i+1], readAheadBytes)
		}
		werr := func() error {
			defer src.close()
			var est int64
			for _, k := range chunks[i] {
				est += int64(float64(rw.inputs[k].entry.Entry.DataFile.FileSizeInBytes) * ratio)
			}
			if cur != nil && cur.t.BytesWritten()+est > out.maxSize {
				f := cur
				cur = nil
				if err := out.finishTranscoded(f); err != nil {
					return err
				}
			}
			if cur == nil {
				f, err := out.openTranscoder()
				if err != nil {
					return err
				}
				cur = f
			}
			before := cur.t.BytesWritten()
			n, err := cur.t.WriteRowGroupFrom(ctx, src)
			if err != nil {
				return err
			}
			rw.rowsOut += n
			for _, k := range chunks[i] {
				inBytes += rw.inputs[k].entry.Entry.DataFile.FileSizeInBytes
			}
			outBytes += cur.t.BytesWritten() - before
			if inBytes > 0 && outBytes > 0 {
				ratio = float64(outBytes) / float64(inBytes)
			}
			return nil
		}()
		if werr != nil {
			return werr
		}
	}
	if cur != nil {
		f := cur
		cur = nil
		if err := out.finishTranscoded(f); err != nil {
			return err
		}
	}
	if err := sc.verifyTranscode(rw, out.done); err != nil {
		return err
	}
	if err := verifyPartitionValues(ctx, h.fio, md, writeSchema, out.done); err != nil {
		return err
	}
	rw.takeOutputs(out)
	return nil
}

// transcodeChunks splits the inputs, in order, into row groups of about
// the row-group size (write.parquet.row-group-size-bytes) of input bytes,
// never more than the output file size.
func (x *executor) transcodeChunks(rw *rewrite, props map[string]string) [][]int {
	target := min(datafile.RowGroupSizeFromProperties(props), x.p.Options.WriteMaxFileSize)
	var chunks [][]int
	var cur []int
	var size int64
	for i, in := range rw.inputs {
		n := in.entry.Entry.DataFile.FileSizeInBytes
		if len(cur) > 0 && size+n > target {
			chunks = append(chunks, cur)
			cur, size = nil, 0
		}
		cur = append(cur, i)
		size += n
	}
	if len(cur) > 0 {
		chunks = append(chunks, cur)
	}
	return chunks
}

// chunkSource reads the inputs of one chunk, a few at a time and in
// order, as the Transcoder's columns ask for them. A chunk read ahead
// (while the one before is written) stops after aheadBytes until begin:
// enough for its columns to start at once, without holding two row
// groups of inputs in memory.
type chunkSource struct {
	chunk  []int
	loaded []loadedInput
	errs   []error
	done   []chan struct{}
	start  chan struct{} // closed by begin
	stop   chan struct{} // closed by close
	once   sync.Once
	wg     sync.WaitGroup
}

// loadConcurrency is how many inputs are read at once.
const loadConcurrency = 4

// readAheadBytes is how much of the next chunk is read while the current
// one is written.
const readAheadBytes = 16 << 20

func newChunkSource(ctx context.Context, fio fileio.FileIO, deletes *scan.FileReader, rw *rewrite, sc *selfCheck, chunk []int, aheadBytes int64) *chunkSource {
	s := &chunkSource{chunk: chunk, loaded: make([]loadedInput, len(chunk)), errs: make([]error, len(chunk)),
		done: make([]chan struct{}, len(chunk)), start: make(chan struct{}), stop: make(chan struct{})}
	for j := range chunk {
		s.done[j] = make(chan struct{})
	}
	sem := make(chan struct{}, loadConcurrency)
	s.wg.Go(func() {
		var queued int64
		started := false
		for j, k := range chunk {
			size := rw.inputs[k].entry.Entry.DataFile.FileSizeInBytes
			if !started && j > 0 && queued+size > aheadBytes {
				select {
				case <-s.start:
					started = true
				case <-s.stop:
					return
				case <-ctx.Done():
					return
				}
			}
			queued += size
			select {
			case sem <- struct{}{}:
			case <-s.stop:
				return
			}
			s.wg.Go(func() {
				defer func() { <-sem }()
				defer close(s.done[j])
				s.loaded[j], s.errs[j] = loadInput(ctx, fio, deletes, rw, sc, k)
			})
		}
	})
	return s
}

// begin lets a chunk read ahead load the rest of its inputs.
func (s *chunkSource) begin() { close(s.start) }

func (s *chunkSource) Len() int { return len(s.chunk) }

func (s *chunkSource) Input(ctx context.Context, j int) (datafile.TranscodeInput, error) {
	select {
	case <-s.done[j]:
	case <-ctx.Done():
		return datafile.TranscodeInput{}, ctx.Err()
	}
	return s.loaded[j].in, s.errs[j]
}

// close stops reading, waits for the reads under way and closes the
// inputs.
func (s *chunkSource) close() {
	s.once.Do(func() { close(s.stop) })
	s.wg.Wait()
	for _, l := range s.loaded {
		if l.close != nil {
			l.close()
		}
	}
}

func loadInput(ctx context.Context, fio fileio.FileIO, deletes *scan.FileReader, rw *rewrite, sc *selfCheck, k int) (loadedInput, error) {
	e := rw.inputs[k].entry
	df := &e.Entry.DataFile
	del, err := deletes.DeletedPositions(ctx, k)
	if err != nil {
		return loadedInput{}, err
	}
	f, err := fio.Open(ctx, df.FilePath)
	if err != nil {
		return loadedInput{}, fmt.Errorf("read data file: %w", err)
	}
	var src interface {
		io.ReaderAt
		io.Seeker
	}
	var data []byte // the whole file, when read whole
	closeFn := f.Close
	// Small inputs are read whole and closed at once: a row group may
	// gather thousands of them, too many to hold open. A remote object
	// is read whole up to a larger size, since the column readers would
	// otherwise ask for each column chunk separately; a large local file
	// stays where it is (in the page cache, not in our memory).
	limit := int64(wholeFileLimit)
	if fileio.ReadsLocally(f) {
		limit = wholeLocalFileLimit
	}
	if f.Size() <= limit {
		buf := make([]byte, f.Size())
		_, err := f.ReadAt(buf, 0)
		f.Close()
		if err != nil && !(errors.Is(err, io.EOF) && int64(len(buf)) == f.Size()) {
			return loadedInput{}, fmt.Errorf("read data file %s: %w", df.FilePath, err)
		}
		src, data, closeFn = bytes.NewReader(buf), buf, func() error { return nil }
	} else {
		src = io.NewSectionReader(f, 0, f.Size())
	}
	pf, err := openParquet(src)
	if err != nil {
		closeFn()
		return loadedInput{}, fmt.Errorf("read data file %s: %w", df.FilePath, err)
	}
	if pf.NumRows() != df.RecordCount {
		closeFn()
		return loadedInput{}, fmt.Errorf("read data file %s: file has %d rows but its manifest entry says %d", df.FilePath, pf.NumRows(), df.RecordCount)
	}
	in := datafile.TranscodeInput{Path: df.FilePath, File: pf, Data: data, Source: src, Deleted: del,
		FirstRowID: df.FirstRowID, DataSequenceNumber: e.DataSequenceNumber(), Stored: df.StoredColumns(),
		Constants: rw.inputs[k].consts}
	sc.transcodeInput(k, &in, df.RecordCount)
	return loadedInput{in: in, close: closeFn}, nil
}

// openParquet opens a Parquet footer; arrow-go panics on some corrupt ones.
func openParquet(r interface {
	io.ReaderAt
	io.Seeker
}) (pf *file.Reader, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt parquet file: %v", p)
		}
	}()
	return file.NewParquetReader(r)
}

// transcodeFile is one output written by a Transcoder.
type transcodeFile struct {
	path string
	w    fileio.Writer
	cw   *fileio.CountingWriter
	t    *datafile.Transcoder
}

func (f *transcodeFile) abort() {
	f.t.Close()
	f.w.Abort()
}

func (o *outputs) openTranscoder() (*transcodeFile, error) {
	path, w, cw, err := o.create()
	if err != nil {
		return nil, err
	}
	t, err := datafile.NewTranscoder(cw, o.schema, o.props)
	if err != nil {
		w.Abort()
		return nil, fmt.Errorf("write output %s: %w", path, err)
	}
	if o.rowIDsAssigned {
		t.DeltaRowIDs()
	}
	return &transcodeFile{path: path, w: w, cw: cw, t: t}, nil
}

// finishTranscoded closes f and records it, as finish does for Writer
// outputs.
func (o *outputs) finishTranscoded(f *transcodeFile) error {
	return o.seal(f.path, f.w, f.cw, f.t.Close)
}
