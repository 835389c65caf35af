package puffin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"
)

// appendFooter appends to b the footer JSON of m exactly as Java's
// FileMetadataParser.toJson writes it (compact Jackson output, fixed key
// order, empty properties left out), so that our files are byte-identical
// to Java's.
func appendFooter(b []byte, m FileMetadata) ([]byte, error) {
	b = append(b, `{"blobs":[`...)
	for i, blob := range m.Blobs {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendBlobJSON(b, blob); err != nil {
			return nil, fmt.Errorf("blob %d: %w", i, err)
		}
	}
	b = append(b, ']')
	if len(m.Properties) > 0 {
		var err error
		b = append(b, `,"properties":`...)
		if b, err = appendPropertiesJSON(b, m.Properties, m.PropertyOrder); err != nil {
			return nil, fmt.Errorf("file properties: %w", err)
		}
	}
	return append(b, '}'), nil
}

func appendBlobJSON(b []byte, m BlobMetadata) ([]byte, error) {
	var err error
	b = append(b, `{"type":`...)
	if b, err = appendJSONString(b, m.Type); err != nil {
		return nil, fmt.Errorf("type: %w", err)
	}
	b = append(b, `,"fields":[`...)
	for i, f := range m.Fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(f), 10)
	}
	b = append(b, `],"snapshot-id":`...)
	b = strconv.AppendInt(b, m.SnapshotID, 10)
	b = append(b, `,"sequence-number":`...)
	b = strconv.AppendInt(b, m.SequenceNumber, 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, m.Offset, 10)
	b = append(b, `,"length":`...)
	b = strconv.AppendInt(b, m.Length, 10)
	if m.CompressionCodec != CodecNone {
		b = append(b, `,"compression-codec":`...)
		if b, err = appendJSONString(b, m.CompressionCodec); err != nil {
			return nil, fmt.Errorf("compression-codec: %w", err)
		}
	}
	if len(m.Properties) > 0 {
		b = append(b, `,"properties":`...)
		if b, err = appendPropertiesJSON(b, m.Properties, m.PropertyOrder); err != nil {
			return nil, fmt.Errorf("properties: %w", err)
		}
	}
	return append(b, '}'), nil
}

// ordersAll reports whether order lists each key of props once and
// nothing else, as for every DV blob: then it is the key order as it is,
// without the lists and set of the general case (for each blob of a
// footer of thousands).
func ordersAll(props map[string]string, order []string) bool {
	if len(order) != len(props) || len(order) > 8 {
		return false
	}
	for i, k := range order {
		if _, ok := props[k]; !ok || slices.Contains(order[:i], k) {
			return false
		}
	}
	return true
}

// appendPropertiesJSON writes the keys listed in order first (skipping
// those not in props), then the remaining keys sorted, so output is
// deterministic while still reproducing an insertion order when known.
func appendPropertiesJSON(b []byte, props map[string]string, order []string) ([]byte, error) {
	keys := order
	if !ordersAll(props, order) {
		keys = make([]string, 0, len(props))
		seen := make(map[string]bool, len(props))
		for _, k := range order {
			if _, ok := props[k]; ok && !seen[k] {
				keys = append(keys, k)
				seen[k] = true
			}
		}
		rest := make([]string, 0, len(props)-len(keys))
		for k := range props {
			if !seen[k] {
				rest = append(rest, k)
			}
		}
		slices.Sort(rest)
		keys = append(keys, rest...)
	}

	var err error
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = appendJSONString(b, k); err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		b = append(b, ':')
		if b, err = appendJSONString(b, props[k]); err != nil {
			return nil, fmt.Errorf("value of %q: %w", k, err)
		}
	}
	return append(b, '}'), nil
}

// appendJSONString quotes s as Jackson does by default: short escapes for
// '"', '\\', \b \t \n \f \r, \u00XX (upper-case hex) for other control
// characters, everything else (including '/', '<' and U+2028) raw.
func appendJSONString(b []byte, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return nil, errors.New("string is not valid UTF-8")
	}
	const hex = "0123456789ABCDEF"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\f':
			b = append(b, '\\', 'f')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			if c < 0x20 {
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"'), nil
}

