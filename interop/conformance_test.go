package interop

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"testing"

	"github.com/apache/iceberg-go/table/dv"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/puffin"
	"github.com/icectl/icectl/internal/testing/testenv"
	"github.com/icectl/icectl/interop/icebergread"
)

// TestConformanceDVsAgree decodes the Java golden DV blobs with both
// implementations and checks that both re-encode them to Java's bytes.
func TestConformanceDVsAgree(t *testing.T) {
	for _, name := range []string{"empty-position-index.bin", "small-alternating-values-position-index.bin", "small-and-large-values-position-index.bin"} {
		t.Run(name, func(t *testing.T) {
			blob, err := os.ReadFile(testenv.ConformanceFile(t, "dv/"+name))
			if err != nil {
				t.Fatal(err)
			}
			ours, err := puffin.DecodeDV(blob)
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := dv.DeserializeDV(blob, int64(ours.GetCardinality()))
			if err != nil {
				t.Fatalf("iceberg-go: %v", err)
			}
			var got []uint64
			for p := range theirs.Positions() {
				got = append(got, p)
			}
			if !slices.Equal(got, ours.ToArray()) {
				t.Errorf("iceberg-go decodes %v, icectl %v", got, ours.ToArray())
			}
			enc, err := puffin.EncodeDV(ours)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(enc, blob) {
				t.Errorf("icectl re-encodes %x, Java wrote %x", enc, blob)
			}
		})
	}
}

// conformanceLists maps each Java/DuckDB manifest list to the manifests of
// it that are in the conformance set.
var conformanceLists = map[string][]string{
	"manifest-list-v2-1.avro":      nil,
	"duckdb_v3_manifest_list.avro": nil,
	"snap-2354745328521181395-1-179b4fb1-0366-4f7d-ad35-99ee8da0abf5.avro": {
		"179b4fb1-0366-4f7d-ad35-99ee8da0abf5-m0.avro", "179b4fb1-0366-4f7d-ad35-99ee8da0abf5-m1.avro",
	},
	"snap-7817332053627255703-1-787a5996-87e9-4d93-b258-066d524e82cc.avro": {
		"787a5996-87e9-4d93-b258-066d524e82cc-m0.avro",
	},
}

// TestConformanceManifestsAgree reads manifest lists and manifests written
// by Java and DuckDB with both implementations: they must agree on every
// field, stored and inherited.
func TestConformanceManifestsAgree(t *testing.T) {
	for listName, manifests := range conformanceLists {
		t.Run(listName, func(t *testing.T) {
			data, err := os.ReadFile(testenv.ConformanceFile(t, "avro/"+listName))
			if err != nil {
				t.Fatal(err)
			}
			list, err := icebergread.ReadManifestList(data)
			if err != nil {
				t.Fatalf("iceberg-go: %v", err)
			}
			ours := readIcectlList(t, data)
			if len(ours) != len(list.Manifests) {
				t.Fatalf("icectl reads %d entries, iceberg-go %d", len(ours), len(list.Manifests))
			}
			for i := range ours {
				checkListEntry(t, ours[i], list.Manifests[i])
			}
			for _, name := range manifests {
				i := slices.IndexFunc(ours, func(mf manifest.ManifestFile) bool { return path.Base(mf.Path) == name })
				if i < 0 {
					t.Fatalf("%s is not listed", name)
				}
				mdata, err := os.ReadFile(testenv.ConformanceFile(t, "avro/"+name))
				if err != nil {
					t.Fatal(err)
				}
				got, err := icebergread.ReadManifest(mdata, ours[i].Path, &list.Manifests[i])
				if err != nil {
					t.Fatalf("iceberg-go: %s: %v", name, err)
				}
				compareManifest(t, name, mdata, ours[i], got)
			}
		})
	}
}

func readIcectlList(t *testing.T, data []byte) []manifest.ManifestFile {
	t.Helper()
	lr, err := manifest.OpenManifestList(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var out []manifest.ManifestFile
	for {
		mf, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, mf)
	}
}

// compareManifest checks iceberg-go's reading of a manifest against
// icectl's, raw and with inheritance from the manifest-list entry mf.
func compareManifest(t *testing.T, name string, data []byte, mf manifest.ManifestFile, got *icebergread.Manifest) {
	t.Helper()
	read := func(inherit bool) ([]manifest.Entry, manifest.ManifestMeta) {
		r, err := manifest.OpenManifest(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if inherit {
			r.InheritFrom(mf)
		}
		var es []manifest.Entry
		for {
			e, err := r.Next()
			if errors.Is(err, io.EOF) {
				return es, r.Meta()
			}
			if err != nil {
				t.Fatal(err)
			}
			es = append(es, e)
		}
	}
	raw, meta := read(false)
	inherited, _ := read(true)
	if len(raw) != len(got.Entries) {
		t.Fatalf("%s: icectl reads %d entries, iceberg-go %d", name, len(raw), len(got.Entries))
	}
	if meta.Schema == nil {
		t.Fatalf("%s: icectl reads no table schema from the manifest", name)
	}
	types := partitionTypes(meta.Schema, meta.Spec)
	for i, e := range raw {
		where := fmt.Sprintf("%s entry %d", name, i)
		g := got.Entries[i]
		if g.Status != int32(e.Status) {
			t.Errorf("%s: status: icectl %d, iceberg-go %d", where, e.Status, g.Status)
		}
		checkNumbers(t, where+" stored (want = icectl)", icebergread.EntryNumbers{SnapshotID: e.SnapshotID,
			SequenceNumber: e.SequenceNumber, FileSequenceNumber: e.FileSequenceNumber, FirstRowID: e.DataFile.FirstRowID}, g.Stored)
		in := inherited[i]
		if g.Inherited != nil {
			checkNumbers(t, where+" inherited (want = icectl)", icebergread.EntryNumbers{SnapshotID: in.SnapshotID,
				SequenceNumber: in.SequenceNumber, FileSequenceNumber: in.FileSequenceNumber, FirstRowID: in.DataFile.FirstRowID}, *g.Inherited)
		}
		checkDataFile(t, where+" (want = icectl)", e.DataFile, mf.SpecID, types, g.DataFile)
	}
}

// TestConformancePuffinDVAgrees reads the Java-written Puffin DV file with
// icectl's reader and with iceberg-go's dv.ReadDV, taking referenced data
// file and cardinality from the footer as a caller without a manifest would.
func TestConformancePuffinDVAgrees(t *testing.T) {
	p := testenv.ConformanceFile(t, "puffin/single-blob-dv.puffin")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	r, err := puffin.OpenReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	blobs := r.Metadata().Blobs
	if len(blobs) != 1 {
		t.Fatalf("icectl reads %d blobs, want 1", len(blobs))
	}
	ours, err := r.ReadDV(blobs[0])
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := icebergread.ReadDV(icebergread.DVRequest{Path: p, Offset: blobs[0].Offset, Length: blobs[0].Length, RecordCount: -1})
	if err != nil {
		t.Fatalf("iceberg-go: %v", err)
	}
	if !slices.Equal(theirs.Positions, ours.ToArray()) || theirs.ReferencedDataFile != blobs[0].Properties["referenced-data-file"] {
		t.Errorf("iceberg-go reads %v for %s, icectl %v for %s", theirs.Positions, theirs.ReferencedDataFile, ours.ToArray(), blobs[0].Properties["referenced-data-file"])
	}
}
