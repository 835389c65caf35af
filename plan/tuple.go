package plan

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/icectl/icectl/iceberg/spec"
)

// Tuple is a partition tuple that survives a JSON round trip exactly: each
// value is written with its Go type ({"type":"long","value":5}).
type Tuple []any

type typedValue struct {
	Type  string          `json:"type"`
	Scale *int            `json:"scale,omitempty"`
	Value json.RawMessage `json:"value"`
}

func (t Tuple) MarshalJSON() ([]byte, error) {
	out := make([]typedValue, 0, len(t))
	for i, v := range t {
		tv, err := encodeTyped(v)
		if err != nil {
			return nil, fmt.Errorf("partition value %d: %w", i, err)
		}
		out = append(out, tv)
	}
	return json.Marshal(out)
}

func encodeTyped(v any) (typedValue, error) {
	raw := func(x any) json.RawMessage { b, _ := json.Marshal(x); return b }
	switch x := v.(type) {
	case nil:
		return typedValue{Type: "null", Value: json.RawMessage("null")}, nil
	case bool:
		return typedValue{Type: "boolean", Value: raw(x)}, nil
	case int32:
		return typedValue{Type: "int", Value: raw(x)}, nil
	case int64:
		return typedValue{Type: "long", Value: raw(x)}, nil
	case float32:
		// Strings keep NaN, infinities and -0 exact.
		return typedValue{Type: "float", Value: raw(strconv.FormatFloat(float64(x), 'g', -1, 32))}, nil
	case float64:
		return typedValue{Type: "double", Value: raw(strconv.FormatFloat(x, 'g', -1, 64))}, nil
	case string:
		return typedValue{Type: "string", Value: raw(x)}, nil
	case []byte:
		return typedValue{Type: "binary", Value: raw(base64.StdEncoding.EncodeToString(x))}, nil
	case [16]byte:
		return typedValue{Type: "uuid", Value: raw(formatUUID(x))}, nil
	case spec.Decimal:
		if x.Unscaled == nil {
			return typedValue{}, fmt.Errorf("decimal without a value")
		}
		s := x.Scale
		return typedValue{Type: "decimal", Scale: &s, Value: raw(x.Unscaled.String())}, nil
	}
	return typedValue{}, fmt.Errorf("unsupported partition value type %T", v)
}

func (t *Tuple) UnmarshalJSON(b []byte) error {
	var tvs []typedValue
	if err := json.Unmarshal(b, &tvs); err != nil {
		return fmt.Errorf("partition tuple: %w", err)
	}
	out := make(Tuple, 0, len(tvs))
	for i, tv := range tvs {
		v, err := decodeTyped(tv)
		if err != nil {
			return fmt.Errorf("partition tuple value %d: %w", i, err)
		}
		out = append(out, v)
	}
	*t = out
	return nil
}

func decodeTyped(tv typedValue) (any, error) {
	var s string
	str := func() error { return json.Unmarshal(tv.Value, &s) }
	switch tv.Type {
	case "null":
		return nil, nil
	case "boolean":
		var x bool
		err := json.Unmarshal(tv.Value, &x)
		return x, err
	case "int":
		var x int32
		err := json.Unmarshal(tv.Value, &x)
		return x, err
	case "long":
		var x int64
		err := json.Unmarshal(tv.Value, &x)
		return x, err
	case "float":
		if err := str(); err != nil {
			return nil, err
		}
		f, err := strconv.ParseFloat(s, 32)
		return float32(f), err
	case "double":
		if err := str(); err != nil {
			return nil, err
		}
		return strconv.ParseFloat(s, 64)
	case "string":
		err := str()
		return s, err
	case "binary":
		if err := str(); err != nil {
			return nil, err
		}
		return base64.StdEncoding.DecodeString(s)
	case "uuid":
		if err := str(); err != nil {
			return nil, err
		}
		h, err := hex.DecodeString(strings.ReplaceAll(s, "-", ""))
		if err != nil || len(h) != 16 {
			return nil, fmt.Errorf("bad uuid %q", s)
		}
		return [16]byte(h), nil
	case "decimal":
		if err := str(); err != nil {
			return nil, err
		}
		if tv.Scale == nil {
			return nil, fmt.Errorf("decimal without scale")
		}
		u, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, fmt.Errorf("bad decimal %q", s)
		}
		return spec.Decimal{Unscaled: u, Scale: *tv.Scale}, nil
	}
	return nil, fmt.Errorf("unknown value type %q", tv.Type)
}

func formatUUID(u [16]byte) string {
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// humanPartition renders a tuple for people: dates and times as text by
// transform and source type, other values as JSON scalars.
func humanPartition(ps *spec.PartitionSpec, schema *spec.Schema, tuple []any) map[string]any {
	out := make(map[string]any, len(tuple))
	for i, v := range tuple {
		name := fmt.Sprintf("field_%d", i)
		var tr spec.Transform
		var src spec.Type
		if ps != nil && i < len(ps.Fields) {
			name, tr = ps.Fields[i].Name, ps.Fields[i].Transform
			if schema != nil {
				if f, ok := schema.FindField(ps.Fields[i].SourceID); ok {
					src = f.Type
				}
			}
		}
		out[name] = humanValue(tr, src, v)
	}
	return out
}

func humanValue(tr spec.Transform, src spec.Type, v any) any {
	epoch := time.Unix(0, 0).UTC()
	switch x := v.(type) {
	case nil:
		return nil
	case int32:
		switch tr.Kind {
		case spec.TransformYear:
			return fmt.Sprintf("%04d", 1970+int(x))
		case spec.TransformMonth:
			return epoch.AddDate(0, int(x), 0).Format("2006-01")
		case spec.TransformDay:
			return epoch.AddDate(0, 0, int(x)).Format("2006-01-02")
		case spec.TransformHour:
			return epoch.Add(time.Duration(x) * time.Hour).Format("2006-01-02-15")
		case spec.TransformIdentity, spec.TransformTruncate:
			if _, ok := src.(spec.DateType); ok {
				return epoch.AddDate(0, 0, int(x)).Format("2006-01-02")
			}
		}
		return x
	case int64:
		if tr.Kind == spec.TransformIdentity {
			switch src.(type) {
			case spec.TimestampType, spec.TimestampTzType:
				return time.UnixMicro(x).UTC().Format("2006-01-02T15:04:05.999999")
			case spec.TimestampNsType, spec.TimestampTzNsType:
				return time.Unix(0, x).UTC().Format("2006-01-02T15:04:05.999999999")
			}
		}
		return x
	case float32:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return strconv.FormatFloat(float64(x), 'g', -1, 32)
		}
		return x
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
		return x
	case []byte:
		return "0x" + hex.EncodeToString(x)
	case [16]byte:
		return formatUUID(x)
	case spec.Decimal:
		return x.String()
	}
	return v
}

// tupleEqual is exact equality of two tuples as the plan stores them.
func tupleEqual(a, b []any) bool {
	ja, err1 := Tuple(a).MarshalJSON()
	jb, err2 := Tuple(b).MarshalJSON()
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}
