package spec

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// jsonObject reads a JSON object key by key with exact, case-sensitive key
// matching, as Java's Jackson parsers do. encoding/json's struct decoding
// folds case, which would let "Location" overwrite "location" and then both
// be written back.
type jsonObject struct {
	what string // names the object in errors, e.g. "snapshot"
	m    map[string]json.RawMessage
}

func decodeObject(data []byte, what string) (jsonObject, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		// Nothing of the input is quoted: a file that is not even a JSON
		// object may be anything (a catalog pointed at /etc/shadow).
		return jsonObject{}, fmt.Errorf("cannot parse %s from a non-object: %s", what, describeNonObject(data))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return jsonObject{}, fmt.Errorf("cannot parse %s: %w", what, err)
	}
	return jsonObject{what: what, m: m}, nil
}

// raw returns the value of key, treating an explicit null as absent.
func (o jsonObject) raw(key string) (json.RawMessage, bool) {
	v, ok := o.m[key]
	if !ok || isJSONNull(v) {
		return nil, false
	}
	return v, true
}

func (o jsonObject) has(key string) bool {
	_, ok := o.raw(key)
	return ok
}

func isJSONNull(v json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

func (o jsonObject) missing(kind, key string) error {
	return fmt.Errorf("cannot parse %s: missing %s %q", o.what, kind, key)
}

func (o jsonObject) decode(key, kind string, v json.RawMessage, dst any) error {
	if err := json.Unmarshal(v, dst); err != nil {
		return fmt.Errorf("cannot parse %s: %q is not a valid %s: %s", o.what, key, kind, truncateJSON(v))
	}
	return nil
}

func (o jsonObject) optInt64(key string) (*int64, error) {
	v, ok := o.raw(key)
	if !ok {
		return nil, nil
	}
	var n int64
	if err := o.decode(key, "long", v, &n); err != nil {
		return nil, err
	}
	return &n, nil
}

func (o jsonObject) reqInt64(key string) (int64, error) {
	p, err := o.optInt64(key)
	if err != nil {
		return 0, err
	}
	if p == nil {
		return 0, o.missing("long", key)
	}
	return *p, nil
}

// optInt reads a Java int: 32 bits, so ids written by Java fit and ids we
// write can be read back by Java.
func (o jsonObject) optInt(key string) (*int, error) {
	v, ok := o.raw(key)
	if !ok {
		return nil, nil
	}
	var n int64
	if err := o.decode(key, "int", v, &n); err != nil {
		return nil, err
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return nil, fmt.Errorf("cannot parse %s: %q is out of int range: %d", o.what, key, n)
	}
	i := int(n)
	return &i, nil
}

func (o jsonObject) reqInt(key string) (int, error) {
	p, err := o.optInt(key)
	if err != nil {
		return 0, err
	}
	if p == nil {
		return 0, o.missing("int", key)
	}
	return *p, nil
}

func (o jsonObject) optString(key string) (*string, error) {
	v, ok := o.raw(key)
	if !ok {
		return nil, nil
	}
	var s string
	if err := o.decode(key, "string", v, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

func (o jsonObject) reqString(key string) (string, error) {
	p, err := o.optString(key)
	if err != nil {
		return "", err
	}
	if p == nil {
		return "", o.missing("string", key)
	}
	return *p, nil
}

// optStringMap returns nil when key is absent and a non-nil map when it is
// present, so that an explicit {} survives a round trip.
func (o jsonObject) optStringMap(key string) (map[string]string, error) {
	v, ok := o.raw(key)
	if !ok {
		return nil, nil
	}
	m := map[string]string{}
	if err := o.decode(key, "map of strings", v, &m); err != nil {
		return nil, err
	}
	return m, nil
}

func (o jsonObject) optIntList(key string) ([]int, error) {
	v, ok := o.raw(key)
	if !ok {
		return nil, nil
	}
	var l []int64
	if err := o.decode(key, "list of ints", v, &l); err != nil {
		return nil, err
	}
	out := make([]int, len(l))
	for i, n := range l {
		if n < math.MinInt32 || n > math.MaxInt32 {
			return nil, fmt.Errorf("cannot parse %s: %q holds an out of range int: %d", o.what, key, n)
		}
		out[i] = int(n)
	}
	return out, nil
}

func (o jsonObject) optStringList(key string) ([]string, error) {
	v, ok := o.raw(key)
	if !ok {
		return nil, nil
	}
	l := []string{}
	if err := o.decode(key, "list of strings", v, &l); err != nil {
		return nil, err
	}
	return l, nil
}

// optBase64 reads binary data written as base64, as Java writes ByteBuffers.
func (o jsonObject) optBase64(key string) ([]byte, error) {
	s, err := o.optString(key)
	if err != nil || s == nil {
		return nil, err
	}
	b, err := base64.StdEncoding.DecodeString(*s)
	if err != nil {
		return nil, fmt.Errorf("cannot parse %s: %q is not valid base64: %w", o.what, key, err)
	}
	return b, nil
}

// optArray returns the elements of a JSON array, or nil when key is absent.
func (o jsonObject) optArray(key string) ([]json.RawMessage, bool, error) {
	v, ok := o.raw(key)
	if !ok {
		return nil, false, nil
	}
	if t := bytes.TrimSpace(v); len(t) == 0 || t[0] != '[' {
		return nil, true, fmt.Errorf("cannot parse %s: %q is not an array: %s", o.what, key, truncateJSON(v))
	}
	var l []json.RawMessage
	if err := json.Unmarshal(v, &l); err != nil {
		return nil, true, fmt.Errorf("cannot parse %s: %q: %w", o.what, key, err)
	}
	return l, true, nil
}

// extra returns the keys not in known, with values compacted so that equal
// JSON compares equal after a round trip.
func (o jsonObject) extra(known ...string) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for k, v := range o.m {
		isKnown := false
		for _, kk := range known {
			if k == kk {
				isKnown = true
				break
			}
		}
		if isKnown {
			continue
		}
		if out == nil {
			out = map[string]json.RawMessage{}
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, v); err == nil {
			v = buf.Bytes()
		}
		out[k] = v
	}
	return out
}

// objectWriter writes a JSON object with keys in a fixed order, the order
// Java writes them, so our files diff cleanly against Java's.
type objectWriter struct {
	buf     bytes.Buffer
	n       int
	written map[string]bool
	err     error
}

func newObjectWriter() *objectWriter {
	w := &objectWriter{written: map[string]bool{}}
	w.buf.WriteByte('{')
	return w
}

func (w *objectWriter) rawField(key string, v []byte) {
	if w.err != nil {
		return
	}
	if w.n > 0 {
		w.buf.WriteByte(',')
	}
	w.n++
	k, _ := marshalJSON(key)
	w.buf.Write(k)
	w.buf.WriteByte(':')
	w.buf.Write(v)
	w.written[key] = true
}

func (w *objectWriter) field(key string, v any) {
	if w.err != nil {
		return
	}
	b, err := marshalJSON(v)
	if err != nil {
		w.err = fmt.Errorf("write %q: %w", key, err)
		return
	}
	w.rawField(key, b)
}

// stringMap writes m with first (if present) leading and the rest sorted,
// as Java writes a snapshot summary with "operation" first.
func (w *objectWriter) stringMap(key string, m map[string]string, first string) {
	inner := newObjectWriter()
	if v, ok := m[first]; ok && first != "" {
		inner.field(first, v)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != first {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		inner.field(k, m[k])
	}
	b, err := inner.bytes()
	if err != nil {
		w.err = err
		return
	}
	w.rawField(key, b)
}

// extra appends the keys of m not already written, sorted.
func (w *objectWriter) extra(m map[string]json.RawMessage) {
	keys := make([]string, 0, len(m))
	for k := range m {
		if !w.written[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		if !json.Valid(v) {
			w.err = fmt.Errorf("write %q: invalid JSON in extra field", k)
			return
		}
		w.rawField(k, v)
	}
}

func (w *objectWriter) bytes() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	w.buf.WriteByte('}')
	return w.buf.Bytes(), nil
}

// marshalJSON is json.Marshal without HTML escaping: Java's Jackson writes
// "<", ">" and "&" as they are, and a value read from another writer's
// file must be written back as the same JSON, not re-escaped.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
