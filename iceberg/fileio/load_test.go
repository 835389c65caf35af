package fileio_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/icectl/icectl/iceberg/fileio"
)

func TestLoadPicksByScheme(t *testing.T) {
	props := map[string]string{fileio.S3Endpoint: "http://127.0.0.1:1", fileio.S3AccessKeyID: "a", fileio.S3SecretAccessKey: "b", fileio.GCSNoAuth: "true"}
	for loc, want := range map[string]string{
		"/tmp/warehouse":                     "*fileio.Local",
		"relative/dir":                       "*fileio.Local",
		"file:///tmp/warehouse":              "*fileio.Local",
		"file:/tmp/warehouse":                "*fileio.Local",
		"s3://bucket/warehouse":              "*fileio.S3",
		"s3a://bucket/warehouse":             "*fileio.S3",
		"S3N://bucket/warehouse":             "*fileio.S3",
		"mem://x":                            "*fileio.Mem",
		`C:\warehouse`:                       "*fileio.Local",
		"gs://bucket/warehouse":              "*fileio.GCS",
		"abfss://c@a.dfs.core.windows.net/x": "*fileio.Azure",
		"wasb://c@a.blob.core.windows.net/x": "*fileio.Azure",
	} {
		fio, err := fileio.Load(t.Context(), loc, props)
		if err != nil {
			t.Errorf("Load(%s): %v", loc, err)
			continue
		}
		if got := typeName(fio); got != want {
			t.Errorf("Load(%s) = %s, want %s", loc, got, want)
		}
	}
	for _, loc := range []string{"hdfs://nn/x", "gcs://bucket/x", "adl://a/x"} {
		if _, err := fileio.Load(t.Context(), loc, nil); err == nil {
			t.Errorf("Load(%s) accepted an unsupported scheme", loc)
		}
	}
}

func typeName(v any) string {
	switch v.(type) {
	case *fileio.Local:
		return "*fileio.Local"
	case *fileio.S3:
		return "*fileio.S3"
	case *fileio.Mem:
		return "*fileio.Mem"
	case *fileio.GCS:
		return "*fileio.GCS"
	case *fileio.Azure:
		return "*fileio.Azure"
	}
	return "other"
}

func TestS3PathsRejected(t *testing.T) {
	_, fio := newFakeIO(t)
	for _, p := range []string{"s3://", "s3:///key", "s3://bucket", "s3://bucket/", "s3://bucket/dir/", "gs://bucket/key"} {
		if _, err := fio.Open(t.Context(), p); err == nil {
			t.Errorf("Open(%q) succeeded", p)
		}
		if _, err := fio.Create(t.Context(), p); err == nil {
			t.Errorf("Create(%q) succeeded", p)
		}
	}
}

func TestReadOnly(t *testing.T) {
	mem := fileio.NewMem()
	if err := fileio.WriteFile(t.Context(), mem, "mem://a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	ro := fileio.ReadOnly(mem)
	if _, err := fileio.ReadFile(t.Context(), ro, "mem://a"); err != nil {
		t.Errorf("read through ReadOnly: %v", err)
	}
	if _, err := ro.Create(t.Context(), "mem://b"); !errors.Is(err, fileio.ErrReadOnly) {
		t.Errorf("Create: %v, want ErrReadOnly", err)
	}
	if err := ro.Remove(t.Context(), "mem://a"); !errors.Is(err, fileio.ErrReadOnly) {
		t.Errorf("Remove: %v, want ErrReadOnly", err)
	}
	if err := ro.(fileio.BulkRemover).RemoveMany(t.Context(), []string{"mem://a"}); !errors.Is(err, fileio.ErrReadOnly) {
		t.Errorf("RemoveMany: %v, want ErrReadOnly", err)
	}
	n := 0
	if err := ro.(fileio.Lister).List(t.Context(), "mem://", func(fileio.FileInfo) error { n++; return nil }); err != nil || n != 1 {
		t.Errorf("List through ReadOnly: %d files, %v", n, err)
	}
	if _, err := mem.Open(t.Context(), "mem://a"); err != nil {
		t.Errorf("file gone after ReadOnly.Remove: %v", err)
	}
}

func TestLocalRejectsRemoteFileURI(t *testing.T) {
	if _, err := fileio.NewLocal().Open(t.Context(), "file://host/tmp/x"); err == nil || errors.Is(err, fileio.ErrNotFound) {
		t.Errorf("Open(file://host/...) = %v, want an error about the host", err)
	}
}

// Removing a file a Hadoop LocalFileSystem wrote also removes its
// checksum sidecar, as Hadoop does; other files stay.
func TestLocalRemoveTakesHadoopChecksum(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.parquet", ".a.parquet.crc", "b.parquet", ".b.parquet.crc"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := &fileio.Local{}
	if err := l.Remove(t.Context(), "file://"+dir+"/a.parquet"); err != nil {
		t.Fatal(err)
	}
	var left []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if want := []string{".b.parquet.crc", "b.parquet"}; !slices.Equal(left, want) {
		t.Errorf("after removing a.parquet: %v, want %v", left, want)
	}
}
