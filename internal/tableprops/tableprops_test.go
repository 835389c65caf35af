package tableprops

import (
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/expire"
	"github.com/icectl/icectl/health"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/plan"
)

// TestEveryReadPropertyIsKnown: each property constant of a package that
// reads table properties has a rule here, so a new one cannot be added
// unchecked without this test naming it.
func TestEveryReadPropertyIsKnown(t *testing.T) {
	for _, k := range []string{
		plan.PropertyTargetFileSize,
		health.PropTargetFileSize, health.PropManifestTargetSize, health.PropMaxSnapshotAgeMS,
		health.PropMinSnapshotsToKeep, health.PropPreviousVersionsMax, health.PropDeleteAfterCommit,
		expire.PropMaxSnapshotAgeMS, expire.PropMinSnapshotsToKeep, expire.PropMaxRefAgeMS, expire.PropGCEnabled,
		commit.PropNumRetries, commit.PropMinWaitMS, commit.PropMaxWaitMS, commit.PropTotalTimeout,
		datafile.PropCompressionCodec, datafile.PropCompressionLevel, datafile.PropRowGroupSizeBytes, datafile.PropPageSizeBytes,
		datafile.MetricsDefaultProperty, datafile.MetricsColumnPropertyPrefix + "id", datafile.MetricsMaxInferredColumnProperty,
		catalog.PropMetadataCompression, reclaim.PropDeleteAfterCommit, spec.PropMetadataPreviousVersionsMax,
	} {
		if !Known(k) {
			t.Errorf("%s is read by icectl but has no rule", k)
		}
	}
}

// readers runs every reader of table properties on props and returns the
// first error.
func readers(props map[string]string) error {
	md := &spec.TableMetadata{FormatVersion: 2, Properties: props}
	if _, err := health.ThresholdsFor(md); err != nil {
		return err
	}
	if _, err := (plan.Options{}).Resolve(md); err != nil {
		return err
	}
	if _, err := expire.NewPlan(md, expire.Policy{Now: time.Now()}); err != nil {
		return err
	}
	return datafile.CheckWriterProperties(props)
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		key, value string
		ok         bool
	}{
		{"write.target-file-size-bytes", "536870912", true},
		{"write.target-file-size-bytes", "1MiB", false},
		{"write.target-file-size-bytes", "abc", false},
		{"write.target-file-size-bytes", "0", false},
		{"history.expire.max-snapshot-age-ms", "-5", false},
		{"history.expire.max-snapshot-age-ms", "86400000", true},
		{"history.expire.min-snapshots-to-keep", "0", false},
		{"history.expire.max-ref-age-ms", "1d", false},
		{"gc.enabled", "yes", false},
		{"gc.enabled", "false", true},
		{"commit.retry.num-retries", "-1", false},
		{"commit.retry.num-retries", "0", true},
		{"commit.retry.min-wait-ms", "100ms", false},
		{"commit.retry.total-timeout-ms", "1800000", true},
		{"commit.manifest.target-size-bytes", "8MB", false},
		{"write.metadata.previous-versions-max", "x", false},
		{"write.metadata.delete-after-commit.enabled", "TRUE", true},
		{"write.metadata.compression-codec", "zstd", false},
		{"write.metadata.compression-codec", "gzip", true},
		{"write.parquet.compression-codec", "ZSTD", true},
		{"write.parquet.compression-codec", "lzo", false},
		{"write.parquet.row-group-size-bytes", "128MB", false},
		{"write.metadata.metrics.default", "truncate(0)", false},
		{"write.metadata.metrics.column.id", "full", true},
		{"write.metadata.metrics.column.id", "all", false},
		{"owner", "anything at all", true},
		{"write.delete.mode", "merge-on-read", true},
	} {
		err := Check(c.key, c.value)
		if (err == nil) != c.ok {
			t.Errorf("Check(%s, %q) = %v, want ok=%v", c.key, c.value, err, c.ok)
		}
		if err != nil && (strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), c.key)) {
			t.Errorf("Check(%s, %q): %q is not one line naming the key", c.key, c.value, err)
		}
		// What Check accepts the readers accept (they may accept more:
		// the commit loop falls back to its defaults, for one).
		if c.ok {
			if rerr := readers(map[string]string{c.key: c.value}); rerr != nil {
				t.Errorf("Check accepts %s=%q but a reader refuses it: %v", c.key, c.value, rerr)
			}
		}
	}
}

func TestCheckAllIsOrdered(t *testing.T) {
	err := CheckAll(map[string]string{"write.target-file-size-bytes": "x", "gc.enabled": "x", "owner": "me"})
	if err == nil || !strings.Contains(err.Error(), "gc.enabled") {
		t.Errorf("got %v, want the first key in order (gc.enabled)", err)
	}
}
