package tableprops

import (
	"fmt"
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
	"github.com/icectl/icectl/iceberg/table"
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
		table.PropManifestMergeEnabled, table.PropManifestMinMergeCount, table.PropManifestTargetSize,
		spec.PropDataPath, spec.PropMetadataPath, reclaim.PropDataPath, reclaim.PropMetadataPath,
		reclaim.PropObjectStoragePath, reclaim.PropFolderStoragePath, PropNameMapping,
		// upgrade's v3 findings
		"write.delete.mode", "write.update.mode", "write.merge.mode", "write.delete.granularity", "write.delete.format.default",
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
	if _, err := table.MergeConfigOf(md); err != nil {
		return err
	}
	if v, ok := props[PropNameMapping]; ok {
		if _, err := spec.ParseNameMapping([]byte(v)); err != nil {
			return err
		}
	}
	for _, k := range []string{reclaim.PropDataPath, reclaim.PropMetadataPath, reclaim.PropObjectStoragePath, reclaim.PropFolderStoragePath} {
		if v, ok := props[k]; ok && strings.HasPrefix(v, "/") && len(reclaim.NewScope(v).Roots()) == 0 {
			return fmt.Errorf("%s=%q: the deletion guard takes no root from it", k, v)
		}
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
		{"write.delete.mode", "copy-on-write", true},
		{"write.delete.mode", "merge", false},
		{"write.update.mode", "MERGE-ON-READ", true},
		{"write.update.mode", "yes", false},
		{"write.merge.mode", "copy-on-write", true},
		{"write.merge.mode", "", false},
		{"write.delete.granularity", "file", true},
		{"write.delete.granularity", "row", false},
		{"write.delete.format.default", "parquet", true},
		{"write.delete.format.default", "puffin", false},
		// sizes: positive, and small enough for the planner's ratios
		{"write.target-file-size-bytes", "1152921504606846976", true},
		{"write.target-file-size-bytes", "9223372036854775807", false},
		{"commit.manifest.target-size-bytes", "8388608", true},
		{"commit.manifest.target-size-bytes", "-1", false},
		{"history.expire.max-snapshot-age-ms", "9223372036854775807", false},
		{"history.expire.max-ref-age-ms", "604800000", true},
		// manifest merging (every commit, rewrite-manifests, dv merge)
		{"commit.manifest-merge.enabled", "false", true},
		{"commit.manifest-merge.enabled", "no", false},
		{"commit.manifest-merge.enabled", " true", false},
		{"commit.manifest.min-count-to-merge", "0", true},
		{"commit.manifest.min-count-to-merge", "100", true},
		{"commit.manifest.min-count-to-merge", "-1", false},
		{"commit.manifest.min-count-to-merge", "ten", false},
		{"write.metadata.delete-after-commit.enabled", " true", false},
		// where files are written and may be deleted (orphan, expire)
		{"write.data.path", "s3://bucket/warehouse/t/data", true},
		{"write.data.path", "/lake/t/data", true},
		{"write.data.path", "data", false},
		{"write.data.path", "", false},
		{"write.metadata.path", "file:///lake/t/meta", true},
		{"write.metadata.path", "file:relative", false},
		{"write.object-storage.path", "s3://bucket", true},
		{"write.object-storage.path", "../up", false},
		{"write.folder-storage.path", "gs://b/p", true},
		{"write.folder-storage.path", " s3://b/p", false},
		// the name mapping of files without field ids (compact, dv merge)
		{"schema.name-mapping.default", `[{"field-id": 1, "names": ["id"]}]`, true},
		{"schema.name-mapping.default", `{"id": 1}`, false},
		{"schema.name-mapping.default", "", false},
		// orphan and expire
		{"gc.enabled", "true", true},
		{"gc.enabled", "FALSE", true},
		{"gc.enabled", "0", false},
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

func TestSuggest(t *testing.T) {
	for key, want := range map[string]string{
		"history.expire.max-snapshot-age":     "history.expire.max-snapshot-age-ms",
		"write.target-file-size":              "write.target-file-size-bytes",
		"history.expire.min-snapshot-to-keep": "history.expire.min-snapshots-to-keep",
		"write.parquet.compresion-codec":      "write.parquet.compression-codec",
		"commit.retry.num-retires":            "commit.retry.num-retries",
	} {
		if got, ok := Suggest(key); !ok || got != want {
			t.Errorf("Suggest(%q) = %q, %v; want %q", key, got, ok, want)
		}
	}
	for _, key := range []string{"owner", "comment", "history.expire.max-snapshot-age-ms", "write.format.default", "team.cost-center", "write.metadata.metrics.column.id"} {
		if got, ok := Suggest(key); ok {
			t.Errorf("Suggest(%q) = %q, want none", key, got)
		}
	}
}
