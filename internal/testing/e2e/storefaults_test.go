package e2e

import (
	"context"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/internal/testing/faultproxy"
)

// Faults on Google Cloud Storage and Azure as on S3, injected by a proxy
// between icectl and the emulator (the network seam): throttling answered
// 429 and 503 and then served is retried and loses nothing; a connection
// cut mid-upload, once, is retried, and cut on every attempt fails the run
// before its commit, the table reading as before; a deletion the store
// refuses is reported, the run says so, and a rerun finishes it.
// iceberg-go reads the table straight from the emulator after each step.

func TestStoreFaultsGCS(t *testing.T) {
	t.Parallel()
	storeFaults(t, sqliteGCSBackend)
}

func TestStoreFaultsAzure(t *testing.T) {
	t.Parallel()
	storeFaults(t, sqliteAzureBackend)
}

// storeEndpoint returns the endpoint b's store properties name.
func storeEndpoint(t *testing.T, b backend) string {
	t.Helper()
	for k, v := range b.cfg.Props {
		switch {
		case k == fileio.GCSServiceHost:
			return v
		case strings.HasPrefix(k, fileio.ADLSConnectionStringPrefix):
			_, ep, _ := strings.Cut(v, "BlobEndpoint=")
			ep, _, _ = strings.Cut(ep, ";")
			return ep
		}
	}
	t.Fatalf("no store endpoint in %v", slices.Collect(maps.Keys(b.cfg.Props)))
	return ""
}

// throughEndpoint returns b with its store reached at endpoint
// (scheme://host:port) instead: the same bucket or account behind another
// address.
func throughEndpoint(b backend, endpoint string) backend {
	out := b
	out.cfg.Props = maps.Clone(b.cfg.Props)
	for k, v := range out.cfg.Props {
		switch {
		case k == fileio.GCSServiceHost:
			out.cfg.Props[k] = endpoint
		case strings.HasPrefix(k, fileio.ADLSConnectionStringPrefix):
			before, ep, _ := strings.Cut(v, "BlobEndpoint=")
			ep, after, _ := strings.Cut(ep, ";")
			path := ep[strings.Index(ep[len("http://"):], "/")+len("http://"):] // the account's path
			out.cfg.Props[k] = before + "BlobEndpoint=" + endpoint + path + ";" + after
		}
	}
	return out
}

// deletedOf is expire's count of the files it deleted.
var deletedOf = regexp.MustCompile(`deleted (\d+) of (\d+) file`)

// gcsObjectName finds the object name a GCS upload names in its metadata part.
var gcsObjectName = regexp.MustCompile(`"name":\s*"[^"]*"`)

// requestKey names a request so that its retries share the name: Azure's
// names its blob and block in the URL, a GCS upload its object in the
// body's metadata part (its multipart boundary differs per attempt).
func requestKey(r faultproxy.Request) string {
	return r.Method + " " + r.URL.Path + "?" + r.URL.RawQuery + " " + gcsObjectName.FindString(string(r.Head))
}

// objectName is the object a request names: a GCS upload's name
// parameter, else the URL's path.
func objectName(r faultproxy.Request) string {
	if n := r.URL.Query().Get("name"); n != "" {
		return "/" + n
	}
	return r.URL.Path
}

