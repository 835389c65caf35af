package fileio_test

import (
	"bytes"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/fileio/fileiotest"
	"github.com/icectl/icectl/internal/testing/faultproxy"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// TestStoresRetryThroughFaults puts a proxy between the GCS and Azure
// FileIOs and their emulators that answers the first attempt of every
// request 503 or 429 and cuts the second attempt of every upload request
// mid-body: a file of several chunks (GCS's resumable upload) or blocks
// (Azure's staged blocks) is written whole, reads back byte for byte, is
// listed, and is deleted.
func TestStoresRetryThroughFaults(t *testing.T) {
	stores := map[string]func(t *testing.T, endpoint string) (map[string]string, string){
		"gcs": func(t *testing.T, endpoint string) (map[string]string, string) {
			testenv.Need(t, testenv.GCSEndpoint, "GCS server (fake-gcs-server)")
			props, base := testenv.GCS(t)
			props[fileio.GCSServiceHost] = endpoint
			props[fileio.GCSWriteChunkSize] = "262144"
			return props, base
		},
		"azure": func(t *testing.T, endpoint string) (map[string]string, string) {
			testenv.Need(t, testenv.AzureEndpoint, "Azure Blob server (Azurite)")
			props, base := testenv.Azure(t)
			cs := props[fileio.ADLSConnectionString]
			before, ep, _ := strings.Cut(cs, "BlobEndpoint=")
			ep, after, _ := strings.Cut(ep, ";")
			path := ep[strings.Index(ep[len("http://"):], "/")+len("http://"):]
			props[fileio.ADLSConnectionString] = before + "BlobEndpoint=" + endpoint + path + ";" + after
			props[fileio.ADLSWriteBlockSize] = "262144"
			return props, base
		},
	}
	for name, setup := range stores {
		t.Run(name, func(t *testing.T) {
			target := map[string]string{"gcs": testenv.GCSEndpoint, "azure": testenv.AzureEndpoint}[name]
			proxy := faultproxy.New(t, testenv.Need(t, target, name+" server"))
			props, base := setup(t, proxy.URL)
			fio, err := fileio.Load(t.Context(), base, props)
			if err != nil {
				t.Fatal(err)
			}
			attempts := map[string]int{}
			proxy.SetRule(func(r faultproxy.Request) faultproxy.Fault {
				k := attemptKey(r)
				attempts[k]++
				switch {
				case attempts[k] == 1 && len(attempts)%2 == 0:
					return faultproxy.Fault{Status: http.StatusTooManyRequests}
				case attempts[k] == 1:
					return faultproxy.Fault{Status: http.StatusServiceUnavailable}
				case attempts[k] == 2 && r.Upload:
					return faultproxy.Fault{Cut: true}
				}
				return faultproxy.Fault{}
			})
			path := base + "/data/big.parquet"
			data := fileiotest.Payload(7, 4<<20+1000) // 17 chunks or blocks
			if err := fileio.WriteFile(t.Context(), fio, path, data); err != nil {
				t.Fatalf("write through throttling and cuts: %v", err)
			}
			got, err := fileio.ReadFile(t.Context(), fio, path)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("read %d bytes back differently (wrote %d)", len(got), len(data))
			}
			var listed []string
			if err := fio.(fileio.Lister).List(t.Context(), base+"/", func(fi fileio.FileInfo) error {
				listed = append(listed, fi.Path)
				return nil
			}); err != nil || len(listed) != 1 || listed[0] != path {
				t.Fatalf("list: %v, %v; want [%s]", listed, err, path)
			}
			if err := fio.(fileio.BulkRemover).RemoveMany(t.Context(), []string{path}); err != nil {
				t.Fatalf("remove: %v", err)
			}
			proxy.SetRule(nil)
			if _, err := fio.Open(t.Context(), path); !errors.Is(err, fileio.ErrNotFound) {
				t.Errorf("open after remove: %v, want not found", err)
			}
			injected, requests := proxy.Injected()
			t.Logf("%d requests, injected %v", requests, injected)
			if injected["cut"] < 2 || injected["status 429"] == 0 || injected["status 503"] == 0 {
				t.Errorf("injected %v: want cuts of several uploads, 429s and 503s", injected)
			}
		})
	}
}

var uploadName = regexp.MustCompile(`"name":\s*"[^"]*"`)

// attemptKey names a request so that its retries share the name: its
// method and URL (an Azure block's ID is in it), the chunk a GCS
// resumable upload sends, and the object a GCS upload names in its body
// (whose multipart boundary differs per attempt).
func attemptKey(r faultproxy.Request) string {
	return r.Method + " " + r.URL.String() + " " + r.Header.Get("Content-Range") + " " + uploadName.FindString(string(r.Head))
}
