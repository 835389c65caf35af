package cli

import (
	"encoding/hex"
	"fmt"

	"github.com/google/uuid"

	"github.com/icectl/icectl/iceberg/spec"
)

// jsonValue turns an Iceberg value (Go conventions of spec/values.go) into
// what JSON output carries: numbers stay numbers (int64 exact), uuids are
// canonical strings, bytes are lower-case hex, decimals are decimal strings.
func jsonValue(v any) any {
	switch x := v.(type) {
	case [16]byte:
		return uuid.UUID(x).String()
	case []byte:
		return hex.EncodeToString(x)
	case spec.Decimal:
		return x.String()
	default:
		return v
	}
}

// textValue renders an Iceberg value for text output.
func textValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("%q", x)
	case []byte:
		return "0x" + hex.EncodeToString(x)
	default:
		return fmt.Sprint(jsonValue(v))
	}
}

// decodeBound decodes a stored bound of field id under schema. Without a
// schema, or when the bytes do not decode as the field's type, the raw bytes
// are returned so nothing is hidden.
func decodeBound(schema *spec.Schema, id int, b []byte) any {
	if schema != nil {
		if f, ok := schema.FindField(id); ok && f.Type != nil {
			if v, err := spec.DecodeValue(f.Type, b); err == nil {
				return v
			}
		}
	}
	return b
}
