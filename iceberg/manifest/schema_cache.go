package manifest

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/hamba/avro/v2"
)

// SchemaCache holds what the readers and writers of one run derive from
// the headers of the files they open: each distinct Avro schema text is
// parsed once, and each distinct manifest header (its Iceberg schema and
// partition spec, the decoder compiled for it) compiled once. A table's
// manifests mostly share a handful of headers, and parsing one costs more
// than decoding a small manifest's entries. The cache also lends readers
// their buffers and decompressors, which go back when a reader is closed
// or read to the end, so that opening a small manifest allocates little.
// Give each run (a commit, a walk) its own cache: it grows with the
// distinct headers it sees, up to maxCachedSchemas and maxCachedHeaders.
// It is safe for concurrent use; what it has parsed is only read
// afterwards.
type SchemaCache struct {
	mu      sync.Mutex
	schemas map[string]*cachedSchema
	hits    int64
	misses  int64

	// manifests holds compiled manifest headers, by whether metrics are
	// skipped (WithoutMetrics compiles another decoder); lists, the
	// decoders of manifest lists, by their Avro schema.
	manifests [2]*headerCache[*compiledManifest]
	lists     *headerCache[*compiledList]
	// containers are readers' buffers and decompressors, for lending.
	containers sync.Pool
	cfg        avro.API
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
	return &SchemaCache{
		schemas:   map[string]*cachedSchema{},
		manifests: [2]*headerCache[*compiledManifest]{newHeaderCache[*compiledManifest](), newHeaderCache[*compiledManifest]()},
		lists:     newHeaderCache[*compiledList](),
		cfg:       blockConfig(),
	}
}

// blockConfig is the Avro configuration blocks are decoded with.
func blockConfig() avro.API { return avro.Config{MaxByteSliceSize: maxBytesValue}.Freeze() }

// container lends a container, or makes one without a cache.
func (c *SchemaCache) container() *container {
	if c == nil {
		return &container{block: avro.NewReader(nil, 0, avro.WithReaderConfig(blockConfig()))}
	}
	if ct, ok := c.containers.Get().(*container); ok {
		ct.closed, ct.left = false, 0
		return ct
	}
	return &container{block: avro.NewReader(nil, 0, avro.WithReaderConfig(c.cfg)), cache: c}
}

// putContainer takes back a container its reader is done with.
func (c *SchemaCache) putContainer(ct *container) {
	if c == nil {
		ct.blockCodec.close()
		return
	}
	c.containers.Put(ct)
}

// manifestHeader returns what a Reader of ct's manifest is compiled from,
// compiling it when the cache has not seen the header.
func (c *SchemaCache) manifestHeader(ct *container, o readOptions) (*compiledManifest, error) {
	compile := func() (*compiledManifest, error) {
		h, err := ct.header(c)
		if err != nil {
			return nil, err
		}
		return compileManifest(h, o)
	}
	if c == nil {
		return compile()
	}
	i := 0
	if o.skipMetrics {
		i = 1
	}
	cm, hit, err := c.manifests[i].get(ct.fields, compile)
	c.countHit(hit)
	return cm, err
}

// listDecoder returns the decoder of ct's manifest list, compiling it when
// the cache has not seen its Avro schema.
func (c *SchemaCache) listDecoder(ct *container) (*compiledList, error) {
	compile := func() (*compiledList, error) {
		h, err := ct.header(c)
		if err != nil {
			return nil, err
		}
		return compileList(h)
	}
	if c == nil {
		return compile()
	}
	// The rest of a list's header (its snapshot id, ...) differs from list
	// to list, and is read at every open.
	sj, ok := ct.field("avro.schema")
	if !ok {
		return compile()
	}
	cl, hit, err := c.lists.get([]headerField{{key: []byte("avro.schema"), val: sj}}, compile)
	c.countHit(hit)
	return cl, err
}

// countHit counts a header found compiled as a hit of its schema; a miss
// was counted when its schema was looked up.
func (c *SchemaCache) countHit(hit bool) {
	if hit {
		c.mu.Lock()
		c.hits++
		c.mu.Unlock()
	}
}

// parse returns the schema of text, parsed on the first call only. Each
// parse gets a fresh hamba cache of named types: manifests reuse record
// names (r102) with different fields, so a shared one would mix them up.
// The key is the whole text, so equal keys mean equal schemas.
func (c *SchemaCache) parse(text string) (avro.Schema, error) {
	if c == nil {
		return parseAvro(text)
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
		return parseAvro(text)
	}
	e.once.Do(func() { e.schema, e.err = parseAvro(text) })
	return e.schema, e.err
}

