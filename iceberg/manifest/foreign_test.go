package manifest_test

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/manifest/foreign"
	"github.com/icectl/icectl/iceberg/spec"
)

func foreignTable() (*spec.Schema, spec.PartitionSpec) {
	s := &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "region", Type: spec.StringType{}},
		{ID: 3, Name: "ts", Type: spec.TimestampTzType{}},
	}}
	ps := spec.PartitionSpec{ID: 0, Fields: []spec.PartitionField{
		{SourceID: 2, FieldID: 1000, Name: "region", Transform: spec.Transform{Kind: spec.TransformIdentity}},
		{SourceID: 3, FieldID: 1001, Name: "ts_day", Transform: spec.Transform{Kind: spec.TransformDay}},
	}}
	return s, ps
}

// foreignEntries are entries as the engine writes them: BigQuery leaves
// snapshot and sequence numbers to inheritance.
func foreignEntries(e foreign.Engine, content manifest.ManifestContent) []manifest.Entry {
	seq, snap := int64(7), int64(42)
	var out []manifest.Entry
	for i, region := range []any{"eu", "us", nil} {
		df := manifest.DataFile{Content: manifest.ContentData, FilePath: "s3://b/t/data/f" + string(rune('a'+i)) + ".parquet",
			FileFormat: "PARQUET", Partition: []any{region, int32(19900 + i)}, RecordCount: int64(10 * (i + 1)), FileSizeInBytes: 1000,
			ColumnSizes: map[int]int64{1: 80, 2: 40}, ValueCounts: map[int]int64{1: 10}, NullValueCounts: map[int]int64{2: 0},
			LowerBounds: map[int][]byte{1: {1, 0, 0, 0, 0, 0, 0, 0}}, UpperBounds: map[int][]byte{1: {9, 0, 0, 0, 0, 0, 0, 0}},
			SplitOffsets: []int64{4}}
		if content == manifest.ManifestContentDeletes {
			df.Content = manifest.ContentEqualityDeletes
			df.EqualityIDs = []int{1, 2}
		}
		en := manifest.Entry{Status: manifest.StatusAdded, DataFile: df}
		if e != foreign.BigQuery {
			en.SnapshotID, en.SequenceNumber, en.FileSequenceNumber = &snap, &seq, &seq
		}
		out = append(out, en)
	}
	return out
}

