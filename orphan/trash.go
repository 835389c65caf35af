package orphan

// The trash. `--trash DIR` moves orphans into DIR instead of deleting them,
// and `icectl orphan restore` moves them back. DIR must lie within the
// table's locations (reclaim.TableScope), so that removing a trashed copy
// after a restore goes through the same guard as every other deletion, and
// so that the trash is never another table's directory. A relative DIR is
// taken relative to the table location (".icectl-trash" is
// <location>/.icectl-trash, a hidden directory later runs skip anyway); a
// DIR inside the listing root is always skipped by the listing.
//
// Each run gets its own directory, DIR/<run id>/, holding
//
//	run.json          written before the first move: the listing root and
//	                  the table it came from
//	files/<relative>  each orphan, at its path relative to the listing root
//
// so an orphan's original path is the root from run.json plus its path
// under files/, byte for byte (repeated slashes included). Nothing else is
// needed: a run that was interrupted leaves a trash that restores as far
// as it got. A move is a copy, a size check of the copy, then the
// original's deletion through the Deleter; a failed move leaves the
// original in place.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/internal/shared/fanout"
)

const (
	runFile      = "run.json"
	filesDir     = "files/"
	trashFormat  = "icectl-orphan-trash/1"
	runIDPattern = "20060102T150405Z"
)

// runInfo is the content of run.json.
type runInfo struct {
	Format        string `json:"format"`
	Root          string `json:"root"`
	TableLocation string `json:"table_location"`
	TableUUID     string `json:"table_uuid"`
	CreatedMS     int64  `json:"created_ms"`
}

// trashDir resolves and checks the trash directory of t (no trailing
// slash).
func trashDir(t *catalog.Table, dir, root string) (string, error) {
	d := strings.TrimRight(dir, "/")
	if d == "" {
		return "", fmt.Errorf("%w: --trash %q names no directory", ErrInvalidOptions, dir)
	}
	if u := splitURI(d); u.scheme == "" && !strings.HasPrefix(d, "/") {
		d = strings.TrimRight(t.Metadata.Location, "/") + "/" + d
	}
	if name := d[strings.LastIndexByte(d, '/')+1:]; !hidden(name) {
		return "", fmt.Errorf("%w: the trash directory's name %q must start with '.' or '_', so that later runs never take trashed files for orphans (e.g. --trash .icectl-trash)",
			ErrInvalidOptions, name)
	}
	scope := reclaim.TableScope(t.Metadata)
	if !inScope(scope, d+"/") {
		return "", fmt.Errorf("%w: trash %s is outside the locations of table %s (%s); choose a directory inside them, e.g. --trash .icectl-trash",
			ErrInvalidOptions, d, t.Ident, strings.Join(scope.Roots(), ", "))
	}
	if root != "" && strings.HasPrefix(pathKey(splitURI(root).path)+"/", pathKey(splitURI(d).path)+"/") {
		return "", fmt.Errorf("%w: the listing root %s is inside the trash %s", ErrInvalidOptions, root, d)
	}
	return d, nil
}

// newRunID names a trash run: its UTC start time (so runs sort by time)
// and a random suffix (so two runs in one second do not share one).
func newRunID(now time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return now.UTC().Format(runIDPattern) + "-" + hex.EncodeToString(b[:])
}

// mover moves orphans into one trash run.
type mover struct {
	io          fileio.FileIO
	d           *reclaim.Deleter
	root        string
	runDir      string
	concurrency int
	wroteRun    bool
	info        runInfo
}

func newMover(t *catalog.Table, d *reclaim.Deleter, trash, root string, now time.Time, concurrency int) *mover {
	if concurrency <= 0 {
		concurrency = 8
	}
	return &mover{io: t.IO, d: d, root: root, runDir: trash + "/" + newRunID(now), concurrency: concurrency,
		info: runInfo{Format: trashFormat, Root: root, TableLocation: t.Metadata.Location, TableUUID: t.Metadata.TableUUID, CreatedMS: now.UnixMilli()}}
}

// writeRun writes run.json, before the first move: without it nothing in
// the run could be put back.
func (m *mover) writeRun(ctx context.Context) error {
	data, err := json.MarshalIndent(m.info, "", "  ")
	if err != nil {
		return err
	}
	if err := fileio.WriteFile(ctx, m.io, m.runDir+"/"+runFile, append(data, '\n')); err != nil {
		return fmt.Errorf("write trash run: %w", err)
	}
	m.wroteRun = true
	return nil
}

// move copies each orphan into the trash and then deletes the originals
// whose copy is complete, through the Deleter.
func (m *mover) move(ctx context.Context, batch []candidate, now time.Time) []Result {
	dst := make([]string, len(batch))
	errs := make([]error, len(batch))
	if !m.wroteRun {
		if err := m.writeRun(ctx); err != nil {
			out := make([]Result, len(batch))
			for i, c := range batch {
				out[i] = result(c, now, StatusFailed)
				out[i].Detail = err.Error()
			}
			return out
		}
	}
	fanout.Each(len(batch), m.concurrency, func(i int) {
		dst[i] = m.runDir + "/" + filesDir + strings.TrimPrefix(batch[i].Path, m.root)
		errs[i] = copyFile(ctx, m.io, batch[i].Path, dst[i])
	})
	var copied []candidate
	for i, c := range batch {
		if errs[i] == nil {
			copied = append(copied, c)
		}
	}
	paths := make([]string, len(copied))
	for i, c := range copied {
		paths[i] = c.Path
	}
	rep := m.d.Delete(ctx, paths)
	byPath := map[string]Result{}
	for _, r := range outcomes(copied, rep, now, StatusTrashed) {
		byPath[r.Path] = r
	}
	out := make([]Result, len(batch))
	for i, c := range batch {
		if errs[i] != nil {
			out[i] = result(c, now, StatusFailed)
			out[i].Detail = "copy to trash: " + errs[i].Error()
			continue
		}
		out[i] = byPath[c.Path]
		out[i].TrashPath = dst[i]
		if out[i].Status == StatusFailed {
			// The copy stays: the original is still in place, and
			// restore would find it there and leave it alone.
			out[i].Detail += " (a copy is in the trash)"
		}
	}
	return out
}

// copyFile copies src to dst and checks the copy's size against the
// source's.
func copyFile(ctx context.Context, fio fileio.FileIO, src, dst string) error {
	in, err := fio.Open(ctx, src)
	if err != nil {
		return err
	}
	defer in.Close()
	w, err := fio.Create(ctx, dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, io.NewSectionReader(in, 0, in.Size())); err != nil {
		return errors.Join(fmt.Errorf("copy %s to %s: %w", src, dst, err), w.Abort())
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	out, err := fio.Open(ctx, dst)
	if err != nil {
		return fmt.Errorf("check copy: %w", err)
	}
	defer out.Close()
	if out.Size() != in.Size() {
		return fmt.Errorf("copy %s to %s: wrote %d bytes of %d", src, dst, out.Size(), in.Size())
	}
	return nil
}
