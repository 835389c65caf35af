package relocate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/fixture"
)

func writeMetadata(t *testing.T, path string, log ...string) {
	t.Helper()
	md, err := spec.NewTableMetadata(fixture.IDNameSchema(), spec.PartitionSpec{}, spec.SortOrder{}, "file:///x", nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range log {
		md.MetadataLog = append(md.MetadataLog, spec.MetadataLogEntry{TimestampMS: int64(i), MetadataFile: l})
	}
	data, err := md.Marshal(false)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Newest by version number, by version-hint.text, and by the log for
// names without a version; two files of one version cannot be told apart.
func TestCheckNewest(t *testing.T) {
	ctx := context.Background()
	fio := fileio.NewLocal()
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	writeMetadata(t, p("00001-a.metadata.json"))
	writeMetadata(t, p("00002-b.metadata.json"))
	if err := os.WriteFile(p("00002-b.metadata.json.crc"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(name string, wantNewest bool, why string) {
		t.Helper()
		err := CheckNewest(ctx, fio, p(name))
		switch {
		case wantNewest && err != nil:
			t.Errorf("%s: %v, want newest", name, err)
		case !wantNewest && (!errors.Is(err, ErrNotNewest) || !strings.Contains(err.Error(), why)):
			t.Errorf("%s: %v, want not newest because %q", name, err, why)
		}
	}
	check("00002-b.metadata.json", true, "")
	check("00001-a.metadata.json", false, "00002-b.metadata.json has version 2")
	writeMetadata(t, p("00002-c.metadata.json"))
	check("00002-b.metadata.json", false, "same version 2")

	hadoop := t.TempDir()
	writeMetadata(t, filepath.Join(hadoop, "v3.metadata.json"))
	if err := CheckNewest(ctx, fio, filepath.Join(hadoop, "v3.metadata.json")); err != nil {
		t.Errorf("v3 alone: %v", err)
	}
	if err := os.WriteFile(filepath.Join(hadoop, VersionHintFile), []byte("5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckNewest(ctx, fio, filepath.Join(hadoop, "v3.metadata.json")); !errors.Is(err, ErrNotNewest) {
		t.Errorf("v3 with a hint of 5: %v", err)
	}

	plain := t.TempDir()
	a, b := filepath.Join(plain, "a.metadata.json"), filepath.Join(plain, "b.metadata.json")
	writeMetadata(t, a)
	writeMetadata(t, b, a)
	if err := CheckNewest(ctx, fio, b); err != nil {
		t.Errorf("b, whose log lists a: %v", err)
	}
	if err := CheckNewest(ctx, fio, a); !errors.Is(err, ErrNotNewest) {
		t.Errorf("a, listed by b's log: %v", err)
	}
}

// A v2 table with a file-scoped position-delete file with file_path
// bounds: the copy's delete entry names the new data file, its bounds are
// under the target, and its size is the rewritten file's. "/a" and "/a/"
// are the same prefix.
func TestRewritePositionDeleteEntry(t *testing.T) {
	ctx := context.Background()
	c := fixture.NewSQLite(t)
	tb := c.Table(t, fixture.TableOptions{Files: [][]int64{{1, 2, 3}}})
	data := tb.Data[0].FilePath
	pos := tb.WritePositionDeletes(t, nil, "pos", nil, map[string][]int64{data: {1}}, true)
	pos.LowerBounds = map[int][]byte{posFilePathID: []byte(data)}
	pos.UpperBounds = map[int][]byte{posFilePathID: []byte(data)}
	tbl := tb.AddDeletes(t, nil, pos)
	src := tbl.Metadata.Location
	dstDir := t.TempDir()
	dst := "file://" + dstDir + "/moved"
	stage := filepath.Join(t.TempDir(), "stage")
	res, err := Rewrite(ctx, fileio.ReadOnly(tbl.IO), fileio.NewLocal(), tbl.MetadataLocation, tbl.Metadata,
		Options{SourcePrefix: src + "/", TargetPrefix: dst, StagingDir: stage})
	if err != nil {
		t.Fatal(err)
	}
	if res.RewrittenDeleteFiles != 1 || res.MetadataFiles != len(tbl.Metadata.MetadataLog)+1 || res.ManifestLists != len(tbl.Metadata.Snapshots) {
		t.Errorf("result %+v", res)
	}
	local := fileio.NewLocal()
	for _, p := range res.Files {
		b, err := fileio.ReadFile(ctx, local, p.Source)
		if err != nil {
			t.Fatal(err)
		}
		if err := fileio.WriteFile(ctx, local, p.Target, b); err != nil {
			t.Fatal(err)
		}
	}
	md, err := catalog.ReadMetadata(ctx, local, dst+"/metadata/"+res.LatestVersion)
	if err != nil {
		t.Fatal(err)
	}
	newData := strings.Replace(data, src, dst, 1)
	found := 0
	err = table.WalkEntries(ctx, local, md.CurrentSnapshot(), table.WalkOptions{Content: table.DeletesOnly}, func(e table.FileEntry) error {
		df := e.Entry.DataFile
		found++
		fi, err := os.Stat(strings.TrimPrefix(df.FilePath, "file://"))
		if err != nil {
			return err
		}
		if df.ReferencedDataFile == nil || *df.ReferencedDataFile != newData || string(df.LowerBounds[posFilePathID]) != newData ||
			string(df.UpperBounds[posFilePathID]) != newData || df.FileSizeInBytes != fi.Size() {
			t.Errorf("delete entry %+v (file size %d)", df, fi.Size())
		}
		return nil
	})
	if err != nil || found != 1 {
		t.Fatalf("%d delete entries: %v", found, err)
	}
	got, err := table.ReadPositionDeletes(ctx, local, &manifest.DataFile{FilePath: strings.Replace(pos.FilePath, src, dst, 1)}, nil)
	if err != nil || len(got) != 1 || got[newData] == nil || !got[newData].Contains(1) {
		t.Errorf("rewritten position deletes %v (%v)", got, err)
	}
}

// A path outside the source prefix found after files were staged stops
// the run and leaves the staging directory as it was; a v1 table and a
// staging directory that is not empty are refused before anything is
// written; a dry run writes nothing.
func TestRewriteRefusals(t *testing.T) {
	ctx := context.Background()
	c := fixture.NewSQLite(t)
	tb := c.Table(t, fixture.TableOptions{Files: [][]int64{{1}}})
	tbl := tb.Append(t, nil, fixture.Listed("file:///elsewhere/x.parquet", nil, 1, 10))
	stage := filepath.Join(t.TempDir(), "stage")
	opts := Options{SourcePrefix: tbl.Metadata.Location, TargetPrefix: "file:///new", StagingDir: stage}
	if _, err := Rewrite(ctx, tbl.IO, fileio.NewLocal(), tbl.MetadataLocation, tbl.Metadata, opts); !errors.Is(err, ErrPrefix) {
		t.Fatalf("a data file outside the prefix: %v", err)
	}
	var left []string
	filepath.WalkDir(stage, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("a failed run left %v", left)
	}

	ok := tb.Load(t)
	ok.Metadata.Snapshots = nil
	busy := t.TempDir()
	os.WriteFile(filepath.Join(busy, "f"), nil, 0o644)
	if _, err := Rewrite(ctx, ok.IO, fileio.NewLocal(), ok.MetadataLocation, ok.Metadata, Options{SourcePrefix: ok.Metadata.Location, TargetPrefix: "/n", StagingDir: busy}); !errors.Is(err, ErrStageNotEmpty) {
		t.Errorf("a staging directory that is not empty: %v", err)
	}
	// A stage inside the table's location (in any spelling of a local
	// path): orphan removal would delete the staged copy.
	for _, inside := range []string{strings.TrimPrefix(ok.Metadata.Location, "file://") + "/move-stage", ok.Metadata.Location + "/metadata/stage/"} {
		if _, err := Rewrite(ctx, ok.IO, fileio.NewLocal(), ok.MetadataLocation, ok.Metadata, Options{SourcePrefix: ok.Metadata.Location, TargetPrefix: "/n", StagingDir: inside}); !errors.Is(err, ErrStageInTable) {
			t.Errorf("a staging directory %s inside the table: %v", inside, err)
		}
	}
	v1 := *ok.Metadata
	v1.FormatVersion = 1
	if _, err := Rewrite(ctx, ok.IO, fileio.NewLocal(), ok.MetadataLocation, &v1, Options{SourcePrefix: ok.Metadata.Location, TargetPrefix: "/n", StagingDir: stage}); err == nil || !strings.Contains(err.Error(), "format v1") {
		t.Errorf("a v1 table: %v", err)
	}
	good := tb.Load(t)
	dry := filepath.Join(t.TempDir(), "dry")
	if _, err := Rewrite(ctx, good.IO, fileio.NewLocal(), good.MetadataLocation, good.Metadata, Options{SourcePrefix: "file:///elsewhere", TargetPrefix: "/n", StagingDir: dry, DryRun: true}); !errors.Is(err, ErrPrefix) {
		t.Errorf("dry run with a prefix that matches nothing: %v", err)
	}
	if _, err := os.Stat(dry); !os.IsNotExist(err) {
		t.Errorf("a dry run created %s", dry)
	}
}

// Spark names the files of a table located at file:///p as file:/p
// (Hadoop's spelling), PyIceberg's add_files a local file by its bare
// path: one prefix, in any of these spellings, covers them all, and
// every target path takes the target prefix's spelling. A prefix of
// another directory still matches nothing.
func TestRewriteFileURISpellings(t *testing.T) {
	ctx := context.Background()
	c := fixture.NewSQLite(t)
	tb := c.Table(t, fixture.TableOptions{Files: [][]int64{{1}}})
	loc := tb.Load(t).Metadata.Location
	if !strings.HasPrefix(loc, "file:///") {
		t.Fatalf("fixture location %s", loc)
	}
	bare := strings.TrimPrefix(loc, "file://")
	hadoop := "file:" + bare
	tbl := tb.Append(t, nil, fixture.Listed(hadoop+"/data/hadoop.parquet", nil, 1, 10), fixture.Listed(bare+"/imported/bare.parquet", nil, 1, 10))
	for _, src := range []string{loc, hadoop + "/", bare} {
		res, err := Rewrite(ctx, tbl.IO, fileio.NewLocal(), tbl.MetadataLocation, tbl.Metadata,
			Options{SourcePrefix: src, TargetPrefix: "file:///new/t", StagingDir: filepath.Join(t.TempDir(), "stage")})
		if err != nil {
			t.Fatalf("prefix %s: %v", src, err)
		}
		found := 0
		for _, p := range res.Files {
			if !strings.HasPrefix(p.Target, "file:///new/t/") {
				t.Errorf("prefix %s: %s goes to %s", src, p.Source, p.Target)
			}
			if p.Source == hadoop+"/data/hadoop.parquet" && p.Target == "file:///new/t/data/hadoop.parquet" ||
				p.Source == bare+"/imported/bare.parquet" && p.Target == "file:///new/t/imported/bare.parquet" {
				found++
			}
		}
		if found != 2 {
			t.Errorf("prefix %s: the file:/ and bare data files are not listed to their places: %v", src, res.Files)
		}
	}
	if _, err := Rewrite(ctx, tbl.IO, fileio.NewLocal(), tbl.MetadataLocation, tbl.Metadata,
		Options{SourcePrefix: hadoop + "-other", TargetPrefix: "file:///new/t", StagingDir: filepath.Join(t.TempDir(), "stage")}); !errors.Is(err, ErrPrefix) {
		t.Errorf("a prefix of another directory: %v", err)
	}
}

// moveTo rewrites tbl to dst and copies the listed files there, as the
// CLI does; it returns the moved table's current metadata.
func moveTo(t *testing.T, tbl *catalog.Table, dst string) *spec.TableMetadata {
	t.Helper()
	ctx := context.Background()
	res, err := Rewrite(ctx, fileio.ReadOnly(tbl.IO), fileio.NewLocal(), tbl.MetadataLocation, tbl.Metadata,
		Options{SourcePrefix: tbl.Metadata.Location, TargetPrefix: dst, StagingDir: filepath.Join(t.TempDir(), "stage")})
	if err != nil {
		t.Fatal(err)
	}
	local := fileio.NewLocal()
	for _, p := range res.Files {
		b, err := fileio.ReadFile(ctx, local, p.Source)
		if err != nil {
			t.Fatal(err)
		}
		if err := fileio.WriteFile(ctx, local, p.Target, b); err != nil {
			t.Fatal(err)
		}
	}
	md, err := catalog.ReadMetadata(ctx, local, dst+"/metadata/"+res.LatestVersion)
	if err != nil {
		t.Fatal(err)
	}
	return md
}

// Position-delete files with rows out of order (iceberg-go writes them
// so) in an older snapshot and the current one are taken as they are:
// the moved table reads the same rows in every snapshot, and each
// rewritten file holds the same rows, sorted by file_path and pos.
// A file holding a row twice is refused, and nothing is left staged.
func TestRewriteUnsortedPositionDeletes(t *testing.T) {
	ctx := context.Background()
	c := fixture.NewSQLite(t)
	tb := c.Table(t, fixture.TableOptions{Files: [][]int64{{1, 2, 3, 4}, {5, 6, 7}}})
	tbl := tb.Load(t)
	fs := tb.LiveFiles(t, tbl)
	a, b := fs.Data[0].Entry.DataFile.FilePath, fs.Data[1].Entry.DataFile.FilePath
	if b < a {
		a, b = b, a
	}
	old := tb.WritePositionDeleteRows(t, nil, "old", nil, []string{b, a, b, a}, []int64{2, 3, 0, 1})
	tb.AddDeletes(t, nil, old)
	cur := tb.WritePositionDeleteRows(t, nil, "cur", nil, []string{b, a}, []int64{1, 0})
	tbl = tb.AddDeletes(t, nil, cur)

	src := tbl.Metadata.Location
	dst := "file://" + t.TempDir() + "/moved"
	md := moveTo(t, tbl, dst)
	local := fileio.NewLocal()
	if len(md.Snapshots) != len(tbl.Metadata.Snapshots) {
		t.Fatalf("moved table has %d snapshots, the source %d", len(md.Snapshots), len(tbl.Metadata.Snapshots))
	}
	for i := range tbl.Metadata.Snapshots {
		want, err := scan.Checksum(ctx, tbl.IO, tbl.Metadata, &tbl.Metadata.Snapshots[i], scan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := scan.Checksum(ctx, local, md, &md.Snapshots[i], scan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("snapshot %d: the moved table reads %+v, the source %+v", md.Snapshots[i].SnapshotID, got, want)
		}
	}
	if got := tb.Checksum(t, tbl); got.RowCount == 0 || got.RowCount == 7 {
		t.Errorf("source reads %d rows of 7: the deletes must apply, and not to every row", got.RowCount)
	}
	na, nb := strings.Replace(a, src, dst, 1), strings.Replace(b, src, dst, 1)
	for name, want := range map[string][]string{
		"old.parquet": {fmt.Sprint(na, 1), fmt.Sprint(na, 3), fmt.Sprint(nb, 0), fmt.Sprint(nb, 2)},
		"cur.parquet": {fmt.Sprint(na, 0), fmt.Sprint(nb, 1)},
	} {
		f, err := local.Open(ctx, table.DataLocation(md)+"/"+name)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		err = datafile.ReadPositionDeletes(ctx, f, f.Size(), func(p string, pos int64) error {
			got = append(got, fmt.Sprint(p, pos))
			return nil
		})
		f.Close()
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("moved %s holds %v (%v), want %v", name, got, err, want)
		}
	}

	dup := tb.WritePositionDeleteRows(t, nil, "dup", nil, []string{b, a, b}, []int64{1, 0, 1})
	tbl = tb.AddDeletes(t, nil, dup)
	stage := filepath.Join(t.TempDir(), "stage")
	_, err := Rewrite(ctx, fileio.ReadOnly(tbl.IO), fileio.NewLocal(), tbl.MetadataLocation, tbl.Metadata,
		Options{SourcePrefix: src, TargetPrefix: dst + "2", StagingDir: stage})
	if err == nil || !strings.Contains(err.Error(), "twice") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a position-delete file with a row twice: %v", err)
	}
	var left []string
	filepath.WalkDir(stage, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("the refused run left %v", left)
	}
}
