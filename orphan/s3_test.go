package orphan

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// TestS3 runs the adversarial cases on the real S3 server: s3 vs s3a,
// another bucket (authority), doubled slashes (distinct objects on S3), a
// sibling table sharing the prefix, files younger than the cutoff, trash
// and restore byte for byte, then deletion.
func TestS3(t *testing.T) {
	endpoint := testenv.Need(t, testenv.S3Endpoint, "S3 server (versitygw)")
	props := map[string]string{
		fileio.S3Endpoint:        endpoint,
		fileio.S3AccessKeyID:     testenv.Need(t, testenv.S3AccessKey, "S3 access key"),
		fileio.S3SecretAccessKey: testenv.Need(t, testenv.S3SecretKey, "S3 secret key"),
		fileio.S3PathStyleAccess: "true",
		fileio.S3ListPageSize:    "3", // many pages for a few files
		fileio.S3DeleteBatchSize: "2",
	}
	bucket := testenv.Need(t, testenv.S3Bucket, "S3 bucket")
	base := fmt.Sprintf("s3://%s/orphan-test-%d", bucket, time.Now().UnixNano())
	f := newFixtureProps(t, base+"/wh", props)
	id := f.create(t, "t", "", nil)
	id2 := f.create(t, "t2", "", nil)
	tbl := f.load(t, id)
	loc := tbl.Metadata.Location // s3://bucket/orphan-test-N/wh/ns/t
	key := strings.TrimPrefix(loc, "s3://"+bucket)

	f.appendFiles(t, id, true, loc+"/data/a.parquet")
	// Written as s3://, referenced as s3a://; written and referenced with
	// a doubled slash; written in this bucket, referenced in another.
	for _, p := range []string{loc + "/data/s3a.parquet", loc + "/data//dbl.parquet", loc + "/data/dbl.parquet", loc + "/data/auth.parquet"} {
		f.put(t, tbl.IO, p)
	}
	f.appendFiles(t, id, false, "s3a://"+bucket+key+"/data/s3a.parquet", loc+"/data//dbl.parquet", "s3://elsewhere"+key+"/data/auth.parquet")
	loc2 := f.load(t, id2).Metadata.Location
	f.appendFiles(t, id2, true, loc2+"/data/a.parquet")
	f.put(t, tbl.IO, loc2+"/data/unreferenced.parquet")
	f.put(t, tbl.IO, loc+"-notes.txt")
	orphans := []string{loc + "/data/orphan.parquet", loc + "/metadata/orphan.avro", loc + "/data/x/y/z.bin"}
	for _, p := range orphans {
		f.put(t, tbl.IO, p)
	}
	all := func() map[string][]byte { return files(t, tbl.IO, base+"/") }
	before := all()

	// With the real clock every file is young: nothing is an orphan.
	// (The young check comes before the mismatch check: no conflict
	// either.)
	var s sink
	if sum, err := Run(f.Ctx, f.loader(id), Options{}, &s); err != nil || sum.Orphans != 0 || sum.Conflicts != 0 || sum.Young == 0 {
		t.Errorf("real clock: %+v %v", sum, err)
	}

	// Default mode: the file referenced in another bucket is a conflict,
	// and nothing is deleted.
	s = sink{}
	if _, err := Run(f.Ctx, f.loader(id), opts(), &s); !isErr(err, ErrPrefixMismatch) {
		t.Fatalf("error %v, want ErrPrefixMismatch", err)
	}
	if len(s.conflicts) != 1 || s.conflicts[0].Path != loc+"/data/auth.parquet" || s.conflicts[0].ReferencedAs != "s3://elsewhere"+key+"/data/auth.parquet" {
		t.Errorf("conflicts %+v", s.conflicts)
	}
	if d := diff(before, all()); len(d) != 0 {
		t.Fatalf("conflicting run changed %v", d)
	}

	// Trash, then restore: byte for byte.
	o := opts()
	o.PrefixMismatch, o.Trash = PrefixIgnore, ".icectl-trash"
	s = sink{}
	if _, err := Run(f.Ctx, f.loader(id), o, &s); err != nil {
		t.Fatal(err)
	}
	if got := s.byStatus(); !sameStrings(got[StatusTrashed], orphans) || len(got) != 1 {
		t.Fatalf("trash run reports %v", got)
	}
	if _, err := Restore(f.Ctx, f.loader(id), RestoreOptions{Trash: ".icectl-trash"}, func(Restored) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if d := diff(before, all()); len(d) != 0 {
		t.Fatalf("after restore: %v", d)
	}

	// Delete: only the orphans go.
	o = opts()
	o.PrefixMismatch = PrefixIgnore
	s = sink{}
	if _, err := Run(f.Ctx, f.loader(id), o, &s); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range orphans {
		want = append(want, "- "+p)
	}
	after := all()
	if d := diff(before, after); !sameStrings(d, want) {
		t.Errorf("delete run changed %v, want %v", d, want)
	}
	for _, p := range []string{loc + "/data/s3a.parquet", loc + "/data//dbl.parquet", loc + "/data/dbl.parquet", loc + "/data/auth.parquet"} {
		if !bytes.Equal(after[p], before[p]) {
			t.Errorf("%s changed", p)
		}
	}
	checkReferencedExist(t, f.load(t, id))
	checkReferencedExist(t, f.load(t, id2))
}
