package table

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// Table properties that govern manifest merging on commit, with Java's
// defaults (TableProperties.MANIFEST_*).
const (
	PropManifestMergeEnabled  = "commit.manifest-merge.enabled"
	PropManifestMinMergeCount = "commit.manifest.min-count-to-merge"
	PropManifestTargetSize    = "commit.manifest.target-size-bytes"

	DefaultManifestMinMergeCount = 100
	DefaultManifestTargetSize    = 8 << 20
)

// MergeConfig is how a commit merges small manifests.
type MergeConfig struct {
	Enabled    bool
	MinCount   int   // manifests a bin holding the commit's first manifest needs before it is merged
	TargetSize int64 // bytes a merged manifest aims for
}

// MergeConfigOf reads the merge properties of md. A value that does not
// parse is an error, as in Java: guessing could merge what the owner
// asked to keep apart.
func MergeConfigOf(md *spec.TableMetadata) (MergeConfig, error) {
	c := MergeConfig{Enabled: true, MinCount: DefaultManifestMinMergeCount, TargetSize: DefaultManifestTargetSize}
	if v, ok := md.Properties[PropManifestMergeEnabled]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, fmt.Errorf("table property %s=%q is not a boolean", PropManifestMergeEnabled, v)
		}
		c.Enabled = b
	}
	if v, ok := md.Properties[PropManifestMinMergeCount]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return c, fmt.Errorf("table property %s=%q is not a count", PropManifestMinMergeCount, v)
		}
		c.MinCount = n
	}
	v, err := TargetManifestSize(md)
	c.TargetSize = v
	return c, err
}

// TargetManifestSize is commit.manifest.target-size-bytes of md, or its
// default.
func TargetManifestSize(md *spec.TableMetadata) (int64, error) {
	v, ok := md.Properties[PropManifestTargetSize]
	if !ok {
		return DefaultManifestTargetSize, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return DefaultManifestTargetSize, fmt.Errorf("table property %s=%q is not a positive size", PropManifestTargetSize, v)
	}
	return n, nil
}

// PackEnd splits items, in order, into consecutive bins of total weight
// at most target (an item heavier than target gets a bin of its own). It
// packs from the end, as Java's ListPacker.packEnd with a lookback of 1,
// so the under-filled bin is the first one: the one holding the newest
// manifests, which the next commit merges again. Order is kept.
func PackEnd[T any](items []T, weight func(T) int64, target int64) [][]T {
	var bins [][]T
	var cur []T
	var w int64
	for i := len(items) - 1; i >= 0; i-- {
		iw := weight(items[i])
		if len(cur) > 0 && w+iw > target {
			bins = append(bins, cur)
			cur, w = nil, 0
		}
		cur = append(cur, items[i])
		w += iw
	}
	if len(cur) > 0 {
		bins = append(bins, cur)
	}
	// Reverse the bins and each bin back into list order.
	for i, j := 0, len(bins)-1; i < j; i, j = i+1, j-1 {
		bins[i], bins[j] = bins[j], bins[i]
	}
	for _, b := range bins {
		for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
			b[i], b[j] = b[j], b[i]
		}
	}
	return bins
}

// listed is one manifest of the snapshot being built, with where it came
// from, so merging can tell the producer's own manifests from carried ones.
type listed struct {
	mf      manifest.ManifestFile
	written bool // written by this producer (added or rewritten)
	fresh   bool // written by this attempt
	key     string
	added   bool // holds the change's added files
	merged  bool // written by mergeManifests
	folded  int  // base manifests besides one that this one replaces (foldAll)
	// given: one of the change's AddManifests, which its caller wrote
	// and owns (removes when the commit fails, may list again in
	// another): never merged, never removed by the producer.
	given bool
}

