package manifest

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"sync"
)

// headerCache maps container headers to what a reader derives from them
// (parsed schemas, compiled decoders), so that the many manifests of a
// table that share a header compile it once. A lookup hashes the header
// and compares it with what is cached: it allocates nothing. It is safe
// for concurrent use; what it holds is only read afterwards.
type headerCache[T any] struct {
	mu      sync.Mutex
	seed    maphash.Seed
	entries map[uint64][]cachedHeader[T] // by hash of the fields
	n       int
}

type cachedHeader[T any] struct {
	fields []headerField // a copy of the fields the value was derived from
	val    T
}

// maxCachedHeaders bounds a cache fed with headers that all differ; past
// it, headers are compiled without being kept.
const maxCachedHeaders = 256

func newHeaderCache[T any]() *headerCache[T] {
	return &headerCache[T]{seed: maphash.MakeSeed(), entries: map[uint64][]cachedHeader[T]{}}
}

// get returns the value derived from fields, calling compile when no
// earlier header had the same fields (same keys and values, same order);
// hit tells whether it was cached. Readers that miss at the same moment
// each compile; the first one's result is kept.
func (c *headerCache[T]) get(fields []headerField, compile func() (T, error)) (v T, hit bool, err error) {
	sum := c.hash(fields)
	c.mu.Lock()
	for _, e := range c.entries[sum] {
		if sameFields(e.fields, fields) {
			c.mu.Unlock()
			return e.val, true, nil
		}
	}
	c.mu.Unlock()
	if v, err = compile(); err != nil {
		return v, false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries[sum] {
		if sameFields(e.fields, fields) {
			return e.val, false, nil
		}
	}
	if c.n < maxCachedHeaders {
		c.entries[sum] = append(c.entries[sum], cachedHeader[T]{fields: copyFields(fields), val: v})
		c.n++
	}
	return v, false, nil
}

func (c *headerCache[T]) hash(fields []headerField) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	var n [8]byte
	for _, f := range fields {
		binary.LittleEndian.PutUint64(n[:], uint64(len(f.key)))
		h.Write(n[:])
		h.Write(f.key)
		binary.LittleEndian.PutUint64(n[:], uint64(len(f.val)))
		h.Write(n[:])
		h.Write(f.val)
	}
	return h.Sum64()
}

func sameFields(a, b []headerField) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i].key, b[i].key) || !bytes.Equal(a[i].val, b[i].val) {
			return false
		}
	}
	return true
}

// copyFields copies fields out of the buffer they alias, into one
// allocation.
func copyFields(fields []headerField) []headerField {
	size := 0
	for _, f := range fields {
		size += len(f.key) + len(f.val)
	}
	buf := make([]byte, 0, size)
	out := make([]headerField, len(fields))
	for i, f := range fields {
		buf = append(buf, f.key...)
		k := buf[len(buf)-len(f.key):]
		buf = append(buf, f.val...)
		out[i] = headerField{key: k, val: buf[len(buf)-len(f.val):]}
	}
	return out
}
