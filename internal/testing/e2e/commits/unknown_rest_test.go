package commits

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/rest"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// restEnv is the REST catalog server (testenv.RESTCatalog) and its S3.
type restEnv struct {
	uri, warehouse, credential, s3 string
}

func needREST(t *testing.T) restEnv {
	return restEnv{
		uri:        testenv.Need(t, testenv.RESTCatalog, "REST catalog server"),
		warehouse:  testenv.Need(t, testenv.RESTWarehouse, "REST catalog warehouse"),
		credential: testenv.Need(t, testenv.RESTCredential, "REST catalog OAuth2 credential"),
		s3:         testenv.Need(t, testenv.RESTS3Endpoint, "S3 endpoint of the REST catalog"),
	}
}

// s3Props are the FileIO properties reaching the server's S3 directly.
func (e restEnv) s3Props() map[string]string {
	key, secret, _ := strings.Cut(e.credential, ":")
	return map[string]string{
		fileio.S3Endpoint: e.s3, fileio.S3AccessKeyID: key, fileio.S3SecretAccessKey: secret,
		fileio.S3PathStyleAccess: "true", "client.region": "us-east-1",
	}
}

// open opens a REST catalog client on uri (the server or a proxy).
func (e restEnv) open(t *testing.T, uri string) catalog.Catalog {
	t.Helper()
	props := e.s3Props()
	props[rest.PropCredential] = e.credential
	props[rest.PropSocketTimeoutMS] = "3000"
	c, err := rest.Open(context.Background(), catalog.Config{Name: "rest", URI: uri, Warehouse: e.warehouse, Props: props})
	if err != nil {
		t.Fatalf("open REST catalog %s: %v", uri, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// newTable creates a fresh table on the server.
func (e restEnv) newTable(t *testing.T, c catalog.Catalog) *catalog.Table {
	t.Helper()
	ctx := context.Background()
	ns := []string{uniqueName(t, "commits_")}
	if err := c.CreateNamespace(ctx, ns, nil); err != nil {
		t.Fatal(err)
	}
	md, err := spec.NewTableMetadata(testSchema(), spec.PartitionSpec{}, spec.SortOrder{}, "s3://placeholder", map[string]string{"owner": "tests"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	md.Location = "" // the server chooses
	tbl, err := c.CreateTable(ctx, catalog.Ident{Namespace: ns, Name: "t"}, md)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// commitProxy forwards everything to the REST server. A table commit
// (POST .../namespaces/N/tables/T) is forwarded too, so the server applies
// it, and then answered with status instead of the server's answer, or,
// with status 0, not answered until the client gives up.
type commitProxy struct {
	*httptest.Server
	commits atomic.Int32 // commits forwarded
	applied atomic.Int32 // commits the server accepted (2xx)
}

func newCommitProxy(t *testing.T, upstream string, status int) *commitProxy {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	p := &commitProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		isCommit := r.Method == http.MethodPost && len(parts) >= 4 && parts[len(parts)-2] == "tables" && parts[len(parts)-4] == "namespaces"
		if !isCommit {
			rp.ServeHTTP(w, r)
			return
		}
		p.commits.Add(1)
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req, err := http.NewRequestWithContext(context.WithoutCancel(r.Context()), r.Method, upstream+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("proxy: forward commit: %v", err)
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			p.applied.Add(1)
		}
		if status == 0 {
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute):
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":"%s","type":"ServerError","code":%d}}`, http.StatusText(status), status)
	}))
	t.Cleanup(p.Close)
	return p
}

// configYAML is an icectl config file with one REST catalog, name, at uri
// with credential, and the server's S3 for table files.
func (e restEnv) configYAML(name, uri, credential string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "catalog:\n  %s:\n    uri: %s\n    warehouse: %s\n    credential: %s\n", name, uri, e.warehouse, credential)
	fmt.Fprintf(&b, "    rest.client.socket-timeout-ms: \"3000\"\n")
	for k, v := range e.s3Props() {
		fmt.Fprintf(&b, "    %s: %q\n", k, v)
	}
	return b.String()
}

var unknownAnswers = []struct {
	name   string
	status int // 0: no answer within the client's timeout
}{{"502", 502}, {"503", 503}, {"504", 504}, {"timeout", 0}}

// TestUnknownStateRESTSetProperties runs the icectl binary through a proxy
// that lets the server apply the commit and then answers 5xx or nothing:
// icectl must exit 5, saying the state is unknown, and the commit it made
// (the metadata file the server wrote) must stand.
func TestUnknownStateRESTSetProperties(t *testing.T) {
	e := needREST(t)
	direct := e.open(t, e.uri)
	for _, a := range unknownAnswers {
		t.Run(a.name, func(t *testing.T) {
			tbl := e.newTable(t, direct)
			proxy := newCommitProxy(t, e.uri, a.status)
			cfg := filepath.Join(t.TempDir(), "icectl.yaml")
			yaml := e.configYAML("proxied", proxy.URL, e.credential)
			if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			r := icectl(t, baseEnv(t, "ICECTL_CONFIG="+cfg), "table", "set-properties", tbl.Ident.String(),
				"history.expire.max-snapshot-age-ms=3600000", "--catalog", "proxied")
			if r.code != 5 {
				t.Fatalf("%s\nwant exit 5", r)
			}
			for _, want := range []string{"commit state unknown", "nothing was deleted", "icectl table show " + tbl.Ident.String()} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr %q lacks %q", r.stderr, want)
				}
			}
			_, secret, _ := strings.Cut(e.credential, ":")
			if strings.Contains(r.stderr, secret) {
				t.Error("stderr shows the credential")
			}
			if n := proxy.commits.Load(); n != 1 || proxy.applied.Load() != 1 {
				t.Errorf("%d commits sent, %d applied; want exactly one (an unknown outcome is never retried)", n, proxy.applied.Load())
			}
			loaded, err := direct.LoadTable(context.Background(), tbl.Ident)
			if err != nil {
				t.Fatal(err)
			}
			if loaded.MetadataLocation == tbl.MetadataLocation || loaded.Metadata.Properties["history.expire.max-snapshot-age-ms"] != "3600000" {
				t.Errorf("the commit behind the unknown answer did not land: %s, %v", loaded.MetadataLocation, loaded.Metadata.Properties)
			}
			fio, err := fileio.Load(context.Background(), e.warehouse, e.s3Props())
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{tbl.MetadataLocation, loaded.MetadataLocation} {
				if _, err := fileio.ReadFile(context.Background(), fio, p); err != nil {
					t.Errorf("metadata file %s: %v", p, err)
				}
			}
		})
	}
}

