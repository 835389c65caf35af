package demo

import (
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/google/uuid"

	"github.com/icectl/icectl/iceberg/manifest"

	"github.com/icectl/icectl/iceberg/table"
)

// leftovers leaves what a job that crashed before committing leaves: data
// files under data/ and the manifest listing them under metadata/, none
// referenced by any snapshot, with mtime old enough to be orphan
// candidates.
func (b *builder) leftovers(mtime time.Time) ([]string, error) {
	p := partition{region: "us", day: firstDay + days - 1}
	s := ordersSchema()
	var paths []string
	var entries []manifest.Entry
	snapID := table.NewSnapshotID()
	for range leftoverFiles {
		f, err := b.writeData(p, 20+b.rng.IntN(40))
		if err != nil {
			return nil, err
		}
		paths = append(paths, f.df.FilePath)
		entries = append(entries, manifest.Entry{Status: manifest.StatusAdded, SnapshotID: &snapID, DataFile: f.df})
	}
	mpath := table.MetadataLocation(b.tbl.Metadata) + "/" + uuid.NewString() + "-m0.avro"
	w, err := b.tbl.IO.Create(b.ctx, mpath)
	if err != nil {
		return nil, err
	}
	mw, err := manifest.NewWriter(w, manifest.WriterOptions{Version: b.tbl.Metadata.FormatVersion,
		Content: manifest.ManifestContentData, Schema: &s, Spec: ordersSpec(), SnapshotID: snapID})
	if err != nil {
		w.Abort()
		return nil, fmt.Errorf("write %s: %w", mpath, err)
	}
	for _, e := range entries {
		if err := mw.Add(e); err != nil {
			w.Abort()
			return nil, fmt.Errorf("write %s: %w", mpath, err)
		}
	}
	if err := mw.Close(); err != nil {
		w.Abort()
		return nil, fmt.Errorf("write %s: %w", mpath, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("write %s: %w", mpath, err)
	}
	paths = append(paths, mpath)
	for _, p := range paths {
		lp, err := localPath(p)
		if err != nil {
			return nil, err
		}
		if err := os.Chtimes(lp, mtime, mtime); err != nil {
			return nil, fmt.Errorf("age leftover %s: %w", p, err)
		}
	}
	b.logf("left %d files of a failed job", len(paths))
	return paths, nil
}

func localPath(p string) (string, error) {
	u, err := url.Parse(p)
	if err != nil {
		return "", fmt.Errorf("path %s: %w", p, err)
	}
	switch u.Scheme {
	case "file":
		return u.Path, nil
	case "":
		return p, nil
	}
	return "", fmt.Errorf("path %s is not local", p)
}
