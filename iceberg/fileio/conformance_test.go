package fileio_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/fileio/fileiotest"
	"github.com/icectl/icectl/internal/testing/testenv"
)

func TestLocalConformance(t *testing.T) {
	forms := map[string]func(dir string) string{
		"Path":       func(dir string) string { return dir },
		"FileURI":    func(dir string) string { return "file://" + filepath.ToSlash(dir) },
		"HadoopFile": func(dir string) string { return "file:" + filepath.ToSlash(dir) },
	}
	for name, form := range forms {
		t.Run(name, func(t *testing.T) {
			fileiotest.RunConformance(t, func(t *testing.T) (fileio.FileIO, string) {
				base := form(t.TempDir())
				fio, err := fileio.Load(t.Context(), base, nil)
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := fio.(*fileio.Local); !ok {
					t.Fatalf("Load(%s) = %T, want *fileio.Local", base, fio)
				}
				return fio, base
			})
		})
	}
}

func TestMemConformance(t *testing.T) {
	fileiotest.RunConformance(t, func(t *testing.T) (fileio.FileIO, string) {
		fio, err := fileio.Load(t.Context(), "mem://warehouse", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := fio.(*fileio.Mem); !ok {
			t.Fatalf("Load(mem://) = %T, want *fileio.Mem", fio)
		}
		return fio, "mem://warehouse/" + t.Name()
	})
}

// s3Props returns the properties of the S3 server the test environment
// provides, and a fresh, unique base location in its bucket.
func s3Props(t *testing.T) (map[string]string, string) {
	endpoint := testenv.Need(t, testenv.S3Endpoint, "S3 server (versitygw)")
	props := map[string]string{
		fileio.S3Endpoint:        endpoint,
		fileio.S3AccessKeyID:     testenv.Need(t, testenv.S3AccessKey, "S3 access key"),
		fileio.S3SecretAccessKey: testenv.Need(t, testenv.S3SecretKey, "S3 secret key"),
		fileio.S3PathStyleAccess: "true",
	}
	bucket := testenv.Need(t, testenv.S3Bucket, "S3 bucket")
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	base := fmt.Sprintf("s3://%s/fileio-test-%d/%s", bucket, time.Now().UnixNano(), name)
	return props, base
}

func TestS3Conformance(t *testing.T) {
	testenv.Need(t, testenv.S3Endpoint, "S3 server (versitygw)")
	opts := fileiotest.Options{ManyFiles: 1050}
	fileiotest.RunConformanceWith(t, opts, func(t *testing.T) (fileio.FileIO, string) {
		props, base := s3Props(t)
		// Small pages and delete batches so that paging and batching are
		// exercised without thousands of objects.
		props[fileio.S3ListPageSize] = "100"
		props[fileio.S3DeleteBatchSize] = "250"
		fio, err := fileio.Load(t.Context(), base, props)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { removeAll(t, fio, base+"/") })
		return fio, base
	})
}

