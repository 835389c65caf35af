package spec

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
)

// TransformKind names a partition or sort transform.
type TransformKind int

const (
	TransformUnknown TransformKind = iota // a transform this version does not know; kept verbatim
	TransformIdentity
	TransformBucket
	TransformTruncate
	TransformYear
	TransformMonth
	TransformDay
	TransformHour
	TransformVoid
)

// Transform is a partition or sort transform. Unknown transforms keep their
// original spelling in Raw so they round-trip; readers must still honour them
// in partition equality, and writers must not commit data with them.
type Transform struct {
	Kind  TransformKind
	Param int    // N for bucket[N], W for truncate[W]
	Raw   string // original text, for unknown transforms
}

var (
	bucketRe   = regexp.MustCompile(`^bucket\[\s*(\d+)\s*\]$`)
	truncateRe = regexp.MustCompile(`^truncate\[\s*(\d+)\s*\]$`)
)

// ParseTransform parses a transform's JSON spelling. Unknown names are not an
// error: they are returned with Kind TransformUnknown.
func ParseTransform(s string) Transform {
	switch s {
	case "identity":
		return Transform{Kind: TransformIdentity}
	case "year":
		return Transform{Kind: TransformYear}
	case "month":
		return Transform{Kind: TransformMonth}
	case "day":
		return Transform{Kind: TransformDay}
	case "hour":
		return Transform{Kind: TransformHour}
	case "void":
		return Transform{Kind: TransformVoid}
	}
	if m := bucketRe.FindStringSubmatch(s); m != nil {
		n, err := strconv.Atoi(m[1])
		if err == nil && n > 0 {
			return Transform{Kind: TransformBucket, Param: n}
		}
	}
	if m := truncateRe.FindStringSubmatch(s); m != nil {
		n, err := strconv.Atoi(m[1])
		if err == nil && n > 0 {
			return Transform{Kind: TransformTruncate, Param: n}
		}
	}
	return Transform{Kind: TransformUnknown, Raw: s}
}

func (t Transform) String() string {
	switch t.Kind {
	case TransformIdentity:
		return "identity"
	case TransformBucket:
		return fmt.Sprintf("bucket[%d]", t.Param)
	case TransformTruncate:
		return fmt.Sprintf("truncate[%d]", t.Param)
	case TransformYear:
		return "year"
	case TransformMonth:
		return "month"
	case TransformDay:
		return "day"
	case TransformHour:
		return "hour"
	case TransformVoid:
		return "void"
	}
	return t.Raw
}

func (t Transform) MarshalJSON() ([]byte, error) { return marshalJSON(t.String()) }

func (t *Transform) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("cannot parse transform: %w", err)
	}
	*t = ParseTransform(s)
	return nil
}

// ResultType is the type of the transform's output for a source type. For an
// unknown transform it returns nil: the value type then comes from the file
// that stores it (the manifest's Avro schema).
func (t Transform) ResultType(source Type) Type {
	switch t.Kind {
	case TransformIdentity, TransformTruncate, TransformVoid:
		return source
	case TransformBucket, TransformYear, TransformMonth, TransformHour:
		return IntType{}
	case TransformDay:
		// Java types day as date; its values are ints either way.
		return DateType{}
	}
	return nil
}

// PartitionField is one field of a partition spec. One-argument transforms
// use SourceID; multi-argument transforms (v3) use SourceIDs.
type PartitionField struct {
	SourceID  int
	SourceIDs []int
	FieldID   int
	Name      string
	Transform Transform
	Extra     map[string]json.RawMessage
}

type partitionFieldJSON struct {
	Name      string    `json:"name"`
	Transform Transform `json:"transform"`
	SourceID  *int      `json:"source-id,omitempty"`
	SourceIDs []int     `json:"source-ids,omitempty"`
	FieldID   *int      `json:"field-id,omitempty"`
}

var partitionFieldKnownKeys = []string{"name", "transform", "source-id", "source-ids", "field-id"}

func (f PartitionField) MarshalJSON() ([]byte, error) {
	pj := partitionFieldJSON{Name: f.Name, Transform: f.Transform}
	if len(f.SourceIDs) > 0 {
		pj.SourceIDs = f.SourceIDs
	} else {
		sid := f.SourceID
		pj.SourceID = &sid
	}
	fid := f.FieldID
	pj.FieldID = &fid
	b, err := marshalJSON(pj)
	if err != nil {
		return nil, err
	}
	return mergeExtra(b, f.Extra)
}

func (f *PartitionField) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("cannot parse partition field: %w", err)
	}
	var pj partitionFieldJSON
	if err := json.Unmarshal(data, &pj); err != nil {
		return fmt.Errorf("cannot parse partition field: %w", err)
	}
	if pj.SourceID == nil && len(pj.SourceIDs) == 0 {
		return fmt.Errorf("cannot parse partition field %q: missing source-id", pj.Name)
	}
	*f = PartitionField{Name: pj.Name, Transform: pj.Transform, SourceIDs: pj.SourceIDs, Extra: extraKeys(raw, partitionFieldKnownKeys)}
	if pj.SourceID != nil {
		f.SourceID = *pj.SourceID
	} else if len(pj.SourceIDs) == 1 {
		f.SourceID = pj.SourceIDs[0]
	}
	if pj.FieldID != nil {
		f.FieldID = *pj.FieldID
	} else {
		f.FieldID = -1 // v1: assigned by the metadata parser
	}
	return nil
}

