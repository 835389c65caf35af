package spec

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Requirements are written in the REST spec's key order (Java's
// UpdateRequirementParser), "type" first.

func (r AssertCreate) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.field("type", r.Type())
	return w.bytes()
}

func (r AssertTableUUID) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.field("type", r.Type())
	w.field("uuid", r.UUID)
	return w.bytes()
}

// MarshalJSON writes "snapshot-id": null for a nil SnapshotID: the REST
// spec makes the key required and nullable.
func (r AssertRefSnapshotID) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.field("type", r.Type())
	w.field("ref", r.Ref)
	if r.SnapshotID != nil {
		w.field("snapshot-id", *r.SnapshotID)
	} else {
		w.rawField("snapshot-id", []byte("null"))
	}
	return w.bytes()
}

func (r AssertLastAssignedFieldID) MarshalJSON() ([]byte, error) {
	return intRequirementJSON(r.Type(), "last-assigned-field-id", r.ID)
}

func (r AssertCurrentSchemaID) MarshalJSON() ([]byte, error) {
	return intRequirementJSON(r.Type(), "current-schema-id", r.ID)
}

func (r AssertLastAssignedPartitionID) MarshalJSON() ([]byte, error) {
	return intRequirementJSON(r.Type(), "last-assigned-partition-id", r.ID)
}

func (r AssertDefaultSpecID) MarshalJSON() ([]byte, error) {
	return intRequirementJSON(r.Type(), "default-spec-id", r.ID)
}

func (r AssertDefaultSortOrderID) MarshalJSON() ([]byte, error) {
	return intRequirementJSON(r.Type(), "default-sort-order-id", r.ID)
}

func intRequirementJSON(typ, key string, v int) ([]byte, error) {
	w := newObjectWriter()
	w.field("type", typ)
	w.field(key, v)
	return w.bytes()
}

// ParseRequirement decodes one REST requirement object. An unknown "type"
// is an error, as a REST server must answer 400 to it.
func ParseRequirement(data []byte) (Requirement, error) {
	r, err := parseRequirement(data)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func parseRequirement(data []byte) (Requirement, error) {
	o, err := decodeObject(data, "table requirement")
	if err != nil {
		return nil, err
	}
	typ, err := o.reqString("type")
	if err != nil {
		return nil, err
	}
	o.what = "requirement " + typ
	switch typ {
	case RequirementAssertCreate:
		return AssertCreate{}, nil
	case RequirementAssertTableUUID:
		u, err := o.reqString("uuid")
		return AssertTableUUID{UUID: u}, err
	case RequirementAssertRefSnapshotID:
		ref, err := o.reqString("ref")
		if err != nil {
			return nil, err
		}
		// The key is required even though its value may be null: a
		// missing key is more likely a bug than "must not exist".
		if _, ok := o.m["snapshot-id"]; !ok {
			return nil, o.missing("long", "snapshot-id")
		}
		id, err := o.optInt64("snapshot-id")
		if err != nil {
			return nil, err
		}
		return AssertRefSnapshotID{Ref: ref, SnapshotID: id}, nil
	case RequirementAssertLastAssignedFieldID:
		id, err := o.reqInt("last-assigned-field-id")
		return AssertLastAssignedFieldID{ID: id}, err
	case RequirementAssertCurrentSchemaID:
		id, err := o.reqInt("current-schema-id")
		return AssertCurrentSchemaID{ID: id}, err
	case RequirementAssertLastAssignedPartitionID:
		id, err := o.reqInt("last-assigned-partition-id")
		return AssertLastAssignedPartitionID{ID: id}, err
	case RequirementAssertDefaultSpecID:
		id, err := o.reqInt("default-spec-id")
		return AssertDefaultSpecID{ID: id}, err
	case RequirementAssertDefaultSortOrderID:
		id, err := o.reqInt("default-sort-order-id")
		return AssertDefaultSortOrderID{ID: id}, err
	default:
		return nil, fmt.Errorf("unknown table requirement type %q", typ)
	}
}

// MarshalRequirements writes reqs as a JSON array.
func MarshalRequirements(reqs []Requirement) ([]byte, error) {
	elems := make([]json.RawMessage, len(reqs))
	for i, r := range reqs {
		if r == nil {
			return nil, fmt.Errorf("write requirements[%d]: nil requirement", i)
		}
		b, err := marshalJSON(r)
		if err != nil {
			return nil, fmt.Errorf("write requirements[%d] (%s): %w", i, r.Type(), err)
		}
		elems[i] = b
	}
	return marshalJSON(elems)
}

// UnmarshalRequirements reads a JSON array of REST requirements.
func UnmarshalRequirements(data []byte) ([]Requirement, error) {
	elems, err := decodeArray(data, "requirements")
	if err != nil {
		return nil, err
	}
	out := make([]Requirement, len(elems))
	for i, e := range elems {
		if out[i], err = ParseRequirement(e); err != nil {
			return nil, fmt.Errorf("requirements[%d]: %w", i, err)
		}
	}
	return out, nil
}

// decodeArray splits a JSON array into its elements; null is not an array.
func decodeArray(data []byte, what string) ([]json.RawMessage, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(data, &elems); err != nil {
		return nil, fmt.Errorf("cannot parse %s: %w", what, err)
	}
	if elems == nil {
		return nil, errors.New("cannot parse " + what + ": not an array")
	}
	return elems, nil
}
