package reclaim

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/fileio/faultio"
	"github.com/icectl/icectl/iceberg/spec"
)

func TestScopeContains(t *testing.T) {
	md := &spec.TableMetadata{
		Location: "s3://bucket/wh/db/t/",
		Properties: map[string]string{
			PropDataPath:          "s3a://bucket/data/t",
			PropObjectStoragePath: "s3://bucket", // a whole bucket: too broad, ignored
			PropMetadataPath:      "relative/meta",
		},
	}
	s := TableScope(md)
	if got, want := s.Roots(), []string{"s3://bucket/data/t", "s3://bucket/wh/db/t"}; !slices.Equal(got, want) {
		t.Fatalf("roots = %v, want %v", got, want)
	}
	for _, c := range []struct {
		path string
		want bool
	}{
		{"s3://bucket/wh/db/t/data/a.parquet", true},
		{"s3a://bucket/wh/db/t/metadata/x.avro", true}, // s3a is the same object
		{"s3://bucket/data/t/b.parquet", true},
		{"s3://bucket/wh/db/t2/data/a.parquet", false}, // sibling sharing the prefix
		{"s3://bucket/wh/db/t", false},                 // the root itself
		{"s3://bucket/wh/db/t/", false},
		{"s3://bucket/wh/db/t/../t2/a.parquet", false},
		{"s3://bucket/wh/db/t/./a.parquet", false},
		{"s3://other/wh/db/t/a.parquet", false},
		{"s3://bucket/other.parquet", false},
		{"gs://bucket/wh/db/t/a.parquet", false},
		{"data/a.parquet", false},
		{"", false},
	} {
		if got := s.Contains(c.path); got != c.want {
			t.Errorf("Contains(%q) = %v, want %v", c.path, got, c.want)
		}
	}

	azure := TableScope(&spec.TableMetadata{Location: "abfss://c@acct.dfs.core.windows.net/wh/t"})
	for _, c := range []struct {
		path string
		want bool
	}{
		{"abfss://c@acct.dfs.core.windows.net/wh/t/data/a.parquet", true},
		{"wasbs://c@acct.blob.core.windows.net/wh/t/data/a.parquet", true}, // the same blob
		{"abfs://c@acct.dfs.core.windows.net/wh/t/data/a.parquet", true},
		{"wasbs://c@other.blob.core.windows.net/wh/t/data/a.parquet", false},
		{"abfss://d@acct.dfs.core.windows.net/wh/t/data/a.parquet", false},
		{"abfss://c@acct.dfs.core.windows.net/wh/t2/a.parquet", false},
	} {
		if got := azure.Contains(c.path); got != c.want {
			t.Errorf("azure Contains(%q) = %v, want %v", c.path, got, c.want)
		}
	}

	local := TableScope(&spec.TableMetadata{Location: "/wh/db/t"})
	for _, c := range []struct {
		path string
		want bool
	}{
		{"/wh/db/t/data/a.parquet", true},
		{"file:/wh/db/t/data/a.parquet", true},
		{"file:///wh/db/t/data/a.parquet", true},
		{"file://localhost/wh/db/t/data/a.parquet", true},
		{"/wh/db/t//data/a.parquet", true}, // the same file to the kernel
		{"file://host/wh/db/t/data/a.parquet", false},
		{"/wh/db/t2/a.parquet", false},
		{"/wh/db/t/../../../etc/passwd", false},
		{"../../etc/passwd", false},
		{"/etc/passwd", false},
	} {
		if got := local.Contains(c.path); got != c.want {
			t.Errorf("local Contains(%q) = %v, want %v", c.path, got, c.want)
		}
	}
	if root := TableScope(&spec.TableMetadata{Location: "/"}); len(root.Roots()) != 0 || root.Contains("/etc/passwd") {
		t.Errorf("a table at / owns %v", root.Roots())
	}
}

