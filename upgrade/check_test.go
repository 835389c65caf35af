package upgrade

import (
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

func metadata(t *testing.T, v int, props map[string]string, fields ...spec.NestedField) *spec.TableMetadata {
	t.Helper()
	s := spec.Schema{Fields: append([]spec.NestedField{{ID: 1, Name: "id", Type: spec.LongType{}, Required: true}}, fields...)}
	md, err := spec.NewTableMetadata(s, spec.PartitionSpec{}, spec.SortOrder{}, "file:///wh/t", props, v)
	if err != nil {
		t.Fatal(err)
	}
	return md
}

func entry(df manifest.DataFile) table.FileEntry {
	return table.FileEntry{Entry: manifest.Entry{Status: manifest.StatusAdded, DataFile: df}}
}

func i32(v int32) *int32 { return &v }
func i64(v int64) *int64 { return &v }

func dataManifest(files int32, rows int64) manifest.ManifestFile {
	return manifest.ManifestFile{Path: "m.avro", Content: manifest.ManifestContentData,
		AddedFilesCount: i32(files), ExistingFilesCount: i32(0), AddedRowsCount: i64(rows), ExistingRowsCount: i64(0)}
}

// find returns the finding of kind, failing when there is not exactly one.
func find(t *testing.T, r Report, kind string) Finding {
	t.Helper()
	var out []Finding
	for _, f := range r.Findings {
		if f.Kind == kind {
			out = append(out, f)
		}
	}
	if len(out) != 1 {
		t.Fatalf("%d findings of kind %s in %+v", len(out), kind, r.Findings)
	}
	return out[0]
}

func TestCheckFindings(t *testing.T) {
	ref := "s3://b/t/data/a.parquet"
	scoped := manifest.DataFile{Content: manifest.ContentPositionDeletes, FilePath: "p1.parquet", RecordCount: 3, ReferencedDataFile: &ref}
	bounded := manifest.DataFile{Content: manifest.ContentPositionDeletes, FilePath: "p2.parquet", RecordCount: 2,
		LowerBounds: map[int][]byte{spec.FieldIDFilePath: []byte(ref)}, UpperBounds: map[int][]byte{spec.FieldIDFilePath: []byte(ref)}}
	multi := manifest.DataFile{Content: manifest.ContentPositionDeletes, FilePath: "p3.parquet", RecordCount: 5}
	eq := manifest.DataFile{Content: manifest.ContentEqualityDeletes, FilePath: "e.parquet", RecordCount: 4, EqualityIDs: []int{1}}
	data := manifest.DataFile{Content: manifest.ContentData, FilePath: ref, RecordCount: 100}
	files := &table.FileSet{Data: []table.FileEntry{entry(data)}, Deletes: []table.FileEntry{entry(scoped), entry(bounded), entry(multi), entry(eq)}}
	mfs := []manifest.ManifestFile{dataManifest(1, 100), {Path: "d.avro", Content: manifest.ManifestContentDeletes}}

	cases := []struct {
		name     string
		in       Input
		kind     string
		severity Severity
		command  string
		message  string
		ready    bool
	}{
		{"position deletes", Input{Metadata: metadata(t, 2, nil), Files: files, Manifests: mfs},
			"position-delete-debt", Blocker, "icectl upgrade ns.t --to 3 --merge-deletes", "3 position-delete files (10 deleted rows, 1 of the files covering several data files)", false},
		{"equality deletes", Input{Metadata: metadata(t, 2, nil), Files: &table.FileSet{Data: files.Data, Deletes: []table.FileEntry{entry(eq)}}, Manifests: mfs},
			"equality-deletes", Warning, "icectl compact ns.t", "1 equality-delete file (4 keys)", true},
		{"first commit cost", Input{Metadata: metadata(t, 2, nil), Files: &table.FileSet{Data: files.Data}, Manifests: mfs},
			"first-v3-commit", Info, "icectl upgrade ns.t --to 3 --assign-row-ids", "gives row ids to 1 data manifest (1 data files, 100 rows)", true},
		{"granularity property", Input{Metadata: metadata(t, 2, map[string]string{"write.delete.granularity": "partition"})},
			"property", Warning, "icectl table remove-properties ns.t write.delete.granularity", "write.delete.granularity=partition: in v3 is ignored", true},
		{"merge-on-read property", Input{Metadata: metadata(t, 2, map[string]string{"write.delete.mode": "merge-on-read"})},
			"property", Warning, "", "deletion vectors", true},
		{"reserved column", Input{Metadata: metadata(t, 2, nil, spec.NestedField{ID: 2, Name: "_row_id", Type: spec.LongType{}})},
			"unsupported", Blocker, "", "column named _row_id", false},
		{"unknown transform", Input{Metadata: func() *spec.TableMetadata {
			md := metadata(t, 2, nil)
			md.PartitionSpecs = append(md.PartitionSpecs, spec.PartitionSpec{ID: 1, Fields: []spec.PartitionField{
				{SourceID: 1, FieldID: 1000, Name: "z", Transform: spec.ParseTransform("zorder[3]")}}})
			return md
		}()}, "unsupported", Blocker, "", `transform "zorder[3]"`, false},
		{"checklist", Input{Metadata: metadata(t, 2, nil)}, "engines", Info, "", "must support format v3", true},
		{"already v3", Input{Metadata: metadata(t, 3, nil)}, "at-target", Info, "", "at format v3 already", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.Table, c.in.Target = "ns.t", 3
			r := Check(c.in)
			f := find(t, r, c.kind)
			if f.Severity != c.severity || f.Command != c.command || !strings.Contains(f.Message, c.message) {
				t.Errorf("finding %+v, want severity %s command %q message with %q", f, c.severity, c.command, c.message)
			}
			if r.Ready != c.ready {
				t.Errorf("ready = %v, want %v (%+v)", r.Ready, c.ready, r.Findings)
			}
		})
	}
}