func storeFaults(t *testing.T, mk func(*testing.T) backend) {
	readerBin(t)
	b := mk(t)
	ctx := context.Background()
	const name = "store_faults"
	ident := b.ns + "." + name
	writeStoreFixture(t, b, name, 40)
	cat := b.open(t)
	id := catalog.Ident{Namespace: []string{b.ns}, Name: name}
	load := func() *catalog.Table {
		t.Helper()
		tbl, err := cat.LoadTable(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	want := goScanTable(t, b, name, false)
	sameRows := func(after string) {
		t.Helper()
		if got := goScanTable(t, b, name, false); got.Checksum != want.Checksum || got.RowCount != want.RowCount {
			t.Fatalf("after %s iceberg-go reads %d rows (%s), before %d (%s)", after, got.RowCount, got.Checksum, want.RowCount, want.Checksum)
		}
	}
	proxy := faultproxy.New(t, storeEndpoint(t, b))
	via := throughEndpoint(b, proxy.URL)
	run := func(what string, wantOK bool, args ...string) string {
		t.Helper()
		out, stderr, code := runICECTLOn(t, via, args...)
		injected, requests := proxy.Injected()
		t.Logf("%s: icectl %s: exit %d, %d requests, injected %v: %s", what, args[0], code, requests, injected, strings.TrimSpace(stderr))
		if (code == 0) != wantOK {
			t.Fatalf("%s: icectl %s: exit %d: %s%s", what, strings.Join(args, " "), code, out, stderr)
		}
		if len(injected) == 0 {
			t.Fatalf("%s: the proxy injected nothing in %d requests", what, requests)
		}
		return out + stderr
	}
	lastOp := func() string {
		t.Helper()
		s := load().Metadata.Snapshots
		return s[len(s)-1].Summary["operation"]
	}

	// Throttling: the first attempt of every request is answered 429 or
	// 503 (alternately); the retries are served.
	seen := map[string]bool{} // rules run one at a time
	throttleOnce := func(r faultproxy.Request) faultproxy.Fault {
		k := requestKey(r)
		if seen[k] {
			return faultproxy.Fault{}
		}
		seen[k] = true
		if len(seen)%2 == 0 {
			return faultproxy.Fault{Status: http.StatusTooManyRequests}
		}
		return faultproxy.Fault{Status: http.StatusServiceUnavailable}
	}
	proxy.SetRule(throttleOnce)
	run("throttled", true, "compact", ident, "--rewrite-all")
	if op := lastOp(); op != "replace" {
		t.Fatalf("throttled compact committed %q, want a replace", op)
	}
	sameRows("a throttled compact")
	checkReachableExist(t, load())

	// A connection cut mid-upload on every attempt of every data file's
	// upload: the run fails, releases its claim and commits nothing; the
	// files it was writing are in no metadata.
	snapshot := func() (int64, int) {
		md := load().Metadata
		return *md.CurrentSnapshotID, len(md.Snapshots)
	}
	beforeID, beforeN := snapshot()
	proxy.SetRule(func(r faultproxy.Request) faultproxy.Fault {
		return faultproxy.Fault{Cut: r.Upload && strings.Contains(objectName(r), "/data/")}
	})
	run("cut on every attempt", false, "compact", ident, "--rewrite-all")
	if id, n := snapshot(); id != beforeID || n != beforeN {
		t.Fatalf("a compact whose uploads were cut committed: snapshot %d of %d, was %d of %d", id, n, beforeID, beforeN)
	}
	sameRows("a compact whose uploads were cut")
	checkReachableExist(t, load())

	// Cut once per upload: the retries finish the run.
	cut := map[string]bool{}
	proxy.SetRule(func(r faultproxy.Request) faultproxy.Fault {
		k := requestKey(r)
		if !r.Upload || cut[k] {
			return faultproxy.Fault{}
		}
		cut[k] = true
		return faultproxy.Fault{Cut: true}
	})
	run("cut once per upload", true, "rewrite-manifests", ident)
	if op := lastOp(); op != "replace" {
		t.Fatalf("rewrite-manifests with cut uploads committed %q, want a replace", op)
	}
	sameRows("rewrite-manifests with cut uploads")
	checkReachableExist(t, load())

	// A deletion the store refuses: expire commits, reports the manifest
	// lists it could not delete, and says to rerun; the rerun, throttled,
	// deletes them.
	tbl := load()
	keep := tbl.Metadata.Snapshots[len(tbl.Metadata.Snapshots)-1].ManifestList
	var lists []string
	for _, s := range tbl.Metadata.Snapshots {
		if s.ManifestList != keep {
			lists = append(lists, s.ManifestList)
		}
	}
	if len(lists) == 0 {
		t.Fatal("no snapshot to expire")
	}
	proxy.SetRule(func(r faultproxy.Request) faultproxy.Fault {
		if r.Method == http.MethodDelete && strings.Contains(objectName(r), "/snap-") {
			return faultproxy.Fault{Status: http.StatusForbidden}
		}
		return faultproxy.Fault{}
	})
	out := run("deletion refused", false, "expire", ident, "--older-than", "0s", "--retain-last", "1")
	if !strings.Contains(out, "not deleted") || !strings.Contains(out, "rerun") {
		t.Errorf("expire with refused deletions does not say so:\n%s", out)
	}
	if m := deletedOf.FindStringSubmatch(out); m == nil || m[1] == m[2] {
		t.Errorf("expire with refused deletions says it deleted them all:\n%s", out)
	}
	if n := len(load().Metadata.Snapshots); n != 1 {
		t.Fatalf("%d snapshots after expire --retain-last 1 (its commit should stand)", n)
	}
	for _, p := range lists {
		if _, err := tbl.IO.Open(ctx, p); err != nil {
			t.Errorf("%s, whose deletion the store refused, is gone: %v", p, err)
		}
	}
	sameRows("expire with refused deletions")
	clear(seen)
	proxy.SetRule(throttleOnce)
	run("rerun, throttled", true, "expire", ident, "--older-than", "0s", "--retain-last", "1")
	for _, p := range lists {
		if _, err := tbl.IO.Open(ctx, p); err == nil {
			t.Errorf("the rerun left %s", p)
		}
	}
	sameRows("the rerun of expire")
	checkReachableExist(t, load())
}
