package manifest

import (
	"fmt"
	"strconv"

	"github.com/hamba/avro/v2"
)

// This file holds the decoders a projected read (WithoutMetrics) uses in
// place of the full ones: they consume the same bytes but keep little.

// oneBoundBase reads an Iceberg map of bounds (int key -> bytes) and keeps
// only the value of column id; the map is nil when that column has no
// bound, so a file without one costs no allocation.
func oneBoundBase(s avro.Schema, id int) (func(*avro.Reader) map[int][]byte, error) {
	switch t := s.(type) {
	case *avro.MapSchema:
		vr, err := nullable(t.Values(), bytesBase)
		if err != nil {
			return nil, fmt.Errorf("map value %w", err)
		}
		key := strconv.Itoa(id)
		return func(r *avro.Reader) map[int][]byte {
			var out map[int][]byte
			eachBlockItem(r, func(bool, int64) {
				k := r.ReadString()
				v, ok := vr(r)
				if ok && r.Error == nil && k == key {
					out = map[int][]byte{id: v}
				}
			})
			return out
		}, nil
	case *avro.ArraySchema:
		items, present, err := unionPrefix(t.Items())
		if err != nil {
			return nil, fmt.Errorf("map item %w", err)
		}
		rec, ok := items.(*avro.RecordSchema)
		if !ok {
			return nil, typeErr(t.Items(), "key/value record")
		}
		// The key decides whether the value is kept; a writer may put the
		// value first, and then it is read before the key is known.
		const (
			isKey = iota
			isValue
			isOther
		)
		kinds := make([]int, 0, 2)
		skips := make([]func(*avro.Reader), 0, 2)
		var keyR reader[int32]
		var valR reader[[]byte]
		for _, f := range rec.Fields() {
			sk, err := skipper(f.Type(), nil)
			if err != nil {
				return nil, fmt.Errorf("map field %s: %w", f.Name(), err)
			}
			kind := isOther
			switch f.Name() {
			case "key":
				if keyR, err = nullable(f.Type(), intBase); err != nil {
					return nil, fmt.Errorf("map key %w", err)
				}
				kind = isKey
			case "value":
				if valR, err = nullable(f.Type(), bytesBase); err != nil {
					return nil, fmt.Errorf("map value %w", err)
				}
				kind = isValue
			}
			kinds = append(kinds, kind)
			skips = append(skips, sk)
		}
		if keyR == nil || valR == nil {
			return nil, fmt.Errorf("map record %s lacks key or value", rec.Name())
		}
		return func(r *avro.Reader) map[int][]byte {
			var out map[int][]byte
			eachBlockItem(r, func(bool, int64) {
				var k int32
				var v []byte
				hasKey, vok := false, false
				if !present(r) {
					return
				}
				for i, kind := range kinds {
					switch {
					case kind == isKey:
						k, _ = keyR(r)
						hasKey = true
					case kind == isValue && (!hasKey || int(k) == id):
						v, vok = valR(r)
					default:
						skips[i](r)
					}
				}
				if vok && int(k) == id && r.Error == nil {
					out = map[int][]byte{id: v}
				}
			})
			return out
		}, nil
	}
	return nil, typeErr(s, "map")
}

// formatBase reads file_format, returning the usual names as constants so
// that 100,000 entries do not hold 100,000 copies of "PARQUET".
func formatBase(s avro.Schema) (func(*avro.Reader) string, error) {
	switch s.Type() {
	case avro.String, avro.Bytes:
	default:
		return nil, typeErr(s, "string")
	}
	return func(r *avro.Reader) string {
		n := r.ReadLong()
		if n < 0 || n > maxBytesValue {
			r.ReportError("file_format", fmt.Sprintf("invalid string length %d", n))
			return ""
		}
		var small [8]byte
		buf := small[:0]
		if n <= int64(len(small)) {
			buf = small[:n]
		} else {
			buf = make([]byte, n)
		}
		r.Read(buf)
		switch string(buf) {
		case "PARQUET":
			return "PARQUET"
		case "AVRO":
			return "AVRO"
		case "ORC":
			return "ORC"
		case "PUFFIN":
			return "PUFFIN"
		}
		return string(buf)
	}, nil
}
