package colstats

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/google/uuid"

	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/metastore"
	"github.com/icectl/icectl/iceberg/puffin"
	"github.com/icectl/icectl/iceberg/spec"
)

// ErrBadFile is wrapped by the error for a snapshot's previous statistics
// file that cannot be read, so its blobs cannot be carried over.
var ErrBadFile = errors.New("unreadable statistics file")

// ErrChanged is returned by Commit when, on a reloaded table, the
// snapshot's statistics file is no longer the one this run carried blobs
// from: another writer registered one meanwhile. The file this run wrote
// is removed.
var ErrChanged = errors.New("another writer registered statistics for the snapshot meanwhile")

// Registered returns md's statistics file of snapshot id.
func Registered(md *spec.TableMetadata, id int64) (spec.StatisticsFile, bool) {
	for _, f := range md.Statistics {
		if f.SnapshotID == id {
			return f, true
		}
	}
	return spec.StatisticsFile{}, false
}

// Missing returns the columns of cols of which f has no sketch computed
// for snapshot id. A snapshot's rows never change, so a sketch it has is
// kept, not computed again.
func Missing(f spec.StatisticsFile, id int64, cols []Column) []Column {
	var out []Column
	for _, c := range cols {
		if !slices.ContainsFunc(f.BlobMetadata, func(b spec.BlobMetadata) bool {
			return isSketchOf(b.Type, b.Fields, c.ID) && b.SnapshotID == id
		}) {
			out = append(out, c)
		}
	}
	return out
}

func isSketchOf(typ string, fields []int, id int) bool {
	return typ == BlobType && len(fields) == 1 && fields[0] == id
}

// Blob is a blob of a previous file carried into the new one.
type Blob struct {
	Meta    puffin.BlobMetadata
	Payload []byte
}

// Carried reads the blobs of prev, the snapshot's previous statistics
// file, that res does not replace (another column's sketch, another blob
// type). Failures wrap ErrBadFile.
func Carried(ctx context.Context, fio fileio.FileIO, prev spec.StatisticsFile, cols []Column) ([]Blob, error) {
	bad := func(err error) error {
		return fmt.Errorf("%w %s: %w", ErrBadFile, prev.StatisticsPath, err)
	}
	keep := slices.ContainsFunc(prev.BlobMetadata, func(b spec.BlobMetadata) bool {
		return !slices.ContainsFunc(cols, func(c Column) bool { return isSketchOf(b.Type, b.Fields, c.ID) })
	})
	if !keep {
		return nil, nil
	}
	in, err := fio.Open(ctx, prev.StatisticsPath)
	if err != nil {
		return nil, bad(err)
	}
	defer in.Close()
	r, err := puffin.OpenReader(in, in.Size())
	if err != nil {
		return nil, bad(err)
	}
	var out []Blob
	for _, b := range r.Metadata().Blobs {
		fields := make([]int, len(b.Fields))
		for i, f := range b.Fields {
			fields[i] = int(f)
		}
		if slices.ContainsFunc(cols, func(c Column) bool { return isSketchOf(b.Type, fields, c.ID) }) {
			continue
		}
		p, err := r.ReadBlob(b)
		if err != nil {
			return nil, bad(err)
		}
		out = append(out, Blob{Meta: b, Payload: p})
	}
	return out, nil
}

