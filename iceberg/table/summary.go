package table

import (
	"strconv"

	"github.com/icectl/icectl/iceberg/manifest"
)

// counts tallies files the way Java's SnapshotSummary does.
type counts struct {
	dataFiles, deleteFiles, posDeleteFiles, eqDeleteFiles, dvs int64
	records, posDeletes, eqDeletes, size                       int64
}

// fileSize is what a file adds to the *-files-size totals: its size, or
// for a DV only its blob, since the Puffin file is shared (Java's
// ScanTaskUtil.contentSizeInBytes).
func fileSize(df *manifest.DataFile) int64 {
	if IsDV(df) && df.ContentSizeInBytes != nil {
		return *df.ContentSizeInBytes
	}
	return df.FileSizeInBytes
}

func (c *counts) add(df *manifest.DataFile, sign int64) {
	c.size += sign * fileSize(df)
	switch df.Content {
	case manifest.ContentData:
		c.dataFiles += sign
		c.records += sign * df.RecordCount
	case manifest.ContentPositionDeletes:
		c.deleteFiles += sign
		if IsDV(df) {
			c.dvs += sign
		} else {
			c.posDeleteFiles += sign
		}
		c.posDeletes += sign * df.RecordCount
	case manifest.ContentEqualityDeletes:
		c.deleteFiles += sign
		c.eqDeleteFiles += sign
		c.eqDeletes += sign * df.RecordCount
	}
}

// summary builds the snapshot summary from the base's totals and what the
// change added and removed. Added/removed keys appear only when non-zero,
// totals always, as in Java.
func summary(op string, base, added, removed counts, changedPartitions int, extra map[string]string) map[string]string {
	s := map[string]string{}
	for k, v := range extra {
		s[k] = v
	}
	setIf := func(k string, v int64) {
		if v > 0 {
			s[k] = strconv.FormatInt(v, 10)
		} else {
			delete(s, k)
		}
	}
	set := func(k string, v int64) { s[k] = strconv.FormatInt(v, 10) }
	setIf("added-data-files", added.dataFiles)
	setIf("deleted-data-files", removed.dataFiles)
	setIf("added-delete-files", added.deleteFiles)
	setIf("added-position-delete-files", added.posDeleteFiles)
	setIf("added-equality-delete-files", added.eqDeleteFiles)
	setIf("added-dvs", added.dvs)
	setIf("removed-delete-files", removed.deleteFiles)
	setIf("removed-position-delete-files", removed.posDeleteFiles)
	setIf("removed-equality-delete-files", removed.eqDeleteFiles)
	setIf("removed-dvs", removed.dvs)
	setIf("added-records", added.records)
	setIf("deleted-records", removed.records)
	setIf("added-files-size", added.size)
	setIf("removed-files-size", removed.size)
	setIf("added-position-deletes", added.posDeletes)
	setIf("removed-position-deletes", removed.posDeletes)
	setIf("added-equality-deletes", added.eqDeletes)
	setIf("removed-equality-deletes", removed.eqDeletes)
	set("changed-partition-count", int64(changedPartitions))
	set("total-data-files", base.dataFiles+added.dataFiles-removed.dataFiles)
	set("total-delete-files", base.deleteFiles+added.deleteFiles-removed.deleteFiles)
	set("total-records", base.records+added.records-removed.records)
	set("total-files-size", base.size+added.size-removed.size)
	set("total-position-deletes", base.posDeletes+added.posDeletes-removed.posDeletes)
	set("total-equality-deletes", base.eqDeletes+added.eqDeletes-removed.eqDeletes)
	s["operation"] = op
	return s
}

// totalsOf reads the totals summary writes from a snapshot summary; ok is
// false when one is missing or malformed (a writer that does not keep
// them), and the caller must count the files instead.
func totalsOf(s map[string]string) (c counts, ok bool) {
	for _, f := range []struct {
		key string
		v   *int64
	}{
		{"total-data-files", &c.dataFiles}, {"total-delete-files", &c.deleteFiles}, {"total-records", &c.records},
		{"total-files-size", &c.size}, {"total-position-deletes", &c.posDeletes}, {"total-equality-deletes", &c.eqDeletes},
	} {
		n, err := strconv.ParseInt(s[f.key], 10, 64)
		if err != nil || n < 0 {
			return counts{}, false
		}
		*f.v = n
	}
	return c, true
}

// manifestCounts are the manifest keys Java's snapshot producers write
// (SnapshotProducer.buildManifestCountSummary): manifests of the new list
// this snapshot wrote, manifests carried from earlier snapshots, and
// committed manifests the snapshot no longer lists because it rewrote or
// merged them.
func manifestCounts(entries []listed, replaced int) map[string]string {
	created := 0
	for _, l := range entries {
		if l.written || l.given {
			created++
		}
	}
	return map[string]string{
		"manifests-created":  strconv.Itoa(created),
		"manifests-kept":     strconv.Itoa(len(entries) - created),
		"manifests-replaced": strconv.Itoa(replaced),
	}
}

// rewrittenBase counts the base's manifests a change rewrote to drop
// removed files: each is listed once, rewritten, in its place, or folded
// with others into one.
func rewrittenBase(entries []listed) int {
	n := 0
	for _, l := range entries {
		if l.written && !l.added && !l.merged {
			n += 1 + l.folded
		}
	}
	return n
}

// carried counts the manifests merged away that earlier snapshots
// committed; the producer's own (added or rewritten) were never committed,
// so replace nothing (Java corrects its count the same way).
func carried(mergedAway []listed) int {
	n := 0
	for _, l := range mergedAway {
		if !l.written {
			n++
		}
	}
	return n
}
