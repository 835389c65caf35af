package manifest

import (
	"errors"
	"io"
	"os"
	"testing"

	"github.com/icectl/icectl/internal/testing/testenv"
)

func openConformance(t testing.TB, name string) *os.File {
	t.Helper()
	f, err := os.Open(testenv.ConformanceFile(t, "avro/"+name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func readList(t testing.TB, r io.Reader) (ListHeader, []ManifestFile) {
	t.Helper()
	lr, err := OpenManifestList(r)
	if err != nil {
		t.Fatal(err)
	}
	var out []ManifestFile
	for {
		mf, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, mf)
	}
	return lr.Header(), out
}

func readEntries(t testing.TB, r io.Reader, inherit *ManifestFile) (ManifestMeta, []Entry) {
	t.Helper()
	mr, err := OpenManifest(r)
	if err != nil {
		t.Fatal(err)
	}
	if inherit != nil {
		mr.InheritFrom(*inherit)
	}
	var out []Entry
	for {
		e, err := mr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return mr.Meta(), out
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

type listExpect struct {
	path            string
	length          int64
	content         ManifestContent
	seq, minSeq     int64
	snap            int64
	addF, exF, delF int32
	addR, exR, delR int64
	firstRowID      any
}

func checkListEntry(t *testing.T, got ManifestFile, w listExpect) {
	t.Helper()
	if w.path != "" && got.Path != w.path {
		t.Errorf("path = %q, want %q", got.Path, w.path)
	}
	if got.Length != w.length || got.Content != w.content || got.SequenceNumber != w.seq || got.MinSequenceNumber != w.minSeq || got.AddedSnapshotID != w.snap {
		t.Errorf("got length %d content %d seq %d/%d snapshot %d, want %d %d %d/%d %d",
			got.Length, got.Content, got.SequenceNumber, got.MinSequenceNumber, got.AddedSnapshotID,
			w.length, w.content, w.seq, w.minSeq, w.snap)
	}
	if deref(got.AddedFilesCount) != w.addF || deref(got.ExistingFilesCount) != w.exF || deref(got.DeletedFilesCount) != w.delF {
		t.Errorf("files = %v/%v/%v, want %d/%d/%d", deref(got.AddedFilesCount), deref(got.ExistingFilesCount), deref(got.DeletedFilesCount), w.addF, w.exF, w.delF)
	}
	if deref(got.AddedRowsCount) != w.addR || deref(got.ExistingRowsCount) != w.exR || deref(got.DeletedRowsCount) != w.delR {
		t.Errorf("rows = %v/%v/%v, want %d/%d/%d", deref(got.AddedRowsCount), deref(got.ExistingRowsCount), deref(got.DeletedRowsCount), w.addR, w.exR, w.delR)
	}
	if deref(got.FirstRowID) != w.firstRowID {
		t.Errorf("first_row_id = %v, want %v", deref(got.FirstRowID), w.firstRowID)
	}
}

func TestConformanceManifestListV2Legacy(t *testing.T) {
	h, mfs := readList(t, openConformance(t, "manifest-list-v2-1.avro"))
	if h.FormatVersion != 2 || deref(h.SnapshotID) != int64(6653143792592159268) || h.ParentSnapshotID != nil || deref(h.SequenceNumber) != int64(1) {
		t.Errorf("header = %+v", h)
	}
	if h.Metadata["parent-snapshot-id"] != "null" {
		t.Errorf("parent-snapshot-id metadata = %q", h.Metadata["parent-snapshot-id"])
	}
	if len(mfs) != 1 {
		t.Fatalf("got %d entries, want 1", len(mfs))
	}
	checkListEntry(t, mfs[0], listExpect{
		path: "iceberg-warehouse/people/metadata/794bd2ee-052c-449c-9a6f-3a88857c747f-m0.avro", length: 6658,
		seq: 1, minSeq: 1, snap: 6653143792592159268, addF: 1, addR: 1,
	})
	if mfs[0].SpecID != 0 || mfs[0].Partitions == nil || len(mfs[0].Partitions) != 0 {
		t.Errorf("spec %d partitions %#v, want 0 and []", mfs[0].SpecID, mfs[0].Partitions)
	}
}

func TestConformanceManifestListDuckDBV3(t *testing.T) {
	h, mfs := readList(t, openConformance(t, "duckdb_v3_manifest_list.avro"))
	if h.FormatVersion != 3 {
		t.Errorf("format version = %d, want 3 (inferred from field 520)", h.FormatVersion)
	}
	if len(mfs) != 2 {
		t.Fatalf("got %d entries, want 2", len(mfs))
	}
	checkListEntry(t, mfs[0], listExpect{length: 2390, content: ManifestContentData, seq: 1, minSeq: 1, snap: 5275221492656851850, addF: 1, addR: 100, firstRowID: int64(0)})
	checkListEntry(t, mfs[1], listExpect{length: 2599, content: ManifestContentDeletes, seq: 2, minSeq: 2, snap: 226306597092543916, addF: 1, addR: 10, firstRowID: int64(100)})
}

func TestConformanceManifestListsLineitem(t *testing.T) {
	h, mfs := readList(t, openConformance(t, "snap-2354745328521181395-1-179b4fb1-0366-4f7d-ad35-99ee8da0abf5.avro"))
	if h.FormatVersion != 2 || deref(h.ParentSnapshotID) != int64(7817332053627255703) || deref(h.SequenceNumber) != int64(2) {
		t.Errorf("header = %+v", h)
	}
	if len(mfs) != 2 {
		t.Fatalf("got %d entries, want 2", len(mfs))
	}
	checkListEntry(t, mfs[0], listExpect{path: "lineitem_iceberg/metadata/179b4fb1-0366-4f7d-ad35-99ee8da0abf5-m1.avro", length: 7863, seq: 2, minSeq: 2, snap: 2354745328521181395, addF: 1, addR: 51793})
	checkListEntry(t, mfs[1], listExpect{path: "lineitem_iceberg/metadata/179b4fb1-0366-4f7d-ad35-99ee8da0abf5-m0.avro", length: 7862, seq: 2, minSeq: 2, snap: 2354745328521181395, delF: 1, delR: 60175})

	_, mfs = readList(t, openConformance(t, "snap-7817332053627255703-1-787a5996-87e9-4d93-b258-066d524e82cc.avro"))
	if len(mfs) != 1 {
		t.Fatalf("got %d entries, want 1", len(mfs))
	}
	checkListEntry(t, mfs[0], listExpect{path: "lineitem_iceberg/metadata/787a5996-87e9-4d93-b258-066d524e82cc-m0.avro", length: 7867, seq: 1, minSeq: 1, snap: 7817332053627255703, addF: 1, addR: 60175})
	st, err := os.Stat(testenv.ConformanceFile(t, "avro/787a5996-87e9-4d93-b258-066d524e82cc-m0.avro"))
	if err != nil || st.Size() != mfs[0].Length {
		t.Errorf("manifest length %d does not match the file (%v, %v)", mfs[0].Length, st, err)
	}
}

func TestConformanceManifests(t *testing.T) {
	cases := []struct {
		file          string
		status        EntryStatus
		snap          int64
		rawSeq        any // as stored
		inheritedSeq  int64
		listSeq       int64
		records, size int64
	}{
		{"179b4fb1-0366-4f7d-ad35-99ee8da0abf5-m0.avro", StatusDeleted, 2354745328521181395, int64(1), 1, 2, 60175, 1406875},
		{"179b4fb1-0366-4f7d-ad35-99ee8da0abf5-m1.avro", StatusAdded, 2354745328521181395, nil, 2, 2, 51793, 1225526},
		{"787a5996-87e9-4d93-b258-066d524e82cc-m0.avro", StatusAdded, 7817332053627255703, nil, 1, 1, 60175, 1406875},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			meta, es := readEntries(t, openConformance(t, c.file), nil)
			if meta.FormatVersion != 2 || meta.Content != ManifestContentData || meta.Spec.ID != 0 || len(meta.Spec.Fields) != 0 {
				t.Errorf("meta = version %d content %d spec %+v", meta.FormatVersion, meta.Content, meta.Spec)
			}
			if meta.Schema == nil || len(meta.Schema.Fields) != 16 || meta.Schema.Fields[0].Name != "l_orderkey" {
				t.Errorf("schema not parsed: %+v", meta.Schema)
			}
			if len(es) != 1 {
				t.Fatalf("got %d entries, want 1", len(es))
			}
			e := es[0]
			if e.Status != c.status || deref(e.SnapshotID) != c.snap || deref(e.SequenceNumber) != c.rawSeq || deref(e.FileSequenceNumber) != c.rawSeq {
				t.Errorf("entry status %d snapshot %v seq %v/%v, want %d %d %v", e.Status, deref(e.SnapshotID), deref(e.SequenceNumber), deref(e.FileSequenceNumber), c.status, c.snap, c.rawSeq)
			}
			df := e.DataFile
			if df.RecordCount != c.records || df.FileSizeInBytes != c.size || df.Content != ContentData || df.FileFormat != "PARQUET" || len(df.Partition) != 0 {
				t.Errorf("data file = %+v", df)
			}
			if len(df.ColumnSizes) != 16 || df.ValueCounts[1] != c.records || df.NullValueCounts[1] != 0 {
				t.Errorf("metrics: column sizes %d, value count %d", len(df.ColumnSizes), df.ValueCounts[1])
			}
			_, es = readEntries(t, openConformance(t, c.file), &ManifestFile{SequenceNumber: c.listSeq, AddedSnapshotID: c.snap})
			if got := deref(es[0].SequenceNumber); got != c.inheritedSeq {
				t.Errorf("inherited sequence number = %v, want %d", got, c.inheritedSeq)
			}
			if got := deref(es[0].FileSequenceNumber); got != c.inheritedSeq {
				t.Errorf("inherited file sequence number = %v, want %d", got, c.inheritedSeq)
			}
		})
	}
}
