package e2e

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/internal/testing/faultproxy"
)

// The uploads of a commit's own files cut mid-body on Google Cloud
// Storage and Azure (the store sees half of what the proxy read of the
// body, then the connection drops; storefaults_test.go cuts data files'
// before the store sees them): a manifest, a manifest list and the
// metadata.json of a compaction, the metadata.json of an expire. Cut on every attempt, the verb fails before its commit and the
// table reads as before (nothing of it deleted); cut once each, the
// retries finish the run and the table reads as after. iceberg-go reads
// the table straight from the emulator after each run, and every file a
// snapshot reads is on the store at the size its metadata records.

func TestStoreUploadCutsGCS(t *testing.T) {
	t.Parallel()
	storeUploadCuts(t, sqliteGCSBackend)
}

func TestStoreUploadCutsAzure(t *testing.T) {
	t.Parallel()
	storeUploadCuts(t, sqliteAzureBackend)
}

// The metadata files of a commit, by their names' patterns.
var (
	manifestName     = regexp.MustCompile(`/metadata/[^/]*-m\d+\.avro\b`)
	manifestListName = regexp.MustCompile(`/metadata/snap-[^/]*\.avro\b`)
	metadataJSONName = regexp.MustCompile(`/metadata/[^/]*\.metadata\.json\b`)
)

// uploaded is what names the object an upload writes: the URL (Azure's
// path, a GCS upload's name parameter) and a GCS upload's metadata part.
func uploaded(r faultproxy.Request) string {
	return objectName(r) + " " + gcsObjectName.FindString(string(r.Head))
}

func storeUploadCuts(t *testing.T, mk func(*testing.T) backend) {
	readerBin(t)
	b := mk(t)
	ctx := context.Background()
	const name = "upload_cuts"
	ident := b.ns + "." + name
	writeStoreFixture(t, b, name, 20) // six days: six groups
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
	run := func(what string, wantOK bool, args ...string) {
		t.Helper()
		start := time.Now()
		out, stderr, code := runICECTLOn(t, via, args...)
		injected, requests := proxy.Injected()
		msg := strings.TrimSpace(stderr)
		msg = msg[strings.LastIndex(msg, "\n")+1:]
		t.Logf("%s: icectl %s: exit %d in %v, %d requests, injected %v: %s", what, args[0], code, time.Since(start).Round(time.Millisecond), requests, injected, msg)
		if (code == 0) != wantOK {
			t.Fatalf("%s: icectl %s: exit %d: %s%s", what, strings.Join(args, " "), code, out, stderr)
		}
		if injected["truncate"] == 0 {
			t.Fatalf("%s: the proxy cut nothing in %d requests", what, requests)
		}
	}
	// cutEvery cuts every attempt of the uploads of kind mid-body; of
	// metadata.json files, only the nth (from 1) the run writes: the
	// first is the claim's, the second the verb's commit, the third the
	// claim's release.
	cutEvery := func(kind *regexp.Regexp, nth int) {
		var names []string
		proxy.SetRule(func(r faultproxy.Request) faultproxy.Fault {
			name := uploaded(r)
			if !r.Upload || !kind.MatchString(name) {
				return faultproxy.Fault{}
			}
			if nth == 0 {
				return faultproxy.Fault{Truncate: true}
			}
			name = kind.FindString(name)
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
			return faultproxy.Fault{Truncate: len(names) >= nth && names[nth-1] == name}
		})
	}
	// cutOnce cuts the first attempt of every upload of the kinds
	// mid-body.
	cutOnce := func(kinds ...*regexp.Regexp) {
		cut := map[string]bool{}
		proxy.SetRule(func(r faultproxy.Request) faultproxy.Fault {
			k := requestKey(r)
			for _, kind := range kinds {
				if r.Upload && kind.MatchString(uploaded(r)) && !cut[k] {
					cut[k] = true
					return faultproxy.Fault{Truncate: true}
				}
			}
			return faultproxy.Fault{}
		})
	}
	// unchanged checks that a failed run committed nothing (a claim taken
	// and released writes metadata versions of its own: the snapshots are
	// what a commit changes) and deleted nothing the table reads.
	unchanged := func(what string, before *catalog.Table) {
		t.Helper()
		now := load()
		if *now.Metadata.CurrentSnapshotID != *before.Metadata.CurrentSnapshotID || len(now.Metadata.Snapshots) != len(before.Metadata.Snapshots) {
			t.Fatalf("%s committed: snapshot %d of %d, was %d of %d", what, *now.Metadata.CurrentSnapshotID, len(now.Metadata.Snapshots),
				*before.Metadata.CurrentSnapshotID, len(before.Metadata.Snapshots))
		}
		checkStored(t, now)
	}

	for _, c := range []struct {
		what string
		kind *regexp.Regexp
		nth  int
	}{
		{"a compact whose manifests' uploads are cut", manifestName, 0},
		{"a compact whose manifest list's upload is cut", manifestListName, 0},
		{"a compact whose commit's metadata.json's upload is cut", metadataJSONName, 2},
	} {
		// One day's group (the fixture's rows are 7 hours apart from
		// 2024-03-01): the run reaches its commit soon.
		before := load()
		cutEvery(c.kind, c.nth)
		run(c.what, false, "compact", ident, "--rewrite-all", "--where", "ts < '2024-03-02'")
		unchanged(c.what, before)
	}
	before := load()
	cutOnce(manifestName, manifestListName, metadataJSONName)
	run("a compact with each upload cut once", true, "compact", ident, "--rewrite-all")
	if tbl := load(); *tbl.Metadata.CurrentSnapshotID == *before.Metadata.CurrentSnapshotID || tbl.Metadata.Snapshots[len(tbl.Metadata.Snapshots)-1].Summary["operation"] != "replace" {
		t.Fatal("the compact whose uploads were cut once committed no replace")
	}
	sameRows("a compact with each upload cut once")
	checkStored(t, load())

	// expire writes one file of its own, its commit's metadata.json, and
	// deletes only after its commit.
	before = load()
	cutEvery(metadataJSONName, 2)
	run("an expire whose commit's metadata.json's upload is cut", false, "expire", ident, "--older-than", "0s", "--retain-last", "1")
	unchanged("an expire whose commit's metadata.json's upload is cut", before)
	cutOnce(metadataJSONName)
	run("an expire whose metadata.json's uploads are cut once", true, "expire", ident, "--older-than", "0s", "--retain-last", "1")
	if n := len(load().Metadata.Snapshots); n != 1 {
		t.Fatalf("%d snapshots after expire --retain-last 1", n)
	}
	sameRows("an expire whose metadata.json's uploads were cut once")
	checkStored(t, load())
}