// Stats returns how many lookups found a parsed schema or a compiled
// header (hits) and how many had to parse a schema (misses).
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

// parseAvro parses an Avro schema text as a manifest or manifest list
// declares it. Java keeps Unicode letters in field names (a partition
// field named größe), which the Avro spec's names ([A-Za-z_][A-Za-z0-9_]*)
// and so hamba/avro refuse; such names are rewritten first as icectl
// writes them (avroName). Nothing reads a field by its name where it has
// a field id, and the reader finds the few fields it takes by name among
// valid ASCII names, so the rewrite changes no value read.
//
// A named type defined twice the same way (PyIceberg 0.12 gives each of a
// partition struct's decimal(10,2) fields its own definition of fixed
// "decimal_10_2", where Java writes the name the second time) is read as
// Java's Avro (1.12) reads it: the later definitions as references to the
// first (uniqueNames). Two different definitions of a name are refused.
func parseAvro(text string) (avro.Schema, error) {
	if t, ok := readableNames(text); ok {
		text = t
	}
	s, err := avro.ParseWithCache(text, "", &avro.SchemaCache{})
	if err != nil {
		// Only a schema the parser refuses is rewritten: the common one
		// costs no second decode.
		if t, ok := uniqueNames(text); ok {
			if s, err2 := avro.ParseWithCache(t, "", &avro.SchemaCache{}); err2 == nil {
				return s, nil
			}
		}
	}
	return s, err
}

// uniqueNames is text with each definition of a named type (record, enum,
// fixed) that equals an earlier definition of the same full name replaced
// by a reference to that name; ok is false when nothing was replaced (or
// text is not JSON). A redefinition that differs is left for the parser to
// refuse, as is one that a reference at its place could not name (a type
// in the null namespace referenced inside a namespace).
func uniqueNames(text string) (string, bool) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return text, false
	}
	defs := map[string]string{} // full name -> the first definition, as JSON
	changed := false
	var walk func(v any, ns string) any
	walk = func(v any, ns string) any {
		switch x := v.(type) {
		case []any:
			for i, e := range x {
				x[i] = walk(e, ns)
			}
		case map[string]any:
			if t, _ := x["type"].(string); t == "record" || t == "error" || t == "enum" || t == "fixed" {
				name, _ := x["name"].(string)
				full, space := name, ns
				if explicit, ok := x["namespace"].(string); ok {
					space = explicit
				}
				if i := strings.LastIndexByte(name, '.'); i >= 0 {
					space = name[:i]
				} else if space != "" {
					full = space + "." + name
				}
				def, err := json.Marshal(x)
				if err != nil {
					return v
				}
				if first, seen := defs[full]; seen {
					if first == string(def) && (strings.Contains(full, ".") || ns == "") {
						changed = true
						return full
					}
					return v
				}
				defs[full] = string(def)
				ns = space
			}
			for _, k := range []string{"type", "items", "values"} {
				if c, ok := x[k]; ok {
					if _, str := c.(string); !str {
						x[k] = walk(c, ns)
					}
				}
			}
			if fields, ok := x["fields"].([]any); ok {
				for _, f := range fields {
					if fm, ok := f.(map[string]any); ok {
						if c, ok := fm["type"]; ok {
							fm["type"] = walk(c, ns)
						}
					}
				}
			}
		}
		return v
	}
	v = walk(v, "")
	if !changed {
		return text, false
	}
	out, err := json.Marshal(v)
	if err != nil {
		return text, false
	}
	return string(out), true
}

// readableNames is text with every record field name that is not a valid
// Avro name rewritten by avroName; ok is false when there was nothing to
// rewrite (the text is ASCII, or not JSON, which the parser then reports).
func readableNames(text string) (string, bool) {
	ascii := true
	for i := 0; i < len(text); i++ {
		if text[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return text, false
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return text, false
	}
	changed := false
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			if fields, ok := x["fields"].([]any); ok {
				for _, f := range fields {
					fm, ok := f.(map[string]any)
					if !ok {
						continue
					}
					if name, ok := fm["name"].(string); ok {
						if n, valid := avroName(name); !valid {
							fm["name"], changed = n, true
						}
					}
				}
			}
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	if !changed {
		return text, false
	}
	out, err := json.Marshal(v)
	if err != nil {
		return text, false
	}
	return string(out), true
}
