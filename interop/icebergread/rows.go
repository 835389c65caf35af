package icebergread

import (
	"encoding/json"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// encodeRows renders n rows as JSON objects keyed by column name. Values
// are Arrow's own JSON renderings; encoding/json sorts the keys, so equal
// rows encode to equal bytes whatever the column order.
func encodeRows(fields []arrow.Field, cols []arrow.Array, n int) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, 0, n)
	for i := range n {
		row := make(map[string]any, len(cols))
		for c, col := range cols {
			row[fields[c].Name] = col.GetOneForMarshal(i)
		}
		b, err := json.Marshal(row)
		if err != nil {
			return nil, fmt.Errorf("encode row %d: %w", i, err)
		}
		out = append(out, b)
	}
	return out, nil
}
