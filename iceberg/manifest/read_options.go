package manifest

// ReadOption tunes how OpenManifest and OpenManifestList decode entries.
type ReadOption func(*readOptions)

type readOptions struct {
	skipMetrics bool
	budget      *Budget
	schemas     *SchemaCache
}

func collectOptions(opts []ReadOption) readOptions {
	var o readOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithoutMetrics makes the reader skip the per-column metrics at the Avro
// level: column sizes (108), value counts (109), null counts (110), NaN
// counts (137) and split offsets (132) come back nil, and lower and upper
// bounds (125, 128) keep only the bound of the position-delete file_path
// column (2147483546), which tells a file-scoped position-delete file
// apart. Planning never looks at the rest, and the metric maps are most of
// what a full decode allocates. OpenManifestList ignores it.
//
// Entries read this way are incomplete: never write them to a manifest.
func WithoutMetrics() ReadOption {
	return func(o *readOptions) { o.skipMetrics = true }
}

// WithBudget charges the reader's decompressed blocks to b, shared with
// the other readers of the same walk; Close (or reading to the end) gives
// them back.
func WithBudget(b *Budget) ReadOption {
	return func(o *readOptions) { o.budget = b }
}
