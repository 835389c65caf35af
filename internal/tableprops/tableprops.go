// Package tableprops checks the values of the table properties icectl
// reads, so that a command setting one refuses a value that would make a
// later health, compact, expire or commit fail (or silently fall back to a
// default). It knows each property's type and range as the packages that
// read it do (plan, health, expire, iceberg/commit, iceberg/datafile,
// catalog, iceberg/reclaim, iceberg/spec); keys it does not know are
// free-form, as Iceberg's table properties are.
//
// It only checks values: it must never read or change a table.
package tableprops

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/icectl/icectl/iceberg/datafile"
)

// rule is one property (or, with prefix set, every property starting with
// key) and what its value must be.
type rule struct {
	key    string
	prefix bool
	want   string
	ok     func(v string) bool
}

func integer(min int64, bits int) func(string) bool {
	return func(v string) bool {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, bits)
		return err == nil && n >= min
	}
}

// millis accepts a non-negative count of milliseconds that fits a
// time.Duration, as iceberg/commit reads them.
func millis(min int64) func(string) bool {
	return func(v string) bool {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		return err == nil && n >= min && n <= int64(time.Duration(1<<62)/time.Millisecond)
	}
}

func boolean(v string) bool {
	_, err := strconv.ParseBool(strings.TrimSpace(v))
	return err == nil
}

func oneOf(names ...string) func(string) bool {
	return func(v string) bool { return slices.Contains(names, strings.ToLower(strings.TrimSpace(v))) }
}

// writer asks the Parquet writer itself.
func writer(key string) func(string) bool {
	return func(v string) bool { return datafile.CheckWriterProperties(map[string]string{key: v}) == nil }
}

func metricsMode(v string) bool {
	_, err := datafile.ParseMetricsMode(strings.TrimSpace(v))
	return err == nil
}

const (
	positiveBytes = "a positive number of bytes, e.g. 536870912 (no units)"
	positiveMS    = "a positive number of milliseconds, e.g. 432000000 (no units)"
	nonNegMS      = "a number of milliseconds >= 0 (no units)"
	positiveCount = "a positive integer"
	nonNegCount   = "an integer >= 0"
	trueFalse     = "true or false"
)

// rules lists every table property icectl reads, by the package that
// reads it.
var rules = []rule{
	// plan, health, compact
	{key: "write.target-file-size-bytes", want: positiveBytes, ok: integer(1, 64)},
	// health
	{key: "commit.manifest.target-size-bytes", want: positiveBytes, ok: integer(1, 64)},
	// health, expire
	{key: "history.expire.max-snapshot-age-ms", want: positiveMS, ok: integer(1, 64)},
	{key: "history.expire.min-snapshots-to-keep", want: positiveCount, ok: integer(1, 32)},
	{key: "history.expire.max-ref-age-ms", want: positiveMS, ok: integer(1, 64)},
	{key: "gc.enabled", want: trueFalse, ok: boolean},
	// iceberg/spec, health, iceberg/reclaim
	{key: "write.metadata.previous-versions-max", want: positiveCount, ok: integer(1, 32)},
	{key: "write.metadata.delete-after-commit.enabled", want: trueFalse, ok: boolean},
	// catalog
	{key: "write.metadata.compression-codec", want: "none or gzip", ok: oneOf("none", "gzip")},
	// iceberg/commit
	{key: "commit.retry.num-retries", want: nonNegCount, ok: integer(0, 32)},
	{key: "commit.retry.min-wait-ms", want: nonNegMS, ok: millis(0)},
	{key: "commit.retry.max-wait-ms", want: nonNegMS, ok: millis(0)},
	{key: "commit.retry.total-timeout-ms", want: nonNegMS, ok: millis(0)},
	// iceberg/datafile
	{key: datafile.PropCompressionCodec, want: "zstd, snappy, gzip, lz4, brotli or uncompressed", ok: writer(datafile.PropCompressionCodec)},
	{key: datafile.PropCompressionLevel, want: "an integer", ok: writer(datafile.PropCompressionLevel)},
	{key: datafile.PropRowGroupSizeBytes, want: positiveBytes, ok: writer(datafile.PropRowGroupSizeBytes)},
	{key: datafile.PropPageSizeBytes, want: positiveBytes, ok: writer(datafile.PropPageSizeBytes)},
	{key: "write.metadata.metrics.default", want: "none, counts, truncate(N) or full", ok: metricsMode},
	{key: "write.metadata.metrics.column.", prefix: true, want: "none, counts, truncate(N) or full", ok: metricsMode},
	{key: "write.metadata.metrics.max-inferred-column-defaults", want: nonNegCount, ok: integer(0, 32)},
}

func find(key string) (rule, bool) {
	for _, r := range rules {
		if key == r.key || (r.prefix && strings.HasPrefix(key, r.key)) {
			return r, true
		}
	}
	return rule{}, false
}

// Known reports whether icectl reads key.
func Known(key string) bool {
	_, ok := find(key)
	return ok
}

// Check returns nil when every reader of key accepts value (and for a key
// icectl does not read), else a one-line error naming the key, the value
// and what it must be.
func Check(key, value string) error {
	r, ok := find(key)
	if !ok || r.ok(value) {
		return nil
	}
	return fmt.Errorf("table property %s=%q: want %s", key, value, r.want)
}

// CheckAll checks every property of props, in key order, and returns the
// first error.
func CheckAll(props map[string]string) error {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := Check(k, props[k]); err != nil {
			return err
		}
	}
	return nil
}