// Encode is the Puffin file of res's sketches (zstd, as Java writes them)
// followed by carried blobs, and its registration for path.
func Encode(res *Result, carried []Blob, path, createdBy string) ([]byte, spec.StatisticsFile, error) {
	var buf bytes.Buffer
	w := puffin.NewWriter(&buf, map[string]string{"created-by": createdBy})
	w.Reserve(len(res.Sketches) + len(carried))
	f := spec.StatisticsFile{SnapshotID: res.SnapshotID, StatisticsPath: path}
	add := func(b puffin.BlobMetadata, payload []byte) error {
		b, err := w.AddBlob(b, payload)
		if err != nil {
			return err
		}
		fields := make([]int, len(b.Fields))
		for i, id := range b.Fields {
			fields[i] = int(id)
		}
		f.BlobMetadata = append(f.BlobMetadata, spec.BlobMetadata{Type: b.Type, SnapshotID: b.SnapshotID,
			SequenceNumber: b.SequenceNumber, Fields: fields, Properties: b.Properties})
		return nil
	}
	for i, c := range res.Columns {
		sk := res.Sketches[i]
		b := puffin.BlobMetadata{Type: BlobType, Fields: []int32{int32(c.ID)}, SnapshotID: res.SnapshotID,
			SequenceNumber: res.SequenceNumber, CompressionCodec: puffin.CodecZstd,
			Properties: map[string]string{NDVProperty: strconv.FormatInt(sk.NDV(), 10)}}
		if err := add(b, sk.Bytes()); err != nil {
			return nil, spec.StatisticsFile{}, fmt.Errorf("encode statistics: %w", err)
		}
	}
	for _, b := range carried {
		if err := add(b.Meta, b.Payload); err != nil {
			return nil, spec.StatisticsFile{}, fmt.Errorf("encode statistics: %w", err)
		}
	}
	footer, size, err := w.Finish()
	if err != nil {
		return nil, spec.StatisticsFile{}, fmt.Errorf("encode statistics: %w", err)
	}
	f.FileSizeInBytes, f.FileFooterSizeInBytes = size, footer
	return buf.Bytes(), f, nil
}

// NewPath is where the file of snapshot id goes: the table's metadata
// directory, named as Java names it.
func NewPath(md *spec.TableMetadata, id int64) string {
	return fmt.Sprintf("%s/%d-%s.stats", md.MetadataDir(), id, uuid.NewString())
}

// Write writes data to f's path. The file is visible only once whole.
func Write(ctx context.Context, fio fileio.FileIO, f spec.StatisticsFile, data []byte) error {
	w, err := fio.Create(ctx, f.StatisticsPath)
	if err != nil {
		return fmt.Errorf("write statistics: %w", err)
	}
	defer w.Abort()
	if _, err := w.Write(data); err != nil {
		return fmt.Errorf("write statistics %s: %w", f.StatisticsPath, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write statistics %s: %w", f.StatisticsPath, err)
	}
	return nil
}

// Commit registers f, a file Write wrote, with the set-statistics update,
// retrying on conflicts. prev is the statistics file of the snapshot the
// file was built from (nil: none): on a reloaded table the snapshot must
// still be there with that same file, else the commit fails (ErrChanged)
// and the written file is removed.
func Commit(ctx context.Context, cat metastore.Committer, t *metastore.Table, f spec.StatisticsFile, prev *spec.StatisticsFile, opts commit.Options) (*metastore.Table, error) {
	build := func(ctx context.Context, base *metastore.Table, attempt int) (*commit.Attempt, error) {
		md := base.Metadata
		if _, ok := md.SnapshotByID(f.SnapshotID); !ok {
			return nil, fmt.Errorf("%w %d: it was removed (expired?) while its statistics were computed", ErrNoSnapshot, f.SnapshotID)
		}
		now, ok := Registered(md, f.SnapshotID)
		if ok != (prev != nil) || ok && now.StatisticsPath != prev.StatisticsPath {
			return nil, ErrChanged
		}
		a := &commit.Attempt{
			Requirements: []spec.Requirement{spec.AssertTableUUID{UUID: md.TableUUID}},
			Updates:      []spec.Update{spec.SetStatistics{Statistics: f}},
		}
		if attempt == 0 {
			a.Written = []string{f.StatisticsPath}
		} else {
			a.Reused = []string{f.StatisticsPath}
		}
		return a, nil
	}
	return commit.Run(ctx, cat, t, build, opts)
}
