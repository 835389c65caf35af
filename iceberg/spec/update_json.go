package spec

import (
	"encoding/json"
	"fmt"
)

// Updates are written as Java's MetadataUpdateParser writes them: "action"
// first, then the fields in its order.

func updateWriter(u Update) *objectWriter {
	w := newObjectWriter()
	w.field("action", u.Action())
	return w
}

func (u AssignUUID) MarshalJSON() ([]byte, error) {
	w := updateWriter(u)
	w.field("uuid", u.UUID)
	return w.bytes()
}

func (u UpgradeFormatVersion) MarshalJSON() ([]byte, error) {
	w := updateWriter(u)
	w.field("format-version", u.FormatVersion)
	return w.bytes()
}

// MarshalJSON leaves out the deprecated "last-column-id": the REST spec
// says servers derive it from the schema.
func (u AddSchema) MarshalJSON() ([]byte, error) {
	w := updateWriter(u)
	w.field("schema", u.Schema)
	return w.bytes()
}

func (u SetCurrentSchema) MarshalJSON() ([]byte, error) {
	w := updateWriter(u)
	w.field("schema-id", u.SchemaID)
	return w.bytes()
}

func (u AddSpec) MarshalJSON() ([]byte, error) {
	w := updateWriter(u)
	w.field("spec", u.Spec)
	return w.bytes()
}

func (u SetDefaultSpec) MarshalJSON() ([]byte, error) {
	w := updateWriter(u)
	w.field("spec-id", u.SpecID)
	return w.bytes()
}

func (u AddSortOrder) MarshalJSON() ([]byte, error) {
	w := updateWriter(u)
	w.field("sort-order", u.SortOrder)
	return w.bytes()
}

func (u SetDefaultSortOrder) MarshalJSON() ([]byte, error) {
	w := updateWriter(u)
	w.field("sort-order-id", u.SortOrderID)
	return w.bytes()
}

func (u AddSnapshot) MarshalJSON() ([]byte, error) {
	w := updateWriter(u)
	w.field("snapshot", u.Snapshot)
	return w.bytes()
}

// MarshalJSON flattens the ref into the update object, as the REST spec's
// SetSnapshotRefUpdate does.
func (u SetSnapshotRef) MarshalJSON() ([]byte, error) {
	w := updateWriter(u)
	w.field("ref-name", u.RefName)
	w.field("snapshot-id", u.Ref.SnapshotID)
	w.field("type", u.Ref.Type)
	if u.Ref.MinSnapshotsToKeep != nil {
		w.field("min-snapshots-to-keep", *u.Ref.MinSnapshotsToKeep)
	}
	if u.Ref.MaxSnapshotAgeMS != nil {
		w.field("max-snapshot-age-ms", *u.Ref.MaxSnapshotAgeMS)
	}
	if u.Ref.MaxRefAgeMS != nil {
		w.field("max-ref-age-ms", *u.Ref.MaxRefAgeMS)
	}
	w.extra(u.Ref.Extra)
	return w.bytes()
}

func (u RemoveSnapshots) MarshalJSON() ([]byte, error) {
	w := updateWriter(u)
	w.field("snapshot-ids", nonNil(u.SnapshotIDs))
	return w.bytes()
}

func (u RemoveSnapshotRef) MarshalJSON() ([]byte, error) {
	w := updateWriter(u)
	w.field("ref-name", u.RefName)
	return w.bytes()
}

func (u SetLocation) MarshalJSON() ([]byte, error) {
	w := updateWriter(u)
	w.field("location", u.Location)
	return w.bytes()
}

func (u SetProperties) MarshalJSON() ([]byte, error) {
	w := updateWriter(u)
	m := u.Updates
	if m == nil {
		m = map[string]string{}
	}
	w.stringMap("updates", m, "")
	return w.bytes()
}

func (u RemoveProperties) MarshalJSON() ([]byte, error) {
	w := updateWriter(u)
	w.field("removals", nonNil(u.Removals))
	return w.bytes()
}

// MarshalJSON also writes the deprecated top-level "snapshot-id", as Java
// does, because older REST servers require it.
func (u SetStatistics) MarshalJSON() ([]byte, error) {
	w := updateWriter(u)
	w.field("snapshot-id", u.Statistics.SnapshotID)
	w.field("statistics", u.Statistics)
	return w.bytes()
}