func TestCheckCounts(t *testing.T) {
	d := manifest.DataFile{Content: manifest.ContentData, FilePath: "a", RecordCount: 10}
	assigned := d
	assigned.FirstRowID = i64(0)
	dvRef := "a"
	dv := manifest.DataFile{Content: manifest.ContentPositionDeletes, FilePath: "dv.puffin", FileFormat: "PUFFIN", RecordCount: 1,
		ReferencedDataFile: &dvRef, ContentOffset: i64(4), ContentSizeInBytes: i64(40)}
	withID := dataManifest(1, 10)
	withID.FirstRowID = i64(0)
	r := Check(Input{Table: "t", Target: 3, Metadata: metadata(t, 3, nil),
		Manifests: []manifest.ManifestFile{withID, dataManifest(1, 10), dataManifest(0, 0)},
		Files:     &table.FileSet{Data: []table.FileEntry{entry(d), entry(assigned)}, Deletes: []table.FileEntry{entry(dv)}}})
	if r.DataManifests != 3 || r.UnassignedManifests != 1 || r.RowsToAssign != 10 || r.DataRecords != 20 || r.DeletionVectors != 1 || r.PositionDeleteFiles != 0 {
		t.Errorf("report %+v", r)
	}
	if f := find(t, r, "at-target"); !strings.Contains(f.Message, "but the row-id assignment") {
		t.Errorf("at-target finding %q does not mention the pending row ids", f.Message)
	}
}

func TestCheckTarget(t *testing.T) {
	for _, c := range []struct {
		from, to int
		want     string
	}{{2, 1, "icectl upgrades to 2 or 3"}, {2, 4, "icectl upgrades to 2 or 3"}, {3, 2, "cannot be downgraded to v2"}} {
		if err := CheckTarget(c.from, c.to); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckTarget(%d, %d) = %v, want %q", c.from, c.to, err, c.want)
		}
	}
	for _, c := range [][2]int{{1, 2}, {1, 3}, {2, 3}, {3, 3}} {
		if err := CheckTarget(c[0], c[1]); err != nil {
			t.Errorf("CheckTarget(%d, %d) = %v", c[0], c[1], err)
		}
	}
}

// Preflight finds the blockers Check finds without reading a data
// manifest: the upgrade it guards reads only the manifest list.
func TestPreflightReadsNoDataManifest(t *testing.T) {
	e, tbl := newTable(t, 2)
	tbl = e.appendRows(t, tbl, 10)
	data := tbl.Metadata.Location + "/data/f1.parquet"
	del := manifest.DataFile{Content: manifest.ContentPositionDeletes, FilePath: tbl.Metadata.Location + "/data/d1.parquet", FileFormat: "PARQUET",
		Partition: []any{}, RecordCount: 1, FileSizeInBytes: 100, ReferencedDataFile: &data}
	tbl, _, err := table.CommitChange(e.Ctx, e.Cat, tbl, table.Change{Operation: spec.OperationDelete, AddDeletes: []manifest.DataFile{del}}, e.Opts)
	if err != nil {
		t.Fatal(err)
	}
	mfs, err := table.ManifestFiles(e.Ctx, tbl.IO, tbl.Metadata.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.Content == manifest.ManifestContentData {
			if err := tbl.IO.Remove(e.Ctx, mf.Path); err != nil {
				t.Fatal(err)
			}
		}
	}
	r, err := Preflight(e.Ctx, tbl, 3)
	if err != nil {
		t.Fatal(err)
	}
	if bs := r.Unsettled(false); len(bs) != 1 || bs[0].Kind != PositionDeleteDebt || r.UnassignedManifests != 1 {
		t.Errorf("blockers %v, unassigned manifests %d", bs, r.UnassignedManifests)
	}
	if bs := r.Unsettled(true); len(bs) != 0 {
		t.Errorf("with --merge-deletes, blockers %v", bs)
	}
}
