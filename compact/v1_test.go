package compact

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/manifest/foreign"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/fixture"
	"github.com/icectl/icectl/plan"
)

// v1Table is a format v1 table with one snapshot of three small data
// files, listed in a v1 manifest laid out as PyIceberg writes it.
func v1Table(t *testing.T) *env {
	t.Helper()
	e := newEnv(t, 1)
	tbl := e.Load(t)
	var entries []manifest.Entry
	snapID := int64(7001)
	for i, name := range []string{"a", "b", "c"} {
		df := e.WriteIDs(t, tbl, name, nil, ids(int64(i*10), 10)...)
		entries = append(entries, manifest.Entry{Status: manifest.StatusAdded, SnapshotID: &snapID, DataFile: df})
	}
	var buf bytes.Buffer
	s := fixture.IDNameSchema()
	if _, err := foreign.WriteManifest(&buf, foreign.ManifestOptions{Engine: foreign.PyIceberg, Version: 1, Schema: &s, Spec: spec.PartitionSpec{ID: 0}}, entries); err != nil {
		t.Fatal(err)
	}
	path := table.DataLocation(tbl.Metadata) + "/../metadata/v1-m0.avro"
	f, err := tbl.IO.Create(e.Ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	snap := spec.Snapshot{SnapshotID: snapID, TimestampMS: tbl.Metadata.LastUpdatedMS + 1, Manifests: []string{path},
		Summary: map[string]string{"operation": "append"}}
	if _, err := e.Cat.CommitTable(e.Ctx, tbl, nil, []spec.Update{spec.AddSnapshot{Snapshot: snap},
		spec.SetSnapshotRef{RefName: spec.MainBranch, Ref: spec.SnapshotRef{SnapshotID: snapID, Type: spec.RefTypeBranch}}}); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestCompactRefusesV1 checks that a v1 table is refused before anything
// is planned or rewritten, in a dry run (PlanTableResult) too, and that
// the error names icectl upgrade.
func TestCompactRefusesV1(t *testing.T) {
	e := v1Table(t)
	tbl := e.Load(t)
	if n := len(liveFiles(t, tbl).Data); n != 3 {
		t.Fatalf("the v1 table has %d live files, want 3", n)
	}
	opts := e.options()
	opts.Plan = plan.Options{RewriteAll: true}
	if _, err := PlanTableResult(e.Ctx, tbl, opts); !errors.Is(err, ErrFormatV1) || !strings.Contains(err.Error(), "icectl upgrade ns.t") {
		t.Errorf("dry-run planning: got %v, want ErrFormatV1 naming icectl upgrade", err)
	}
	p := &plan.Plan{}
	rep, err := Execute(e.Ctx, e.Cat, tbl, p, opts)
	if !errors.Is(err, ErrFormatV1) || rep != nil {
		t.Errorf("execute: got %v, %v; want ErrFormatV1 and no report", rep, err)
	}
	if got := e.Load(t); got.MetadataLocation != tbl.MetadataLocation {
		t.Error("the refused compaction committed")
	}
}