func (u RemoveStatistics) MarshalJSON() ([]byte, error) {
	w := updateWriter(u)
	w.field("snapshot-id", u.SnapshotID)
	return w.bytes()
}

func (u SetPartitionStatistics) MarshalJSON() ([]byte, error) {
	w := updateWriter(u)
	w.field("partition-statistics", u.PartitionStatistics)
	return w.bytes()
}

func (u RemovePartitionStatistics) MarshalJSON() ([]byte, error) {
	w := updateWriter(u)
	w.field("snapshot-id", u.SnapshotID)
	return w.bytes()
}

func (u RemovePartitionSpecs) MarshalJSON() ([]byte, error) {
	w := updateWriter(u)
	w.field("spec-ids", nonNilInts(u.SpecIDs))
	return w.bytes()
}

func (u RemoveSchemas) MarshalJSON() ([]byte, error) {
	w := updateWriter(u)
	w.field("schema-ids", nonNilInts(u.SchemaIDs))
	return w.bytes()
}

// nonNilInts writes an empty list as [], not null.
func nonNilInts(l []int) []int {
	if l == nil {
		return []int{}
	}
	return l
}

// unsupportedActions are REST actions icectl knows of but does not apply;
// they get a clearer error than an unknown action.
var unsupportedActions = map[string]bool{
	"add-encryption-key":       true,
	"remove-encryption-key":    true,
	"add-view-version":         true,
	"set-current-view-version": true,
}

// ParseUpdate decodes one REST update object. An unknown "action" is an
// error, as a REST server must answer 400 to it.
func ParseUpdate(data []byte) (Update, error) {
	u, err := parseUpdate(data)
	if err != nil {
		return nil, err
	}
	return u, nil
}

func parseUpdate(data []byte) (Update, error) {
	o, err := decodeObject(data, "table update")
	if err != nil {
		return nil, err
	}
	action, err := o.reqString("action")
	if err != nil {
		return nil, err
	}
	o.what = "update " + action
	switch action {
	case ActionAssignUUID:
		u, err := o.reqString("uuid")
		return AssignUUID{UUID: u}, err
	case ActionUpgradeFormatVersion:
		v, err := o.reqInt("format-version")
		return UpgradeFormatVersion{FormatVersion: v}, err
	case ActionAddSchema:
		var s Schema
		err := o.object("schema", &s)
		return AddSchema{Schema: s}, err
	case ActionSetCurrentSchema:
		id, err := o.reqInt("schema-id")
		return SetCurrentSchema{SchemaID: id}, err
	case ActionAddSpec:
		var s PartitionSpec
		err := o.object("spec", &s)
		return AddSpec{Spec: s}, err
	case ActionSetDefaultSpec:
		id, err := o.reqInt("spec-id")
		return SetDefaultSpec{SpecID: id}, err
	case ActionAddSortOrder:
		var s SortOrder
		err := o.object("sort-order", &s)
		return AddSortOrder{SortOrder: s}, err
	case ActionSetDefaultSortOrder:
		id, err := o.reqInt("sort-order-id")
		return SetDefaultSortOrder{SortOrderID: id}, err
	case ActionAddSnapshot:
		var s Snapshot
		err := o.object("snapshot", &s)
		return AddSnapshot{Snapshot: s}, err
	case ActionSetSnapshotRef:
		return parseSetSnapshotRef(o, data)
	case ActionRemoveSnapshots:
		ids, err := o.reqInt64List("snapshot-ids")
		return RemoveSnapshots{SnapshotIDs: ids}, err
	case ActionRemoveSnapshotRef:
		name, err := o.reqString("ref-name")
		return RemoveSnapshotRef{RefName: name}, err
	case ActionSetLocation:
		loc, err := o.reqString("location")
		return SetLocation{Location: loc}, err
	case ActionSetProperties:
		// Java first wrote "updated"; it still reads both, and so do we.
		key := "updates"
		if !o.has(key) && o.has("updated") {
			key = "updated"
		}
		m, err := o.optStringMap(key)
		if err == nil && m == nil {
			err = o.missing("map", "updates")
		}
		return SetProperties{Updates: m}, err
	case ActionRemoveProperties:
		key := "removals"
		if !o.has(key) && o.has("removed") {
			key = "removed"
		}
		l, err := o.optStringList(key)
		if err == nil && l == nil {
			err = o.missing("list", "removals")
		}
		return RemoveProperties{Removals: l}, err
	case ActionSetStatistics:
		var s StatisticsFile
		if err := o.object("statistics", &s); err != nil {
			return nil, err
		}
		id, err := o.optInt64("snapshot-id")
		if err != nil {
			return nil, err
		}
		if id != nil && *id != s.SnapshotID {
			return nil, fmt.Errorf("cannot parse %s: snapshot-id %d does not match statistics snapshot-id %d", o.what, *id, s.SnapshotID)
		}
		return SetStatistics{Statistics: s}, nil
	case ActionRemoveStatistics:
		id, err := o.reqInt64("snapshot-id")
		return RemoveStatistics{SnapshotID: id}, err
	case ActionSetPartitionStatistics:
		var s PartitionStatisticsFile
		err := o.object("partition-statistics", &s)
		return SetPartitionStatistics{PartitionStatistics: s}, err
	case ActionRemovePartitionStatistics:
		id, err := o.reqInt64("snapshot-id")
		return RemovePartitionStatistics{SnapshotID: id}, err
	case ActionRemovePartitionSpecs:
		ids, err := o.reqIntList("spec-ids")
		return RemovePartitionSpecs{SpecIDs: ids}, err
	case ActionRemoveSchemas:
		ids, err := o.reqIntList("schema-ids")
		return RemoveSchemas{SchemaIDs: ids}, err
	}
	if unsupportedActions[action] {
		return nil, fmt.Errorf("table update action %q is not supported by icectl", action)
	}
	return nil, fmt.Errorf("unknown table update action %q", action)
}