// PartitionSpec is a partition spec with its id.
type PartitionSpec struct {
	ID     int
	Fields []PartitionField
	Extra  map[string]json.RawMessage
}

// IsUnpartitioned reports whether the spec has no fields, or only void ones.
func (p *PartitionSpec) IsUnpartitioned() bool {
	for _, f := range p.Fields {
		if f.Transform.Kind != TransformVoid {
			return false
		}
	}
	return true
}

// PartitionType returns the struct type of partition tuples under schema.
// Partition fields are always optional. A field whose source column is gone
// from the schema, or whose transform is unknown, gets a nil Type; callers
// that read stored tuples take the type from the file instead.
func (p *PartitionSpec) PartitionType(schema *Schema) *StructType {
	fields := make([]NestedField, 0, len(p.Fields))
	for _, pf := range p.Fields {
		var rt Type
		if src, ok := schema.FindField(pf.SourceID); ok && len(pf.SourceIDs) <= 1 {
			rt = pf.Transform.ResultType(src.Type)
		}
		fields = append(fields, NestedField{ID: pf.FieldID, Name: pf.Name, Type: rt})
	}
	return &StructType{Fields: fields}
}

type partitionSpecJSON struct {
	SpecID int              `json:"spec-id"`
	Fields []PartitionField `json:"fields"`
}

var partitionSpecKnownKeys = []string{"spec-id", "fields"}

func (p PartitionSpec) MarshalJSON() ([]byte, error) {
	fields := p.Fields
	if fields == nil {
		fields = []PartitionField{}
	}
	b, err := marshalJSON(partitionSpecJSON{SpecID: p.ID, Fields: fields})
	if err != nil {
		return nil, err
	}
	return mergeExtra(b, p.Extra)
}

func (p *PartitionSpec) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("cannot parse partition spec: %w", err)
	}
	var pj partitionSpecJSON
	if err := json.Unmarshal(data, &pj); err != nil {
		return fmt.Errorf("cannot parse partition spec: %w", err)
	}
	*p = PartitionSpec{ID: pj.SpecID, Fields: pj.Fields, Extra: extraKeys(raw, partitionSpecKnownKeys)}
	return nil
}

// SortField is one field of a sort order.
type SortField struct {
	SourceID  int
	SourceIDs []int
	Transform Transform
	Direction string // "asc" or "desc"
	NullOrder string // "nulls-first" or "nulls-last"
	Extra     map[string]json.RawMessage
}

type sortFieldJSON struct {
	Transform Transform `json:"transform"`
	SourceID  *int      `json:"source-id,omitempty"`
	SourceIDs []int     `json:"source-ids,omitempty"`
	Direction string    `json:"direction"`
	NullOrder string    `json:"null-order"`
}

var sortFieldKnownKeys = []string{"transform", "source-id", "source-ids", "direction", "null-order"}

func (f SortField) MarshalJSON() ([]byte, error) {
	sj := sortFieldJSON{Transform: f.Transform, Direction: f.Direction, NullOrder: f.NullOrder}
	if len(f.SourceIDs) > 0 {
		sj.SourceIDs = f.SourceIDs
	} else {
		sid := f.SourceID
		sj.SourceID = &sid
	}
	b, err := marshalJSON(sj)
	if err != nil {
		return nil, err
	}
	return mergeExtra(b, f.Extra)
}

func (f *SortField) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("cannot parse sort field: %w", err)
	}
	var sj sortFieldJSON
	if err := json.Unmarshal(data, &sj); err != nil {
		return fmt.Errorf("cannot parse sort field: %w", err)
	}
	if sj.SourceID == nil && len(sj.SourceIDs) == 0 {
		return fmt.Errorf("cannot parse sort field: missing source-id")
	}
	*f = SortField{Transform: sj.Transform, SourceIDs: sj.SourceIDs, Direction: sj.Direction, NullOrder: sj.NullOrder, Extra: extraKeys(raw, sortFieldKnownKeys)}
	if sj.SourceID != nil {
		f.SourceID = *sj.SourceID
	} else if len(sj.SourceIDs) == 1 {
		f.SourceID = sj.SourceIDs[0]
	}
	return nil
}

// SortOrder is a sort order with its id; order 0 is unsorted.
type SortOrder struct {
	OrderID int
	Fields  []SortField
	Extra   map[string]json.RawMessage
}

type sortOrderJSON struct {
	OrderID int         `json:"order-id"`
	Fields  []SortField `json:"fields"`
}

var sortOrderKnownKeys = []string{"order-id", "fields"}

func (o SortOrder) MarshalJSON() ([]byte, error) {
	fields := o.Fields
	if fields == nil {
		fields = []SortField{}
	}
	b, err := marshalJSON(sortOrderJSON{OrderID: o.OrderID, Fields: fields})
	if err != nil {
		return nil, err
	}
	return mergeExtra(b, o.Extra)
}

func (o *SortOrder) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("cannot parse sort order: %w", err)
	}
	var sj sortOrderJSON
	if err := json.Unmarshal(data, &sj); err != nil {
		return fmt.Errorf("cannot parse sort order: %w", err)
	}
	*o = SortOrder{OrderID: sj.OrderID, Fields: sj.Fields, Extra: extraKeys(raw, sortOrderKnownKeys)}
	return nil
}