// TestForeignManifestsRead reads manifests laid out as PyIceberg and
// BigQuery write them (equality_ids as longs; every field, data_file and
// partition included, a nullable union) with the full reader, the
// projected reader and the entry scanner.
func TestForeignManifestsRead(t *testing.T) {
	schema, ps := foreignTable()
	mf := manifest.ManifestFile{SequenceNumber: 7, AddedSnapshotID: 42}
	for _, e := range foreign.Engines {
		for _, content := range []manifest.ManifestContent{manifest.ManifestContentData, manifest.ManifestContentDeletes} {
			t.Run(e.String()+"/"+[]string{"data", "deletes"}[content], func(t *testing.T) {
				want := foreignEntries(e, content)
				var buf bytes.Buffer
				if _, err := foreign.WriteManifest(&buf, foreign.ManifestOptions{Engine: e, Version: 2, Content: content, Schema: schema, Spec: ps}, want); err != nil {
					t.Fatal(err)
				}
				for _, opts := range [][]manifest.ReadOption{nil, {manifest.WithoutMetrics()}} {
					r, err := manifest.OpenManifest(bytes.NewReader(buf.Bytes()), opts...)
					if err != nil {
						t.Fatalf("open: %v", err)
					}
					r.InheritFrom(mf)
					for i := 0; ; i++ {
						got, err := r.Next()
						if errors.Is(err, io.EOF) {
							if i != len(want) {
								t.Fatalf("read %d entries, want %d", i, len(want))
							}
							break
						}
						if err != nil {
							t.Fatal(err)
						}
						w := want[i]
						if got.Status != w.Status || *got.SnapshotID != 42 || *got.SequenceNumber != 7 || *got.FileSequenceNumber != 7 {
							t.Errorf("entry %d: status %d snapshot %d seq %d/%d", i, got.Status, *got.SnapshotID, *got.SequenceNumber, *got.FileSequenceNumber)
						}
						g, wd := got.DataFile, w.DataFile
						if g.FilePath != wd.FilePath || g.Content != wd.Content || g.RecordCount != wd.RecordCount ||
							!reflect.DeepEqual(g.Partition, wd.Partition) || !reflect.DeepEqual(g.EqualityIDs, wd.EqualityIDs) {
							t.Errorf("entry %d: got %+v\nwant %+v", i, g, wd)
						}
						if opts == nil && (!reflect.DeepEqual(g.ColumnSizes, wd.ColumnSizes) || !reflect.DeepEqual(g.LowerBounds, wd.LowerBounds) ||
							!reflect.DeepEqual(g.SplitOffsets, wd.SplitOffsets)) {
							t.Errorf("entry %d metrics: got %+v\nwant %+v", i, g, wd)
						}
					}
				}
				s := manifest.NewEntryScanner(manifest.NewScanCache())
				defer s.Close()
				if err := s.Reset(bytes.NewReader(buf.Bytes()), mf); err != nil {
					t.Fatalf("scanner: %v", err)
				}
				for i := 0; ; i++ {
					var se manifest.SlimEntry
					err := s.Next(&se)
					if errors.Is(err, io.EOF) {
						if i != len(want) {
							t.Fatalf("scanned %d entries, want %d", i, len(want))
						}
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					p, err := s.DecodePartition(se.Partition)
					if err != nil {
						t.Fatal(err)
					}
					wd := want[i].DataFile
					if string(se.Path) != wd.FilePath || se.Content != wd.Content || se.SequenceNumber != 7 || !reflect.DeepEqual(p, wd.Partition) {
						t.Errorf("scanned entry %d: %+v %v", i, se, p)
					}
				}
			})
		}
	}
}

// TestForeignListRead reads manifest lists laid out as each engine writes
// them.
func TestForeignListRead(t *testing.T) {
	n, c := int32(3), int64(30)
	nan := false
	want := []manifest.ManifestFile{{Path: "s3://b/t/metadata/m0.avro", Length: 4000, SpecID: 0, Content: manifest.ManifestContentDeletes,
		SequenceNumber: 7, MinSequenceNumber: 5, AddedSnapshotID: 42, AddedFilesCount: &n, ExistingFilesCount: &n, DeletedFilesCount: &n,
		AddedRowsCount: &c, ExistingRowsCount: &c, DeletedRowsCount: &c,
		Partitions: []manifest.FieldSummary{{ContainsNull: true, ContainsNaN: &nan, LowerBound: []byte("eu"), UpperBound: []byte("us")}}}}
	for _, e := range foreign.Engines {
		var buf bytes.Buffer
		if _, err := foreign.WriteManifestList(&buf, foreign.ListOptions{Engine: e, SnapshotID: 42, SequenceNumber: 7}, want); err != nil {
			t.Fatal(err)
		}
		r, err := manifest.OpenManifestList(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		got, err := r.Next()
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		if !reflect.DeepEqual(got, want[0]) {
			t.Errorf("%s: got %+v\nwant %+v", e, got, want[0])
		}
	}
}

// TestLongOutOfIntRange: a long where an int is read is accepted only when
// the value fits; otherwise the entry is a clean error.
func TestLongOutOfIntRange(t *testing.T) {
	schema, ps := foreignTable()
	es := foreignEntries(foreign.PyIceberg, manifest.ManifestContentDeletes)
	es[0].DataFile.EqualityIDs = []int{1 << 40}
	var buf bytes.Buffer
	if _, err := foreign.WriteManifest(&buf, foreign.ManifestOptions{Engine: foreign.PyIceberg, Version: 2, Content: manifest.ManifestContentDeletes, Schema: schema, Spec: ps}, es); err != nil {
		t.Fatal(err)
	}
	r, err := manifest.OpenManifest(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("got %v, want an out-of-range error", err)
	}
}