// TestS3DefaultBatches crosses the real limits: more than 1000 keys a page
// and 1000 keys a DeleteObjects.
func TestS3DefaultBatches(t *testing.T) {
	props, base := s3Props(t)
	fio, err := fileio.NewS3(t.Context(), props)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1001
	var paths []string
	for i := range n {
		paths = append(paths, fmt.Sprintf("%s/f%04d", base, i))
	}
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for _, p := range paths {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			errs <- fileio.WriteFile(t.Context(), fio, p, nil)
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := count(t, fio, base+"/"); got != n {
		t.Fatalf("listed %d objects, want %d", got, n)
	}
	if err := fio.RemoveMany(t.Context(), paths); err != nil {
		t.Fatal(err)
	}
	if got := count(t, fio, base+"/"); got != 0 {
		t.Fatalf("%d objects left after RemoveMany", got)
	}
}

func count(t *testing.T, fio fileio.FileIO, prefix string) int {
	t.Helper()
	n := 0
	if err := fio.(fileio.Lister).List(t.Context(), prefix, func(fileio.FileInfo) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

func removeAll(t *testing.T, fio fileio.FileIO, prefix string) {
	var paths []string
	ctx := context.Background() // t.Context is cancelled before cleanups run
	if err := fio.(fileio.Lister).List(ctx, prefix, func(fi fileio.FileInfo) error {
		paths = append(paths, fi.Path)
		return nil
	}); err != nil {
		t.Errorf("clean up %s: %v", prefix, err)
		return
	}
	if err := fio.(fileio.BulkRemover).RemoveMany(ctx, paths); err != nil {
		t.Errorf("clean up %s: %v", prefix, err)
	}
}

func TestLocalCreateLeavesNoTempOnFailure(t *testing.T) {
	dir := t.TempDir()
	fio := fileio.NewLocal()
	// The target is a directory, so the final rename fails.
	target := filepath.Join(dir, "target")
	if err := os.MkdirAll(filepath.Join(target, "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := fio.Create(t.Context(), target)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("data"))
	if err := w.Close(); err == nil {
		t.Fatal("Close over a non-empty directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "target" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v after a failed Close, want only target", names)
	}
}

func TestGCSConformance(t *testing.T) {
	testenv.Need(t, testenv.GCSEndpoint, "GCS server (fake-gcs-server)")
	fileiotest.RunConformanceWith(t, fileiotest.Options{ManyFiles: 250}, func(t *testing.T) (fileio.FileIO, string) {
		props, base := testenv.GCS(t)
		props[fileio.GCSListPageSize] = "100"
		fio, err := fileio.Load(t.Context(), base, props)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := fio.(*fileio.GCS); !ok {
			t.Fatalf("Load(%s) = %T, want *fileio.GCS", base, fio)
		}
		t.Cleanup(func() { removeAll(t, fio, base+"/") })
		return fio, base
	})
}

func TestAzureConformance(t *testing.T) {
	testenv.Need(t, testenv.AzureEndpoint, "Azure Blob server (Azurite)")
	fileiotest.RunConformanceWith(t, fileiotest.Options{ManyFiles: 250}, func(t *testing.T) (fileio.FileIO, string) {
		props, base := testenv.Azure(t)
		props[fileio.ADLSListPageSize] = "100"
		fio, err := fileio.Load(t.Context(), base, props)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := fio.(*fileio.Azure); !ok {
			t.Fatalf("Load(%s) = %T, want *fileio.Azure", base, fio)
		}
		t.Cleanup(func() { removeAll(t, fio, base+"/") })
		return fio, base
	})
}

// TestStoresUnreachable: a store nobody listens on is a one-line error
// naming the path, after the retries, for every operation.
func TestStoresUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	for base, props := range map[string]map[string]string{
		"gs://bkt/wh": {fileio.GCSServiceHost: "http://" + addr, fileio.GCSNoAuth: "true"},
		"abfss://ctr@acct.dfs.core.windows.net/wh": {
			fileio.ADLSConnectionString: "AccountName=acct;AccountKey=a2V5;BlobEndpoint=http://" + addr + "/acct",
		},
	} {
		fio, err := fileio.Load(t.Context(), base, props)
		if err != nil {
			t.Fatal(err)
		}
		_, errOpen := fio.Open(t.Context(), base+"/f")
		errWrite := fileio.WriteFile(t.Context(), fio, base+"/f", []byte("x"))
		errList := fio.(fileio.Lister).List(t.Context(), base+"/", func(fileio.FileInfo) error { return nil })
		errRemove := fio.(fileio.BulkRemover).RemoveMany(t.Context(), []string{base + "/f"})
		for op, err := range map[string]error{"open": errOpen, "write": errWrite, "list": errList, "remove": errRemove} {
			if err == nil || errors.Is(err, fileio.ErrNotFound) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), base) {
				t.Errorf("%s %s on an unreachable store: %v; want a one-line error naming the path", op, base, err)
			}
		}
		t.Logf("%s: %v", base, errOpen)
	}
}

// TestAzureConformancePyArrowStyle runs the suite on PyIceberg's short
// locations (abfs://CONTAINER/PATH, the account from adls.account-name)
// with pyarrow's endpoint properties, as a PyIceberg user configures
// Azurite.
func TestAzureConformancePyArrowStyle(t *testing.T) {
	endpoint := testenv.Need(t, testenv.AzureEndpoint, "Azure Blob server (Azurite)")
	fileiotest.RunConformance(t, func(t *testing.T) (fileio.FileIO, string) {
		_, full := testenv.Azure(t)
		authority := strings.TrimPrefix(endpoint, "http://")
		authority = authority[:strings.Index(authority, "/")]
		props := map[string]string{
			fileio.ADLSAccountName:          testenv.Need(t, testenv.AzureAccount, "Azure account"),
			fileio.ADLSAccountKey:           testenv.Need(t, testenv.AzureKey, "Azure key"),
			fileio.ADLSBlobStorageAuthority: authority,
			fileio.ADLSBlobStorageScheme:    "http",
		}
		// abfs://CONTAINER@ACCOUNT.dfs.core.windows.net/P -> abfs://CONTAINER/P
		ctrAt, rest, _ := strings.Cut(strings.TrimPrefix(full, "abfs://"), "/")
		ctr, _, _ := strings.Cut(ctrAt, "@")
		base := "abfs://" + ctr + "/" + rest
		fio, err := fileio.Load(t.Context(), base, props)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { removeAll(t, fio, base+"/") })
		return fio, base
	})
}