// mergeManifests merges small manifests of the list as Java's
// ManifestMergeManager does: per content (data, deletes) and partition
// spec, the manifests are bin-packed to cfg.TargetSize keeping their
// order, and every bin of two or more is merged, except that the bin
// holding the first manifest of its content (the commit's new files) is
// merged only once it has cfg.MinCount manifests. Output order is data
// groups then delete groups, each by spec id descending, as Java writes.
func (p *producer) mergeManifests(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, cfg MergeConfig, list []listed) (out, mergedAway []listed, err error) {
	type groupKey struct {
		deletes bool
		spec    int32
	}
	groups := map[groupKey][]listed{}
	first := map[bool]string{}
	for _, l := range list {
		if l.given {
			// Merged, it would leave its caller's file unreferenced
			// without the caller knowing; it is listed as it is.
			out = append(out, l)
			continue
		}
		k := groupKey{l.mf.Content == manifest.ManifestContentDeletes, l.mf.SpecID}
		if _, ok := first[k.deletes]; !ok {
			first[k.deletes] = l.mf.Path
		}
		groups[k] = append(groups[k], l)
	}
	keys := make([]groupKey, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].deletes != keys[j].deletes {
			return !keys[i].deletes
		}
		return keys[i].spec > keys[j].spec
	})
	for _, k := range keys {
		bins := PackEnd(groups[k], func(l listed) int64 { return l.mf.Length }, cfg.TargetSize)
		for _, bin := range bins {
			if len(bin) == 1 || (len(bin) < cfg.MinCount && holds(bin, first[k.deletes])) {
				out = append(out, bin...)
				continue
			}
			mf, err := p.mergeBin(ctx, fio, md, bin)
			if err != nil {
				var done []string
				for _, l := range out {
					if l.merged {
						done = append(done, l.mf.Path)
					}
				}
				return nil, nil, errors.Join(err, removeAll(ctx, fio, md, done))
			}
			out = append(out, listed{mf: mf, written: true, fresh: true, merged: true})
			mergedAway = append(mergedAway, bin...)
		}
	}
	return out, mergedAway, nil
}

func holds(bin []listed, path string) bool {
	for _, l := range bin {
		if l.mf.Path == path {
			return true
		}
	}
	return false
}

// mergeBin writes the manifests of bin, in order, as one. Entries this
// snapshot adds or deletes keep their status; every other live entry
// becomes EXISTING with everything it inherited written out (sequence
// numbers, snapshot id and, in v3, first_row_id), so its rows keep their
// lineage; DELETED entries of earlier snapshots are dropped.
func (p *producer) mergeBin(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, bin []listed) (manifest.ManifestFile, error) {
	type source struct {
		r     *manifest.Reader
		close func() error
	}
	srcs := make([]source, 0, len(bin))
	defer func() {
		for _, s := range srcs {
			s.close()
		}
	}()
	for _, l := range bin {
		f, err := fio.Open(ctx, l.mf.Path)
		if err != nil {
			return manifest.ManifestFile{}, fmt.Errorf("merge manifest: %w", err)
		}
		r, err := manifest.OpenManifest(io.NewSectionReader(f, 0, f.Size()), manifest.WithSchemaCache(p.schemas))
		if err != nil {
			f.Close()
			return manifest.ManifestFile{}, fmt.Errorf("merge manifest %s: %w", l.mf.Path, err)
		}
		// The producer's own manifests have unassigned sequence numbers
		// that must stay inherited; carried ones have their values.
		if !l.written {
			r.InheritFrom(l.mf)
		}
		srcs = append(srcs, source{r: r, close: f.Close})
	}
	first := bin[0].mf
	schema := srcs[0].r.Meta().Schema
	if schema == nil {
		schema = md.CurrentSchema()
	}
	ps := srcs[0].r.Meta().Spec
	if s, ok := md.SpecByID(int(first.SpecID)); ok {
		ps = *s
	}
	ps.ID = int(first.SpecID)
	content := manifest.ManifestContentData
	if first.Content == manifest.ManifestContentDeletes {
		content = manifest.ManifestContentDeletes
	}
	return p.writeManifest(ctx, fio, md, schema, ps, content, func(w *manifest.Writer) error {
		for i, s := range srcs {
			path := bin[i].mf.Path
			for {
				e, err := s.r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return fmt.Errorf("read manifest %s: %w", path, err)
				}
				if bin[i].written {
					// Added entries stay added; DELETED ones are this
					// snapshot's removals; EXISTING were made explicit.
					if err := w.Add(e); err != nil {
						return err
					}
					continue
				}
				if e.Status == manifest.StatusDeleted {
					continue
				}
				if e.SequenceNumber == nil || e.FileSequenceNumber == nil {
					return fmt.Errorf("manifest %s: entry %s has no sequence number to carry", path, e.DataFile.FilePath)
				}
				if md.FormatVersion < 3 {
					e.DataFile.FirstRowID = nil
				}
				e.Status = manifest.StatusExisting
				if err := w.Add(e); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
