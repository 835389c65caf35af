package upgrade

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// Severity says how much a finding matters to the upgrade.
type Severity string

const (
	// Blocker: upgrading now risks wrong results or a failed first write;
	// settle it first. `upgrade --check` exits non-zero.
	Blocker Severity = "blocker"
	// Warning: the upgrade is safe, but something behaves differently
	// after it.
	Warning Severity = "warning"
	// Info: what the upgrade will cost or what to confirm.
	Info Severity = "info"
)

// PositionDeleteDebt is the kind of the blocker that position-delete
// files raise going to v3; an upgrade that merges deletes settles it.
const PositionDeleteDebt = "position-delete-debt"

// Finding is one observation with the command that settles it ("" when
// no icectl command does).
type Finding struct {
	Kind     string   `json:"kind"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	Command  string   `json:"command"`
}

// Input is what Check looks at: the table and its current snapshot.
type Input struct {
	Table    string // as commands spell it
	Metadata *spec.TableMetadata
	Target   int
	// Manifests and Files of the current snapshot (nil: none).
	Manifests []manifest.ManifestFile
	Files     *table.FileSet
}

// Report is the readiness of one table for an upgrade. Its JSON form is
// the output of `icectl upgrade --check --output json`.
type Report struct {
	Table         string `json:"table"`
	FormatVersion int    `json:"format_version"`
	Target        int    `json:"target_version"`
	SnapshotID    *int64 `json:"snapshot_id"`
	// Ready is false when a finding is a blocker.
	Ready bool `json:"ready"`

	DataFiles       int   `json:"data_files"`
	DataRecords     int64 `json:"data_records"`
	DataManifests   int   `json:"data_manifests"`
	DeleteManifests int   `json:"delete_manifests"`
	// UnassignedManifests and RowsToAssign are what the first v3 commit
	// gives row ids: data manifests without first_row_id and their rows.
	UnassignedManifests int   `json:"unassigned_manifests"`
	RowsToAssign        int64 `json:"rows_to_assign"`
	// ManifestsWithoutCounts are manifests listed without file and row
	// counts (v1 lists): the first commit of a newer version reads them.
	ManifestsWithoutCounts int `json:"manifests_without_counts"`

	PositionDeleteFiles   int   `json:"position_delete_files"`
	PositionDeleteRecords int64 `json:"position_delete_records"`
	// MultiFilePositionDeletes are position-delete files that may name
	// rows of several data files (no referenced_data_file, file_path
	// bounds differ or are unknown).
	MultiFilePositionDeletes int   `json:"multi_file_position_delete_files"`
	EqualityDeleteFiles      int   `json:"equality_delete_files"`
	EqualityDeleteRecords    int64 `json:"equality_delete_records"`
	DeletionVectors          int   `json:"deletion_vectors"`

	Findings []Finding `json:"findings"`
}

// Gather reads the input of Check for t's current snapshot.
func Gather(ctx context.Context, t *catalog.Table, target int) (Input, error) {
	in := Input{Table: t.Ident.String(), Metadata: t.Metadata, Target: target}
	snap := t.Metadata.CurrentSnapshot()
	if snap == nil {
		return in, nil
	}
	var err error
	if in.Manifests, err = table.ManifestFiles(ctx, t.IO, snap); err != nil {
		return Input{}, fmt.Errorf("table %s: %w", t.Ident, err)
	}
	if in.Files, err = table.LiveFiles(ctx, t.IO, snap); err != nil {
		return Input{}, fmt.Errorf("table %s: %w", t.Ident, err)
	}
	return in, nil
}

// Preflight is Check for an upgrade about to run: it reads main's manifest
// list and its delete manifests, not the data manifests, so an upgrade stays
// as cheap as its commit. Its findings and counts about deletes, the schema
// and the manifests to give row ids are Check's; its data-file counts are 0.
func Preflight(ctx context.Context, t *catalog.Table, target int) (Report, error) {
	in := Input{Table: t.Ident.String(), Metadata: t.Metadata, Target: target}
	if snap := t.Metadata.CurrentSnapshot(); snap != nil {
		var err error
		if in.Manifests, err = table.ManifestFiles(ctx, t.IO, snap); err != nil {
			return Report{}, fmt.Errorf("table %s: %w", t.Ident, err)
		}
		in.Files, err = table.LiveFilesWith(ctx, t.IO, snap, table.WalkOptions{Content: table.DeletesOnly, SkipMetrics: true})
		if err != nil {
			return Report{}, fmt.Errorf("table %s: %w", t.Ident, err)
		}
	}
	return Check(in), nil
}

// Properties whose meaning changes in v3, with what changes.
var v3Properties = []struct{ key, value, meaning string }{
	{"write.delete.mode", "merge-on-read", "row-level deletes are written as deletion vectors (Puffin), one per data file, merging the position deletes it already has"},
	{"write.update.mode", "merge-on-read", "updates write deletion vectors instead of position-delete files"},
	{"write.merge.mode", "merge-on-read", "MERGE writes deletion vectors instead of position-delete files"},
	{"write.delete.granularity", "", "is ignored: a deletion vector always covers exactly one data file"},
	{"write.delete.format.default", "", "applies to equality deletes only: position deletes are always Puffin deletion vectors"},
}

// Check judges whether in's table is ready for the upgrade to in.Target.
// It is deterministic: findings come in a fixed order.
func Check(in Input) Report {
	md, t := in.Metadata, in.Table
	r := Report{Table: t, FormatVersion: md.FormatVersion, Target: in.Target, SnapshotID: md.CurrentSnapshotID, Findings: []Finding{}}
	add := func(kind string, sev Severity, cmd, format string, args ...any) {
		r.Findings = append(r.Findings, Finding{Kind: kind, Severity: sev, Message: fmt.Sprintf(format, args...), Command: cmd})
	}
	for _, mf := range in.Manifests {
		if mf.Content == manifest.ManifestContentData {
			r.DataManifests++
		} else {
			r.DeleteManifests++
		}
	}
	r.UnassignedManifests = Unassigned(in.Manifests)
	for _, mf := range in.Manifests {
		if mf.AddedFilesCount == nil || mf.ExistingFilesCount == nil || mf.DeletedFilesCount == nil ||
			mf.AddedRowsCount == nil || mf.ExistingRowsCount == nil || mf.DeletedRowsCount == nil {
			r.ManifestsWithoutCounts++
		}
	}
	if in.Files != nil {
		for _, e := range in.Files.Data {
			r.DataFiles++
			r.DataRecords += e.Entry.DataFile.RecordCount
			if e.Entry.DataFile.FirstRowID == nil {
				r.RowsToAssign += e.Entry.DataFile.RecordCount
			}
		}
		for _, e := range in.Files.Deletes {
			df := &e.Entry.DataFile
			switch {
			case table.IsDV(df):
				r.DeletionVectors++
			case df.Content == manifest.ContentPositionDeletes:
				r.PositionDeleteFiles++
				r.PositionDeleteRecords += df.RecordCount
				if multiFile(df) {
					r.MultiFilePositionDeletes++
				}
			case df.Content == manifest.ContentEqualityDeletes:
				r.EqualityDeleteFiles++
				r.EqualityDeleteRecords += df.RecordCount
			}
		}
	}

	if md.FormatVersion >= in.Target {
		add("at-target", Info, "", "the table is at format v%d already: `icectl upgrade %s --to %d` changes nothing%s",
			md.FormatVersion, t, in.Target, map[bool]string{true: " but the row-id assignment below", false: ""}[in.Target >= 3 && r.UnassignedManifests > 0])
	}
	if in.Target >= 3 && r.PositionDeleteFiles > 0 {
		add(PositionDeleteDebt, Blocker, "icectl upgrade "+t+" --to 3 --merge-deletes",
			"%d position-delete %s (%d deleted rows, %d of the files covering several data files) would stay after the upgrade; every v3 writer must fold them into the deletion vector it writes for a data file, and one that does not (iceberg-go v0.7.0) brings deleted rows back; merge them into deletion vectors in the upgrade (or apply them first with icectl compact --delete-file-threshold 1)",
			r.PositionDeleteFiles, plural(r.PositionDeleteFiles, "file", "files"), r.PositionDeleteRecords, r.MultiFilePositionDeletes)
	}
	if in.Target >= 3 && r.EqualityDeleteFiles > 0 {
		add("equality-deletes", Warning, "icectl compact "+t,
			"%d equality-delete %s (%d keys): rows replaced through equality deletes get new row ids in v3 (no lineage through them); compacting applies them now",
			r.EqualityDeleteFiles, plural(r.EqualityDeleteFiles, "file", "files"), r.EqualityDeleteRecords)
	}
	if in.Target >= 3 && r.UnassignedManifests > 0 {
		add("first-v3-commit", Info, "icectl upgrade "+t+" --to 3 --assign-row-ids",
			"the first v3 commit gives row ids to %d data %s (%d data files, %d rows): it writes one manifest list naming the %d manifests again, reads the %d whose counts the list lacks, and rewrites no file",
			r.UnassignedManifests, plural(r.UnassignedManifests, "manifest", "manifests"), r.DataFiles, r.RowsToAssign,
			len(in.Manifests), r.ManifestsWithoutCounts)
	}
	if md.FormatVersion < in.Target {
		for _, f := range unsupported(md, in.Target) {
			add("unsupported", Blocker, "", "%s", f)
		}
	}
	if in.Target >= 3 && md.FormatVersion < 3 {
		for _, p := range v3Properties {
			v, ok := md.Properties[p.key]
			if !ok || (p.value != "" && v != p.value) {
				continue
			}
			cmd := ""
			if p.value == "" {
				cmd = "icectl table remove-properties " + t + " " + p.key
			}
			add("property", Warning, cmd, "%s=%s: in v3 %s", p.key, v, p.meaning)
		}
	}
	if md.FormatVersion < in.Target {
		add("engines", Info, "", "%s", engines(in.Target))
	}
	r.Ready = true
	for _, f := range r.Findings {
		if f.Severity == Blocker {
			r.Ready = false
		}
	}
	return r
}

// Unsettled returns the blockers of r that an upgrade leaves in place:
// all of them, but position-delete debt when mergeDeletes (the upgrade
// then merges the position deletes into deletion vectors).
func (r Report) Unsettled(mergeDeletes bool) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Severity != Blocker || (mergeDeletes && f.Kind == PositionDeleteDebt) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// multiFile reports whether a position-delete file may name several data
// files: no referenced_data_file and no equal file_path bounds.
func multiFile(df *manifest.DataFile) bool {
	if df.ReferencedDataFile != nil {
		return false
	}
	lo, hi := df.LowerBounds[spec.FieldIDFilePath], df.UpperBounds[spec.FieldIDFilePath]
	return lo == nil || hi == nil || !bytes.Equal(lo, hi)
}

// unsupported lists what in the metadata icectl or the target version
// cannot handle: unknown transforms, v3-only types in an older table,
// columns clashing with the row-lineage metadata columns.
func unsupported(md *spec.TableMetadata, target int) []string {
	var out []string
	for _, ps := range md.PartitionSpecs {
		for _, f := range ps.Fields {
			if f.Transform.Kind == spec.TransformUnknown {
				out = append(out, fmt.Sprintf("partition spec %d field %q uses transform %q, which icectl cannot evaluate", ps.ID, f.Name, f.Transform.Raw))
			}
		}
	}
	for _, so := range md.SortOrders {
		for _, f := range so.Fields {
			if f.Transform.Kind == spec.TransformUnknown {
				out = append(out, fmt.Sprintf("sort order %d uses transform %q, which icectl cannot evaluate", so.OrderID, f.Transform.Raw))
			}
		}
	}
	for _, s := range md.Schemas {
		spec.WalkFields(s.AsStruct(), func(f spec.NestedField) bool {
			switch f.Type.(type) {
			case spec.UnknownType, spec.VariantType, spec.GeometryType, spec.GeographyType, spec.TimestampNsType, spec.TimestampTzNsType:
				if md.FormatVersion < 3 {
					out = append(out, fmt.Sprintf("schema %d column %q has type %s, which needs format v3 and was written by a writer that ignored that", s.ID, f.Name, f.Type))
				}
			}
			if f.ID > spec.MaxUserFieldID {
				out = append(out, fmt.Sprintf("schema %d column %q has field id %d, reserved for metadata columns", s.ID, f.Name, f.ID))
			}
			return true
		})
		if target >= 3 {
			for _, name := range []string{spec.RowIDColumnName, spec.LastUpdatedSequenceNumberColumn} {
				if _, ok := s.FindFieldByName(name); ok {
					out = append(out, fmt.Sprintf("schema %d has a column named %s, which v3 reserves for row lineage; rename it first", s.ID, name))
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// engines is the checklist line for readers and writers.
func engines(target int) string {
	if target < 3 {
		return "checklist: every engine that reads or writes the table must support format v2 (sequence numbers, delete files) before the switch"
	}
	return strings.Join([]string{
		"checklist: every engine that reads or writes the table must support format v3 before the switch",
		"deletion vectors and row lineage (Iceberg Java/Spark and Trino with v3 support; PyIceberg cannot write v3;",
		"iceberg-go v0.7.0 writes DVs without the old position deletes)",
	}, " ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