// TestUnknownStateRESTAppendKeepsFiles appends a real Parquet file through
// a REST client pointed at the proxy: the server applies the snapshot, the
// client sees 5xx or a timeout, and every file the client wrote (data
// file, manifests, manifest list) must still be on the server's S3, since
// the table now references them.
func TestUnknownStateRESTAppendKeepsFiles(t *testing.T) {
	e := needREST(t)
	direct := e.open(t, e.uri)
	for _, a := range []struct {
		name   string
		status int
	}{unknownAnswers[0], unknownAnswers[3]} {
		t.Run(a.name, func(t *testing.T) {
			tbl := e.newTable(t, direct)
			tbl = appendOK(t, direct, tbl, writeParquet(t, tbl, "first", []int64{10, 11}))
			proxy := newCommitProxy(t, e.uri, a.status)
			viaProxy := e.open(t, proxy.URL)
			base, err := viaProxy.LoadTable(context.Background(), tbl.Ident)
			if err != nil {
				t.Fatal(err)
			}
			df := appendUnknown(t, viaProxy, base)
			if n := proxy.commits.Load(); n != 1 || proxy.applied.Load() != 1 {
				t.Errorf("%d commits sent, %d applied; want exactly one", n, proxy.applied.Load())
			}
			loaded, err := direct.LoadTable(context.Background(), tbl.Ident)
			if err != nil {
				t.Fatal(err)
			}
			fio, err := fileio.Load(context.Background(), e.warehouse, e.s3Props())
			if err != nil {
				t.Fatal(err)
			}
			checkLandedAndKept(t, fio, loaded, tbl.Metadata.CurrentSnapshot(), df)
		})
	}
}
