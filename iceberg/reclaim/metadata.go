package reclaim

import (
	"context"
	"strings"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
)

// PropDeleteAfterCommit enables deleting the metadata files that fall off
// the metadata log (Java TableProperties).
const PropDeleteAfterCommit = "write.metadata.delete-after-commit.enabled"

// RemovedMetadataFiles lists the metadata files that were reachable from
// base (its location and metadata log) and are not from the committed
// version: the files that fell off the metadata log.
func RemovedMetadataFiles(baseLocation string, base *spec.TableMetadata, newLocation string, committed *spec.TableMetadata) []string {
	keep := map[string]bool{newLocation: true}
	for _, e := range committed.MetadataLog {
		keep[e.MetadataFile] = true
	}
	var removed []string
	seen := map[string]bool{}
	consider := func(p string) {
		if p != "" && !keep[p] && !seen[p] {
			seen[p] = true
			removed = append(removed, p)
		}
	}
	for _, e := range base.MetadataLog {
		consider(e.MetadataFile)
	}
	consider(baseLocation)
	return removed
}

// DeleteRemovedMetadata deletes, when the committed version enables
// write.metadata.delete-after-commit.enabled, the metadata files that fell
// off the metadata log. Call it only after a confirmed commit.
//
// The metadata log is written by whoever committed before, so it is not
// trusted to name only metadata files: a path is deleted only when it is
// named like a metadata JSON file, lies inside the metadata directory of the
// base or the committed version, and is not referenced by the committed
// version (its location, its log, a manifest list, a statistics file).
// Everything else is refused and reported.
func DeleteRemovedMetadata(ctx context.Context, fio fileio.FileIO, baseLocation string, base *spec.TableMetadata, newLocation string, committed *spec.TableMetadata) Report {
	if !strings.EqualFold(committed.Property(PropDeleteAfterCommit, "false"), "true") {
		return Report{}
	}
	candidates := RemovedMetadataFiles(baseLocation, base, newLocation, committed)
	if len(candidates) == 0 {
		return Report{}
	}
	var rep Report
	var named []string
	for _, p := range candidates {
		if IsMetadataJSON(p) {
			named = append(named, p)
		} else {
			rep.Refused = append(rep.Refused, Refusal{Path: p, Reason: "not named like a table metadata file"})
		}
	}
	referenced := MetadataReferences(committed)
	referenced[newLocation] = true
	d := Deleter{
		IO:    fio,
		Scope: NewScope(base.MetadataDir(), committed.MetadataDir()),
		Keep:  func(p string) bool { return referenced[p] },
	}
	rep.Merge(d.Delete(ctx, named))
	return rep
}

// MetadataReferences is the set of files a metadata version references by
// itself, without reading any manifest: its metadata log, every snapshot's
// manifest list, and its statistics and partition statistics files.
func MetadataReferences(md *spec.TableMetadata) map[string]bool {
	refs := map[string]bool{}
	for _, e := range md.MetadataLog {
		refs[e.MetadataFile] = true
	}
	for i := range md.Snapshots {
		if l := md.Snapshots[i].ManifestList; l != "" {
			refs[l] = true
		}
	}
	for _, s := range md.Statistics {
		refs[s.StatisticsPath] = true
	}
	for _, s := range md.PartitionStatistics {
		refs[s.StatisticsPath] = true
	}
	return refs
}

// An expiry journal lists the files an expiry is about to delete; it is
// written into the table's metadata directory before the expiry commits and
// removed once all of them are gone, so the next expiry can finish a run
// killed in between. Its name is JournalPrefix + a UUID + JournalSuffix. The
// naming rule lives here because two verbs depend on it: expire writes and
// finishes journals, and orphan removal must never delete a pending one
// (the files it lists would then be left for orphan alone to find, and
// those a retained manifest still lists as DELETED never would be).
const (
	JournalPrefix = "expire-"
	JournalSuffix = ".pending"
)

// IsJournalName reports whether name, a file name without a directory,
// names an expiry journal.
func IsJournalName(name string) bool {
	return len(name) > len(JournalPrefix)+len(JournalSuffix) &&
		strings.HasPrefix(name, JournalPrefix) && strings.HasSuffix(name, JournalSuffix)
}
