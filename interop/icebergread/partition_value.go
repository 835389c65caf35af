package icebergread

import (
	"encoding/hex"
	"fmt"
	"reflect"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// PartitionValue is one partition field of a data file as iceberg-go
// decoded it. Hex is the value's Iceberg single-value serialization computed
// by iceberg-go's literals, so it can be compared byte for byte with another
// writer's; GoType names the Go type iceberg-go chose, which tells an int
// from a long or a date from an int.
type PartitionValue struct {
	FieldID int     `json:"field_id"`
	Name    string  `json:"name"`
	GoType  string  `json:"go_type"`
	Value   any     `json:"value"`
	Hex     *string `json:"hex"`
}

func partitionValueOf(fieldID int, name string, v any) (PartitionValue, error) {
	pv := PartitionValue{FieldID: fieldID, Name: name, Value: v}
	if v == nil {
		pv.GoType = "nil"
		return pv, nil
	}
	pv.GoType = fmt.Sprintf("%T", v)
	lit, err := literalOf(v)
	if err != nil {
		return pv, fmt.Errorf("partition field %d (%s): %w", fieldID, name, err)
	}
	b, err := lit.MarshalBinary()
	if err != nil {
		return pv, fmt.Errorf("partition field %d (%s): serialize %T: %w", fieldID, name, v, err)
	}
	s := hex.EncodeToString(b)
	pv.Hex = &s
	switch x := v.(type) {
	case []byte:
		pv.Value = s
	case iceberg.DecimalLiteral:
		pv.Value = iceberg.Decimal(x).String()
	case uuid.UUID:
		pv.Value = x.String()
	}
	return pv, nil
}

// literalOf maps the values iceberg-go's manifest decoder produces to its
// literals, whose MarshalBinary is the spec's single-value serialization.
func literalOf(v any) (iceberg.Literal, error) {
	switch x := v.(type) {
	case bool:
		return iceberg.NewLiteral(x), nil
	case int32:
		return iceberg.NewLiteral(x), nil
	case int64:
		return iceberg.NewLiteral(x), nil
	case float32:
		return iceberg.NewLiteral(x), nil
	case float64:
		return iceberg.NewLiteral(x), nil
	case string:
		return iceberg.NewLiteral(x), nil
	case []byte:
		return iceberg.NewLiteral(x), nil
	case iceberg.Date:
		return iceberg.NewLiteral(x), nil
	case iceberg.Time:
		return iceberg.NewLiteral(x), nil
	case iceberg.Timestamp:
		return iceberg.NewLiteral(x), nil
	case iceberg.TimestampNano:
		return iceberg.NewLiteral(x), nil
	case uuid.UUID:
		return iceberg.NewLiteral(x), nil
	case iceberg.DecimalLiteral:
		return x, nil
	case iceberg.Decimal:
		return iceberg.DecimalLiteral(x), nil
	}
	// A fixed value may come back as a byte array.
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Array && rv.Type().Elem().Kind() == reflect.Uint8 {
		b := make([]byte, rv.Len())
		reflect.Copy(reflect.ValueOf(b), rv)
		return iceberg.NewLiteral(b), nil
	}
	return nil, fmt.Errorf("no literal for Go type %T", v)
}
