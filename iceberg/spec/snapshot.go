package spec

import (
	"encoding/json"
	"fmt"
)

// Snapshot operations (summary "operation").
const (
	OperationAppend    = "append"
	OperationReplace   = "replace"
	OperationOverwrite = "overwrite"
	OperationDelete    = "delete"
)

// Snapshot is one entry of the table metadata's "snapshots" list.
type Snapshot struct {
	SnapshotID       int64
	ParentSnapshotID *int64
	SequenceNumber   int64
	TimestampMS      int64
	ManifestList     string
	Manifests        []string // v1 only: manifest paths when there is no manifest list
	// Summary is nil when the snapshot has no summary object (v1).
	Summary    map[string]string
	SchemaID   *int
	FirstRowID *int64 // v3
	AddedRows  *int64 // v3
	KeyID      *string
	Extra      map[string]json.RawMessage
}

// Operation returns the summary's "operation", or "" when there is none.
func (s *Snapshot) Operation() string { return s.Summary["operation"] }

var snapshotKnownKeys = []string{
	"snapshot-id", "parent-snapshot-id", "sequence-number", "timestamp-ms", "summary",
	"manifest-list", "manifests", "schema-id", "first-row-id", "added-rows", "key-id",
}

func (s *Snapshot) UnmarshalJSON(data []byte) error {
	o, err := decodeObject(data, "snapshot")
	if err != nil {
		return err
	}
	var out Snapshot
	if out.SnapshotID, err = o.reqInt64("snapshot-id"); err != nil {
		return err
	}
	if out.ParentSnapshotID, err = o.optInt64("parent-snapshot-id"); err != nil {
		return err
	}
	seq, err := o.optInt64("sequence-number")
	if err != nil {
		return err
	}
	if seq != nil {
		out.SequenceNumber = *seq
	}
	if out.TimestampMS, err = o.reqInt64("timestamp-ms"); err != nil {
		return err
	}
	if out.Summary, err = o.optStringMap("summary"); err != nil {
		return err
	}
	ml, err := o.optString("manifest-list")
	if err != nil {
		return err
	}
	if ml != nil {
		out.ManifestList = *ml
	}
	if out.Manifests, err = o.optStringList("manifests"); err != nil {
		return err
	}
	if out.SchemaID, err = o.optInt("schema-id"); err != nil {
		return err
	}
	if out.FirstRowID, err = o.optInt64("first-row-id"); err != nil {
		return err
	}
	if out.AddedRows, err = o.optInt64("added-rows"); err != nil {
		return err
	}
	if out.KeyID, err = o.optString("key-id"); err != nil {
		return err
	}
	out.Extra = o.extra(snapshotKnownKeys...)
	*s = out
	return nil
}

// MarshalJSON writes the snapshot as a v2+ table does (sequence-number
// always present).
func (s Snapshot) MarshalJSON() ([]byte, error) { return s.marshal(2) }

// marshal writes the snapshot for a table of the given format version, in
// the key order of Java's SnapshotParser. v1 tables have no sequence
// numbers, so a zero one is left out there.
func (s Snapshot) marshal(formatVersion int) ([]byte, error) {
	w := newObjectWriter()
	w.field("snapshot-id", s.SnapshotID)
	if s.ParentSnapshotID != nil {
		w.field("parent-snapshot-id", *s.ParentSnapshotID)
	}
	if formatVersion > 1 || s.SequenceNumber != 0 {
		w.field("sequence-number", s.SequenceNumber)
	}
	w.field("timestamp-ms", s.TimestampMS)
	if s.Summary != nil {
		w.stringMap("summary", s.Summary, "operation")
	}
	if s.ManifestList != "" {
		w.field("manifest-list", s.ManifestList)
	}
	if s.Manifests != nil {
		w.field("manifests", s.Manifests)
	}
	if s.SchemaID != nil {
		w.field("schema-id", *s.SchemaID)
	}
	if s.FirstRowID != nil {
		w.field("first-row-id", *s.FirstRowID)
	}
	if s.AddedRows != nil {
		w.field("added-rows", *s.AddedRows)
	}
	if s.KeyID != nil {
		w.field("key-id", *s.KeyID)
	}
	w.extra(s.Extra)
	return w.bytes()
}

// Snapshot reference types and the branch every table has.
const (
	RefTypeBranch = "branch"
	RefTypeTag    = "tag"
	MainBranch    = "main"
)

// SnapshotRef is a named branch or tag.
type SnapshotRef struct {
	SnapshotID         int64
	Type               string // RefTypeBranch or RefTypeTag
	MinSnapshotsToKeep *int   // branches only
	MaxSnapshotAgeMS   *int64 // branches only
	MaxRefAgeMS        *int64 // never set on main
	Extra              map[string]json.RawMessage
}

