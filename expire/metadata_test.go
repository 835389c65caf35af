package expire

import (
	"slices"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// evolvedTable has three specs and three schemas: spec 0 and schema 0
// were used only by expired history, spec 1 is still used by a retained
// manifest though no longer the default, schema 1 is named by a retained
// snapshot, and spec 2 / schema 2 are the current ones.
func evolvedTable(t *testing.T) (*env, *catalog.Table, Policy) {
	t.Helper()
	e, tbl := newEnv(t)
	a := e.dataFile(t, tbl, "a") // spec 0, unpartitioned
	tbl = e.Commit(t, tbl, table.Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{a}})

	s1 := spec.Schema{Fields: []spec.NestedField{{ID: 1, Name: "id", Type: spec.LongType{}, Required: true}, {ID: 2, Name: "day", Type: spec.IntType{}}}}
	byID := spec.PartitionSpec{Fields: []spec.PartitionField{{SourceID: 1, Name: "id_b", Transform: spec.ParseTransform("bucket[4]"), FieldID: -1}}}
	tbl = e.Update(t, spec.AddSchema{Schema: s1}, spec.SetCurrentSchema{SchemaID: spec.LastAdded},
		spec.AddSpec{Spec: byID}, spec.SetDefaultSpec{SpecID: spec.LastAdded})
	b := e.dataFile(t, tbl, "b")
	b.SpecID, b.Partition = 1, []any{int32(2)}
	// a leaves the table: the next snapshots carry no spec-0 manifest
	// once its deleted entry is gone.
	tbl = e.Commit(t, tbl, table.Change{Operation: spec.OperationOverwrite, AddData: []manifest.DataFile{b}, Remove: []table.FileKey{table.KeyOf(&a)}})
	b2 := e.dataFile(t, tbl, "b2")
	b2.SpecID, b2.Partition = 1, []any{int32(3)}
	tbl = e.Commit(t, tbl, table.Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{b2}})
	time.Sleep(3 * time.Millisecond)
	cut := time.Now()
	time.Sleep(3 * time.Millisecond)

	s2 := spec.Schema{Fields: []spec.NestedField{{ID: 1, Name: "id", Type: spec.LongType{}, Required: true}, {ID: 2, Name: "day", Type: spec.IntType{}}, {ID: 3, Name: "note", Type: spec.StringType{}}}}
	byDay := spec.PartitionSpec{Fields: []spec.PartitionField{{SourceID: 2, Name: "day", Transform: spec.Transform{Kind: spec.TransformIdentity}, FieldID: -1}}}
	tbl = e.Update(t, spec.AddSchema{Schema: s2}, spec.AddSpec{Spec: byDay}, spec.SetDefaultSpec{SpecID: spec.LastAdded})
	c := e.dataFile(t, tbl, "c")
	c.SpecID, c.Partition = 2, []any{int32(7)}
	tbl = e.Commit(t, tbl, table.Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{c}})
	// The current schema moves to 2 only after the last snapshot, so no
	// snapshot names it: the current schema stays whatever names it.
	tbl = e.Update(t, spec.SetCurrentSchema{SchemaID: 2})
	return e, tbl, Policy{Now: time.Now(), OlderThan: &cut, RetainLast: ptr(1)}
}

func specIDs(md *spec.TableMetadata) []int {
	var ids []int
	for _, s := range md.PartitionSpecs {
		ids = append(ids, s.ID)
	}
	return ids
}

func schemaIDs(md *spec.TableMetadata) []int {
	var ids []int
	for _, s := range md.Schemas {
		ids = append(ids, s.ID)
	}
	return ids
}

func TestExpireCleanExpiredMetadata(t *testing.T) {
	e, tbl, pol := evolvedTable(t)
	if got := specIDs(tbl.Metadata); !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("fixture specs %v", got)
	}
	before := tree(t, e.Cat.Dir)

	// Without the flag, specs and schemas stay.
	plain, err := Run(e.Ctx, e.Cat, tbl, Options{Policy: pol, Cleanup: CleanupNone, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if len(plain.Plan.RemoveSpecIDs)+len(plain.Plan.RemoveSchemaIDs) != 0 {
		t.Fatalf("plan without --clean-expired-metadata removes specs %v schemas %v", plain.Plan.RemoveSpecIDs, plain.Plan.RemoveSchemaIDs)
	}

	opts := Options{Policy: pol, Cleanup: CleanupAll, CleanExpiredMetadata: true, Commit: e.Opts}
	dry := opts
	dry.DryRun = true
	rep, err := Run(e.Ctx, e.Cat, tbl, dry)
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	if !slices.Equal(rep.Plan.RemoveSpecIDs, []int{0}) || !slices.Equal(rep.Plan.RemoveSchemaIDs, []int{0}) {
		t.Fatalf("dry run plans to remove specs %v schemas %v, want [0] and [0]", rep.Plan.RemoveSpecIDs, rep.Plan.RemoveSchemaIDs)
	}
	if !mapsEqual(before, tree(t, e.Cat.Dir)) {
		t.Fatal("the dry run changed the catalog or the warehouse")
	}
	if idle, err := Idle(e.Ctx, tbl, opts); err != nil || idle {
		t.Fatalf("Idle = %v, %v; want busy: there is metadata to clean", idle, err)
	}

	rep, err = Run(e.Ctx, e.Cat, tbl, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	after := e.Load(t)
	// Spec 1 stays: a retained manifest holds files written with it; the
	// current schema stays though no snapshot names it; schema 1 stays:
	// a retained snapshot was written with it.
	if got := specIDs(after.Metadata); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("specs after: %v, want [1 2]", got)
	}
	if got := schemaIDs(after.Metadata); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("schemas after: %v, want [1 2]", got)
	}
	if after.Metadata.DefaultSpecID != 2 || after.Metadata.CurrentSchemaID != 2 {
		t.Errorf("default spec %d current schema %d, want 2 and 2", after.Metadata.DefaultSpecID, after.Metadata.CurrentSchemaID)
	}
	// Expiry's files are fake bytes: what must hold is that every file
	// the table still reaches is there, and the live data files did not
	// change.
	for p := range reachableAll(t, after) {
		if f, err := after.IO.Open(e.Ctx, p); err != nil {
			t.Errorf("a file the table reaches is gone: %s: %v", p, err)
		} else {
			f.Close()
		}
	}
	if got, want := liveData(t, e, after), liveData(t, e, tbl); !slices.Equal(got, want) {
		t.Errorf("live data files %v, before %v", got, want)
	}

	// Once nothing is left to clean, the run is idle.
	again := opts
	again.Policy.Now = time.Now()
	if idle, err := Idle(e.Ctx, after, again); err != nil || !idle {
		t.Errorf("Idle after cleaning = %v, %v; want idle", idle, err)
	}
}

func liveData(t *testing.T, e *env, tbl *catalog.Table) []string {
	t.Helper()
	var out []string
	for _, f := range e.LiveFiles(t, tbl).Data {
		out = append(out, f.Entry.DataFile.FilePath)
	}
	slices.Sort(out)
	return out
}
