package manifest

import (
	"sync"

	"github.com/hamba/avro/v2"
)

// SchemaCache holds the Avro schemas of the files one run opens or writes,
// each distinct schema text parsed once. A table's manifests mostly share a
// handful of schemas, and parsing one (hamba's ParseWithCache) costs more
// than decoding a small manifest's entries. Give each run (a commit, a
// walk) its own cache: it grows with the distinct schemas it sees, up to
// maxCachedSchemas. It is safe for concurrent use; a parsed schema is
// only read afterwards.
type SchemaCache struct {
	mu      sync.Mutex
	schemas map[string]*cachedSchema
	hits    int64
	misses  int64
}

// cachedSchema is one schema text's parse, done once: readers that meet
// the text at the same moment wait for the first one's parse.
type cachedSchema struct {
	once   sync.Once
	schema avro.Schema
	err    error
}

// maxCachedSchemas bounds a cache fed with files whose schemas all differ;
// past it, schemas are parsed without being kept.
const maxCachedSchemas = 256

// NewSchemaCache returns an empty cache.
func NewSchemaCache() *SchemaCache {
	return &SchemaCache{schemas: map[string]*cachedSchema{}}
}

// parse returns the schema of text, parsed on the first call only. Each
// parse gets a fresh hamba cache of named types: manifests reuse record
// names (r102) with different fields, so a shared one would mix them up.
// The key is the whole text, so equal keys mean equal schemas.
func (c *SchemaCache) parse(text string) (avro.Schema, error) {
	if c == nil {
		return avro.ParseWithCache(text, "", &avro.SchemaCache{})
	}
	c.mu.Lock()
	e, ok := c.schemas[text]
	if ok {
		c.hits++
	} else {
		c.misses++
		if len(c.schemas) < maxCachedSchemas {
			e = &cachedSchema{}
			c.schemas[text] = e
		}
	}
	c.mu.Unlock()
	if e == nil {
		return avro.ParseWithCache(text, "", &avro.SchemaCache{})
	}
	e.once.Do(func() { e.schema, e.err = avro.ParseWithCache(text, "", &avro.SchemaCache{}) })
	return e.schema, e.err
}

// Stats returns how many lookups found a parsed schema (hits) and how
// many had to parse one (misses).
func (c *SchemaCache) Stats() (hits, misses int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}

// WithSchemaCache makes the reader take its Avro schema from c, parsing
// it there when c has not seen it.
func WithSchemaCache(c *SchemaCache) ReadOption {
	return func(o *readOptions) { o.schemas = c }
}