func writeFiles(t *testing.T, fio fileio.FileIO, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := fileio.WriteFile(context.Background(), fio, p, []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
}

func exists(t *testing.T, fio fileio.FileIO, p string) bool {
	t.Helper()
	_, err := fileio.ReadFile(context.Background(), fio, p)
	if err != nil && !errors.Is(err, fileio.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

func TestDeleterGuards(t *testing.T) {
	dir := t.TempDir()
	tbl := filepath.Join(dir, "t")
	fio := fileio.NewLocal()
	inside := tbl + "/data/a.parquet"
	kept := tbl + "/data/live.parquet"
	sibling := filepath.Join(dir, "t2") + "/data/a.parquet"
	escape := tbl + "/../t2/data/a.parquet"
	writeFiles(t, fio, inside, kept, sibling)
	gone := tbl + "/data/already-gone.parquet"

	d := Deleter{
		IO:    fio,
		Scope: TableScope(&spec.TableMetadata{Location: tbl}),
		Keep:  func(p string) bool { return p == kept },
	}
	rep := d.Delete(context.Background(), []string{inside, kept, sibling, escape, gone, inside})
	if !slices.Equal(rep.Deleted, []string{inside, gone}) {
		t.Errorf("deleted = %v", rep.Deleted)
	}
	var refused []string
	for _, r := range rep.Refused {
		refused = append(refused, r.Path)
	}
	if !slices.Equal(refused, []string{kept, sibling, escape}) {
		t.Errorf("refused = %v", rep.Refused)
	}
	if exists(t, fio, inside) || !exists(t, fio, kept) || !exists(t, fio, sibling) {
		t.Error("wrong files on disk after Delete")
	}
	err := rep.Err()
	if err == nil || !strings.Contains(err.Error(), "3 of 5 files not deleted") || !strings.Contains(err.Error(), sibling) {
		t.Errorf("Err() = %v", err)
	}
}

func TestDeleterReportsAndRetriesFailures(t *testing.T) {
	ctx := context.Background()
	mem := fileio.NewMem()
	a, b, c := "mem://wh/t/data/a", "mem://wh/t/data/b", "mem://wh/t/data/c"
	writeFiles(t, mem, a, b, c)
	scope := NewScope("mem://wh/t")

	// A transient failure of the first bulk call is retried.
	flaky := faultio.New(mem)
	flaky.FailNth(faultio.RemoveMany, 1)
	rep := (&Deleter{IO: flaky, Scope: scope}).Delete(ctx, []string{a})
	if rep.Err() != nil || exists(t, mem, a) {
		t.Fatalf("a transient failure was not retried: %v", rep.Err())
	}

	// A path that always fails is reported with the store's error; the
	// others are still deleted.
	broken := faultio.New(mem)
	broken.FailPath(faultio.Remove, "/data/c")
	d := &Deleter{IO: onlyRemove{broken}, Scope: scope}
	rep = d.Delete(ctx, []string{b, c})
	if !slices.Equal(rep.Deleted, []string{b}) || len(rep.Failed) != 1 || rep.Failed[0].Path != c {
		t.Fatalf("report = %+v", rep)
	}
	if err := rep.Err(); !errors.Is(err, faultio.ErrInjected) {
		t.Errorf("Err() = %v, want it to wrap the store error", err)
	}
	if got := broken.Calls(faultio.Remove); got != 2+retries {
		t.Errorf("remove calls = %d, want %d (one for b, %d tries for c)", got, 2+retries, 1+retries)
	}
	if exists(t, mem, b) || !exists(t, mem, c) {
		t.Error("wrong files left")
	}
}

// onlyRemove hides BulkRemover so the Deleter removes one by one.
type onlyRemove struct{ fileio.FileIO }

func TestIsMetadataJSON(t *testing.T) {
	for _, c := range []struct {
		name string
		want bool
	}{
		{"s3://b/t/metadata/00001-6e5c0f1b-3a4d-4b5e-8f9a-0b1c2d3e4f50.metadata.json", true},
		{"/t/metadata/00001-6e5c0f1b.gz.metadata.json", true},
		{"/t/metadata/v12.metadata.json", true},
		{"/t/metadata/v12.gz.metadata.json", true},
		{"/t/metadata/v3-abc.metadata.json", true},
		{"/t/metadata/snap-1-1-abc.avro", false},
		{"/t/data/part-0.parquet", false},
		{"/t/metadata/.metadata.json", false},
		{"/t/metadata/x.metadata.json", false},
		{"/t/metadata/00001-x.metadata.json.bak", false},
		{"/t/metadata/version-hint.text", false},
	} {
		if got := IsMetadataJSON(c.name); got != c.want {
			t.Errorf("IsMetadataJSON(%q) = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRemovedMetadataFiles(t *testing.T) {
	base := &spec.TableMetadata{MetadataLog: logOf("m1", "m2", "m3")}
	committed := &spec.TableMetadata{MetadataLog: logOf("m3", "m4")}
	got := RemovedMetadataFiles("m4", base, "m5", committed)
	if strings.Join(got, ",") != "m1,m2" {
		t.Errorf("removed = %v, want [m1 m2]", got)
	}
}

func logOf(files ...string) []spec.MetadataLogEntry {
	var out []spec.MetadataLogEntry
	for _, f := range files {
		out = append(out, spec.MetadataLogEntry{MetadataFile: f})
	}
	return out
}

func TestDeleteRemovedMetadata(t *testing.T) {
	ctx := context.Background()
	mem := fileio.NewMem()
	meta := "mem://wh/t/metadata/"
	old1 := meta + "00001-a.metadata.json"
	old2 := meta + "00002-b.metadata.json"
	base := meta + "00003-c.metadata.json"
	next := meta + "00004-d.metadata.json"
	outside := "mem://elsewhere/00000-x.metadata.json"
	data := "mem://wh/t/data/part-0.parquet"
	list := meta + "00000-snap.metadata.json" // a manifest list disguised by name
	writeFiles(t, mem, old1, old2, base, next, outside, data, list)
	baseMD := &spec.TableMetadata{
		Location:    "mem://wh/t",
		MetadataLog: logOf(outside, data, list, old1, old2),
		Properties:  map[string]string{PropDeleteAfterCommit: "true"},
	}
	committed := &spec.TableMetadata{
		Location:    "mem://wh/t",
		MetadataLog: logOf(base),
		Properties:  map[string]string{PropDeleteAfterCommit: "true"},
		Snapshots:   []spec.Snapshot{{SnapshotID: 1, ManifestList: list}},
	}
	rep := DeleteRemovedMetadata(ctx, mem, base, baseMD, next, committed)
	if !slices.Equal(rep.Deleted, []string{old1, old2}) {
		t.Errorf("deleted = %v, want %v", rep.Deleted, []string{old1, old2})
	}
	if len(rep.Refused) != 3 || rep.Err() == nil {
		t.Errorf("refused = %+v", rep.Refused)
	}
	for _, p := range []string{base, next, outside, data, list} {
		if !exists(t, mem, p) {
			t.Errorf("%s was deleted", p)
		}
	}

	committed.Properties[PropDeleteAfterCommit] = "false"
	if rep := DeleteRemovedMetadata(ctx, mem, next, committed, meta+"00005-e.metadata.json", committed); len(rep.Deleted)+len(rep.Refused) != 0 {
		t.Errorf("deleted with the property off: %+v", rep)
	}
}
