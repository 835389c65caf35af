package health

import (
	"testing"

	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/plan"
)

// TestThresholdsDefaultToTheReaders: without properties, health judges a
// table by the very defaults the writers and verbs use, and the same
// property sets them: the manifest target of the table layer's merging,
// the planner's target file size.
func TestThresholdsDefaultToTheReaders(t *testing.T) {
	md := &spec.TableMetadata{FormatVersion: 2, Properties: map[string]string{}}
	th, err := ThresholdsFor(md)
	if err != nil {
		t.Fatal(err)
	}
	want, err := table.TargetManifestSize(md)
	if err != nil {
		t.Fatal(err)
	}
	if th.ManifestTargetSize != want || th.TargetFileSize != plan.DefaultTargetFileSize {
		t.Errorf("defaults: manifest target %d (table layer %d), file target %d (planner %d)",
			th.ManifestTargetSize, want, th.TargetFileSize, plan.DefaultTargetFileSize)
	}
	md.Properties[table.PropManifestTargetSize] = "1048576"
	md.Properties[plan.PropertyTargetFileSize] = "2097152"
	if th, err = ThresholdsFor(md); err != nil {
		t.Fatal(err)
	}
	if want, _ = table.TargetManifestSize(md); th.ManifestTargetSize != want || want != 1<<20 || th.TargetFileSize != 2<<20 {
		t.Errorf("set: manifest target %d (table layer %d), file target %d", th.ManifestTargetSize, want, th.TargetFileSize)
	}
}