func parseSetSnapshotRef(o jsonObject, data []byte) (Update, error) {
	name, err := o.reqString("ref-name")
	if err != nil {
		return nil, err
	}
	var ref SnapshotRef
	if err := json.Unmarshal(data, &ref); err != nil {
		return nil, fmt.Errorf("cannot parse %s: %w", o.what, err)
	}
	delete(ref.Extra, "action")
	delete(ref.Extra, "ref-name")
	if len(ref.Extra) == 0 {
		ref.Extra = nil
	}
	return SetSnapshotRef{RefName: name, Ref: ref}, nil
}

// object decodes the required JSON object under key into dst.
func (o jsonObject) object(key string, dst any) error {
	v, ok := o.raw(key)
	if !ok {
		return o.missing("object", key)
	}
	if err := json.Unmarshal(v, dst); err != nil {
		return fmt.Errorf("cannot parse %s: %q: %w", o.what, key, err)
	}
	return nil
}

func (o jsonObject) reqIntList(key string) ([]int, error) {
	if !o.has(key) {
		return nil, o.missing("list", key)
	}
	return o.optIntList(key)
}

func (o jsonObject) reqInt64List(key string) ([]int64, error) {
	v, ok := o.raw(key)
	if !ok {
		return nil, o.missing("list", key)
	}
	l := []int64{}
	if err := o.decode(key, "list of longs", v, &l); err != nil {
		return nil, err
	}
	return l, nil
}

// MarshalUpdates writes updates as a JSON array.
func MarshalUpdates(updates []Update) ([]byte, error) {
	elems := make([]json.RawMessage, len(updates))
	for i, u := range updates {
		if u == nil {
			return nil, fmt.Errorf("write updates[%d]: nil update", i)
		}
		b, err := marshalJSON(u)
		if err != nil {
			return nil, fmt.Errorf("write updates[%d] (%s): %w", i, u.Action(), err)
		}
		elems[i] = b
	}
	return marshalJSON(elems)
}

// UnmarshalUpdates reads a JSON array of REST updates.
func UnmarshalUpdates(data []byte) ([]Update, error) {
	elems, err := decodeArray(data, "updates")
	if err != nil {
		return nil, err
	}
	out := make([]Update, len(elems))
	for i, e := range elems {
		if out[i], err = ParseUpdate(e); err != nil {
			return nil, fmt.Errorf("updates[%d]: %w", i, err)
		}
	}
	return out, nil
}
