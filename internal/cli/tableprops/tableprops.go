// Package tableprops checks the values of the table properties icectl
// reads, so that a command setting one refuses a value that would make a
// later health, compact, expire or commit fail (or silently fall back to a
// default). It knows each property's type and range as the packages that
// read it do (plan, health, expire, orphan, upgrade, iceberg/commit,
// iceberg/datafile, iceberg/table, iceberg/scan, catalog, iceberg/reclaim,
// iceberg/spec); keys it does not know are
// free-form, as Iceberg's table properties are.
//
// It only checks values: it must never read or change a table.
package tableprops

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
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

// PropNameMapping is the name mapping iceberg/scan reads files without
// field ids through.
const PropNameMapping = spec.PropNameMapping

// maxBytes bounds the sizes: a target size is multiplied by the planner's
// ratios (1.8 for the largest output file) and must still fit an int64.
const maxBytes = 1 << 60

func bytesUpTo(max int64) func(string) bool {
	return func(v string) bool {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		return err == nil && n >= 1 && n <= max
	}
}

// strictBool is a boolean as strconv.ParseBool reads one, untrimmed as
// its readers (health, iceberg/table, iceberg/reclaim) read it.
func strictBool(v string) bool {
	_, err := strconv.ParseBool(v)
	return err == nil
}

// isLocation accepts a URI with a scheme (s3://bucket/path, file:///x) or
// an absolute path: new files are written under it and the deletion guard
// takes it for a table root, so a relative path would name a place that
// depends on the working directory.
func isLocation(v string) bool {
	if strings.TrimSpace(v) != v || v == "" {
		return false
	}
	if strings.HasPrefix(v, "/") {
		return true
	}
	u, err := url.Parse(v)
	return err == nil && u.Scheme != "" && (u.Host != "" || strings.HasPrefix(u.Path, "/"))
}

func nameMapping(v string) bool {
	_, err := spec.ParseNameMapping([]byte(v))
	return err == nil
}

const (
	location      = "a URI with a scheme (s3://bucket/path, file:///path) or an absolute path"
	writeModes    = "copy-on-write or merge-on-read"
	positiveBytes = "a positive number of bytes up to 2^60, e.g. 536870912 (no units)"
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
	{key: "write.target-file-size-bytes", want: positiveBytes, ok: bytesUpTo(maxBytes)},
	// health
	{key: table.PropManifestTargetSize, want: positiveBytes, ok: bytesUpTo(maxBytes)},
	// health, expire
	{key: "history.expire.max-snapshot-age-ms", want: positiveMS, ok: millis(1)},
	{key: "history.expire.min-snapshots-to-keep", want: positiveCount, ok: integer(1, 32)},
	{key: "history.expire.max-ref-age-ms", want: positiveMS, ok: millis(1)},
	// expire, orphan: orphan takes anything but "false" for true and
	// expire parses a boolean, so "0" would stop one and not the other.
	{key: "gc.enabled", want: trueFalse, ok: oneOf("true", "false")},
	// iceberg/spec, health, iceberg/reclaim
	{key: "write.metadata.previous-versions-max", want: positiveCount, ok: integer(1, 32)},
	{key: "write.metadata.delete-after-commit.enabled", want: trueFalse, ok: strictBool},
	// catalog
	{key: "write.metadata.compression-codec", want: "none or gzip", ok: oneOf("none", "gzip")},
	// iceberg/commit
	{key: "commit.retry.num-retries", want: nonNegCount, ok: integer(0, 32)},
	{key: "commit.retry.min-wait-ms", want: nonNegMS, ok: millis(0)},
	{key: "commit.retry.max-wait-ms", want: nonNegMS, ok: millis(0)},
	{key: "commit.retry.total-timeout-ms", want: nonNegMS, ok: millis(0)},
	// iceberg/table (manifest merging on every commit; rewrite-manifests
	// and dv merge commit through it too)
	{key: table.PropManifestMergeEnabled, want: trueFalse, ok: strictBool},
	{key: table.PropManifestMinMergeCount, want: nonNegCount, ok: integer(0, 32)},
	// iceberg/spec, iceberg/reclaim (orphan, expire: the roots files may
	// be deleted under)
	{key: reclaim.PropDataPath, want: location, ok: isLocation},
	{key: reclaim.PropMetadataPath, want: location, ok: isLocation},
	{key: reclaim.PropObjectStoragePath, want: location, ok: isLocation},
	{key: reclaim.PropFolderStoragePath, want: location, ok: isLocation},
	// iceberg/scan (compact and dv merge read files without field ids
	// through it)
	{key: PropNameMapping, want: "a JSON name mapping, e.g. [{\"field-id\": 1, \"names\": [\"id\"]}]", ok: nameMapping},
	// upgrade (what a v3 table does with them)
	{key: "write.delete.mode", want: writeModes, ok: oneOf("copy-on-write", "merge-on-read")},
	{key: "write.update.mode", want: writeModes, ok: oneOf("copy-on-write", "merge-on-read")},
	{key: "write.merge.mode", want: writeModes, ok: oneOf("copy-on-write", "merge-on-read")},
	{key: "write.delete.granularity", want: "partition or file", ok: oneOf("partition", "file")},
	{key: "write.delete.format.default", want: "parquet, avro or orc", ok: oneOf("parquet", "avro", "orc")},
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

// icebergOnly are table properties of Iceberg's that icectl does not read,
// so that Suggest knows them too.
var icebergOnly = []string{
	"format-version", "write.format.default", "write.distribution-mode", "write.wap.enabled",
	"write.object-storage.enabled", "write.parquet.dict-size-bytes", "write.parquet.bloom-filter-enabled.column.",
	"read.split.target-size", "commit.manifest.target-size-bytes", "commit.manifest.min-count-to-merge",
	"write.summary.partition-limit",
}

// Suggest returns the property Iceberg knows that key looks like a slip
// of (a missing unit suffix such as -ms or -bytes, or a few characters
// off), when key itself is not one: a misspelt key is accepted as a
// free-form property and then silently does nothing.
func Suggest(key string) (string, bool) {
	if Known(key) || slices.Contains(icebergOnly, key) || !strings.Contains(key, ".") {
		return "", false
	}
	names := make([]string, 0, len(rules)+len(icebergOnly))
	for _, r := range rules {
		if !r.prefix {
			names = append(names, r.key)
		}
	}
	for _, n := range icebergOnly {
		if !strings.HasSuffix(n, ".") {
			names = append(names, n)
		}
	}
	best, bestD := "", 3
	for _, n := range names {
		for _, suffix := range []string{"-ms", "-bytes", "-enabled"} {
			if n == key+suffix {
				return n, true
			}
		}
		if d := editDistance(key, n, bestD); d < bestD {
			best, bestD = n, d
		}
	}
	return best, best != ""
}

// editDistance is the Levenshtein distance of a and b, or limit when it
// is at least limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		low := cur[0]
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c = 1 + min(prev[j-1], prev[j], cur[j-1])
			}
			cur[j] = c
			low = min(low, c)
		}
		if low >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
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