var refKnownKeys = []string{"snapshot-id", "type", "min-snapshots-to-keep", "max-snapshot-age-ms", "max-ref-age-ms"}

func (r *SnapshotRef) UnmarshalJSON(data []byte) error {
	o, err := decodeObject(data, "snapshot ref")
	if err != nil {
		return err
	}
	var out SnapshotRef
	if out.SnapshotID, err = o.reqInt64("snapshot-id"); err != nil {
		return err
	}
	if out.Type, err = o.reqString("type"); err != nil {
		return err
	}
	if out.MinSnapshotsToKeep, err = o.optInt("min-snapshots-to-keep"); err != nil {
		return err
	}
	if out.MaxSnapshotAgeMS, err = o.optInt64("max-snapshot-age-ms"); err != nil {
		return err
	}
	if out.MaxRefAgeMS, err = o.optInt64("max-ref-age-ms"); err != nil {
		return err
	}
	out.Extra = o.extra(refKnownKeys...)
	*r = out
	return nil
}

func (r SnapshotRef) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.field("snapshot-id", r.SnapshotID)
	w.field("type", r.Type)
	if r.MinSnapshotsToKeep != nil {
		w.field("min-snapshots-to-keep", *r.MinSnapshotsToKeep)
	}
	if r.MaxSnapshotAgeMS != nil {
		w.field("max-snapshot-age-ms", *r.MaxSnapshotAgeMS)
	}
	if r.MaxRefAgeMS != nil {
		w.field("max-ref-age-ms", *r.MaxRefAgeMS)
	}
	w.extra(r.Extra)
	return w.bytes()
}

// validate applies the rules of Java's SnapshotRef builder.
func (r SnapshotRef) validate(name string) error {
	switch r.Type {
	case RefTypeBranch, RefTypeTag:
	default:
		return fmt.Errorf("ref %q: invalid type %q (want %q or %q)", name, r.Type, RefTypeBranch, RefTypeTag)
	}
	if r.Type == RefTypeTag && (r.MinSnapshotsToKeep != nil || r.MaxSnapshotAgeMS != nil) {
		return fmt.Errorf("ref %q: tags do not support min-snapshots-to-keep or max-snapshot-age-ms", name)
	}
	if r.MinSnapshotsToKeep != nil && *r.MinSnapshotsToKeep <= 0 {
		return fmt.Errorf("ref %q: min-snapshots-to-keep must be greater than 0, got %d", name, *r.MinSnapshotsToKeep)
	}
	if r.MaxSnapshotAgeMS != nil && *r.MaxSnapshotAgeMS <= 0 {
		return fmt.Errorf("ref %q: max-snapshot-age-ms must be greater than 0, got %d", name, *r.MaxSnapshotAgeMS)
	}
	if r.MaxRefAgeMS != nil && *r.MaxRefAgeMS <= 0 {
		return fmt.Errorf("ref %q: max-ref-age-ms must be greater than 0, got %d", name, *r.MaxRefAgeMS)
	}
	return nil
}

// SnapshotLogEntry records when the current snapshot changed.
type SnapshotLogEntry struct {
	TimestampMS int64
	SnapshotID  int64
	Extra       map[string]json.RawMessage
}

func (e *SnapshotLogEntry) UnmarshalJSON(data []byte) error {
	o, err := decodeObject(data, "snapshot-log entry")
	if err != nil {
		return err
	}
	var out SnapshotLogEntry
	if out.TimestampMS, err = o.reqInt64("timestamp-ms"); err != nil {
		return err
	}
	if out.SnapshotID, err = o.reqInt64("snapshot-id"); err != nil {
		return err
	}
	out.Extra = o.extra("timestamp-ms", "snapshot-id")
	*e = out
	return nil
}

func (e SnapshotLogEntry) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.field("timestamp-ms", e.TimestampMS)
	w.field("snapshot-id", e.SnapshotID)
	w.extra(e.Extra)
	return w.bytes()
}

// MetadataLogEntry records a previous metadata file.
type MetadataLogEntry struct {
	TimestampMS  int64
	MetadataFile string
	Extra        map[string]json.RawMessage
}

func (e *MetadataLogEntry) UnmarshalJSON(data []byte) error {
	o, err := decodeObject(data, "metadata-log entry")
	if err != nil {
		return err
	}
	var out MetadataLogEntry
	if out.TimestampMS, err = o.reqInt64("timestamp-ms"); err != nil {
		return err
	}
	if out.MetadataFile, err = o.reqString("metadata-file"); err != nil {
		return err
	}
	out.Extra = o.extra("timestamp-ms", "metadata-file")
	*e = out
	return nil
}

func (e MetadataLogEntry) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.field("timestamp-ms", e.TimestampMS)
	w.field("metadata-file", e.MetadataFile)
	w.extra(e.Extra)
	return w.bytes()
}