type footerJSON struct {
	Blobs      *[]json.RawMessage `json:"blobs"`
	Properties json.RawMessage    `json:"properties"`
}

type blobJSON struct {
	Type             *string         `json:"type"`
	Fields           *[]int32        `json:"fields"`
	SnapshotID       *int64          `json:"snapshot-id"`
	SequenceNumber   *int64          `json:"sequence-number"`
	Offset           *int64          `json:"offset"`
	Length           *int64          `json:"length"`
	CompressionCodec *string         `json:"compression-codec"`
	Properties       json.RawMessage `json:"properties"`
}

// parseFooter parses footer JSON, requiring every field the spec requires
// and keeping the order of property keys.
func parseFooter(data []byte) (FileMetadata, error) {
	if !utf8.Valid(data) {
		return FileMetadata{}, errors.New("footer is not valid UTF-8")
	}
	var f footerJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return FileMetadata{}, fmt.Errorf("parse footer JSON: %w", err)
	}
	if f.Blobs == nil {
		return FileMetadata{}, errors.New("footer JSON: missing required field blobs")
	}
	var m FileMetadata
	var err error
	if m.Properties, m.PropertyOrder, err = parseProperties(f.Properties); err != nil {
		return FileMetadata{}, fmt.Errorf("footer JSON properties: %w", err)
	}
	m.Blobs = make([]BlobMetadata, 0, len(*f.Blobs))
	for i, raw := range *f.Blobs {
		b, err := parseBlob(raw)
		if err != nil {
			return FileMetadata{}, fmt.Errorf("footer JSON blob %d: %w", i, err)
		}
		m.Blobs = append(m.Blobs, b)
	}
	return m, nil
}

func parseBlob(raw json.RawMessage) (BlobMetadata, error) {
	var j blobJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return BlobMetadata{}, err
	}
	switch {
	case j.Type == nil:
		return BlobMetadata{}, errors.New("missing required field type")
	case j.Fields == nil:
		return BlobMetadata{}, errors.New("missing required field fields")
	case j.SnapshotID == nil:
		return BlobMetadata{}, errors.New("missing required field snapshot-id")
	case j.SequenceNumber == nil:
		return BlobMetadata{}, errors.New("missing required field sequence-number")
	case j.Offset == nil:
		return BlobMetadata{}, errors.New("missing required field offset")
	case j.Length == nil:
		return BlobMetadata{}, errors.New("missing required field length")
	}
	b := BlobMetadata{
		Type:           *j.Type,
		Fields:         *j.Fields,
		SnapshotID:     *j.SnapshotID,
		SequenceNumber: *j.SequenceNumber,
		Offset:         *j.Offset,
		Length:         *j.Length,
	}
	if j.CompressionCodec != nil {
		b.CompressionCodec = *j.CompressionCodec
	}
	var err error
	if b.Properties, b.PropertyOrder, err = parseProperties(j.Properties); err != nil {
		return BlobMetadata{}, fmt.Errorf("properties: %w", err)
	}
	return b, nil
}

// parseProperties reads a JSON object of strings, keeping key order and
// rejecting duplicate keys and non-string values.
func parseProperties(raw json.RawMessage) (map[string]string, []string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]string{}, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, fmt.Errorf("expected an object, got %v", tok)
	}
	props := map[string]string{}
	var order []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, nil, fmt.Errorf("expected a key, got %v", tok)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("value of %q: %w", key, err)
		}
		if len(v) == 0 || v[0] != '"' {
			return nil, nil, fmt.Errorf("value of %q is not a string", key)
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, nil, fmt.Errorf("value of %q: %w", key, err)
		}
		if _, dup := props[key]; dup {
			return nil, nil, fmt.Errorf("duplicate key %q", key)
		}
		props[key] = s
		order = append(order, key)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	return props, order, nil
}
