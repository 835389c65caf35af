package table

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio/faultio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// collectSink keeps copies of what ScanLiveFiles hands it.
type collectSink struct {
	mu    *sync.Mutex
	files *[]LiveDataFile
	fail  string // an error on this path
}

func (s collectSink) Add(f *LiveDataFile) error {
	if s.fail != "" && string(f.Path) == s.fail {
		return errors.New("sink refuses " + s.fail)
	}
	c := *f
	c.Path = bytes.Clone(f.Path)
	s.mu.Lock()
	*s.files = append(*s.files, c)
	s.mu.Unlock()
	return nil
}

// partitionedTable is a v-format table partitioned by identity(name) with
// many small manifests, some entries EXISTING or DELETED, position deletes
// (v2) or DVs (v3), and an equality delete.
func partitionedTable(t *testing.T, v int) (*env, *catalog.Table, *spec.Snapshot) {
	t.Helper()
	e, _ := newEnv(t, v)
	md, err := spec.NewTableMetadata(testSchema(), spec.PartitionSpec{ID: 0, Fields: []spec.PartitionField{
		{SourceID: 2, FieldID: 1000, Name: "name", Transform: spec.Transform{Kind: spec.TransformIdentity}}}},
		spec.SortOrder{OrderID: 0}, "file://"+filepath.Join(e.dir, "wh", "ns", "p"), nil, v)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := e.cat.CreateTable(e.ctx, catalog.Ident{Namespace: []string{"ns"}, Name: "p"}, md)
	if err != nil {
		t.Fatal(err)
	}
	file := func(i int) manifest.DataFile {
		return manifest.DataFile{Content: manifest.ContentData, FileFormat: "PARQUET",
			FilePath:  fmt.Sprintf("%s/f%03d.parquet", DataLocation(tbl.Metadata), i),
			Partition: []any{fmt.Sprint("p", i%3)}, RecordCount: int64(10 + i), FileSizeInBytes: int64(1000 + i)}
	}
	var snap *spec.Snapshot
	for c := range 8 {
		var add []manifest.DataFile
		for i := range 5 {
			add = append(add, file(c*5+i))
		}
		tbl, snap = e.commit(t, tbl, appendFiles(add...))
	}
	// Remove some files: their manifests are rewritten with DELETED and
	// EXISTING entries.
	tbl, snap = e.commit(t, tbl, Change{Operation: spec.OperationDelete,
		Remove: []FileKey{PathKey(file(3).FilePath), PathKey(file(17).FilePath)}})
	var deletes []manifest.DataFile
	if v >= 3 {
		for i, f := range []manifest.DataFile{file(4), file(21)} {
			deletes = append(deletes, manifest.DataFile{Content: manifest.ContentPositionDeletes, FileFormat: "PUFFIN",
				FilePath: DataLocation(tbl.Metadata) + "/dv.puffin", Partition: f.Partition, RecordCount: 1, FileSizeInBytes: 100,
				ReferencedDataFile: &f.FilePath, ContentOffset: ptr(int64(4 + 40*i)), ContentSizeInBytes: ptr(int64(40))})
		}
	} else {
		deletes = append(deletes, manifest.DataFile{Content: manifest.ContentPositionDeletes, FileFormat: "PARQUET",
			FilePath: DataLocation(tbl.Metadata) + "/pos.parquet", Partition: []any{"p1"}, RecordCount: 2, FileSizeInBytes: 100})
	}
	deletes = append(deletes, manifest.DataFile{Content: manifest.ContentEqualityDeletes, FileFormat: "PARQUET",
		FilePath: DataLocation(tbl.Metadata) + "/eq.parquet", Partition: []any{"p2"}, RecordCount: 1, FileSizeInBytes: 100, EqualityIDs: []int{1}})
	tbl, snap = e.commit(t, tbl, Change{Operation: spec.OperationOverwrite, AddDeletes: deletes})
	tbl, snap = e.commit(t, tbl, appendFiles(file(100), file(101)))
	return e, tbl, snap
}

// ScanLiveFiles reads what LiveFilesWith(SkipMetrics) reads, in any
// concurrency: the data files, ordered by Pos, as LiveDataFileOf describes
// them, and the delete files as they are.
func TestScanLiveFilesMatchesLiveFiles(t *testing.T) {
	for _, v := range []int{2, 3} {
		e, tbl, snap := partitionedTable(t, v)
		full, err := LiveFilesWith(e.ctx, tbl.IO, snap, WalkOptions{SkipMetrics: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(full.Data) != 40 || len(full.Deletes) == 0 {
			t.Fatalf("v%d: fixture has %d data and %d delete files", v, len(full.Data), len(full.Deletes))
		}
		for _, conc := range []int{1, 2, 5} {
			parts := NewPartitions()
			var mu sync.Mutex
			var got []LiveDataFile
			deletes, err := ScanLiveFiles(e.ctx, tbl.IO, snap, ScanOptions{Concurrency: conc, Partitions: parts}, func() DataFileSink {
				return collectSink{mu: &mu, files: &got}
			})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(deletes, full.Deletes) {
				t.Errorf("v%d concurrency %d: deletes differ:\n%+v\n%+v", v, conc, deletes, full.Deletes)
			}
			slices.SortFunc(got, cmpPos)
			if len(got) != len(full.Data) {
				t.Fatalf("v%d concurrency %d: %d data files, want %d", v, conc, len(got), len(full.Data))
			}
			for i := range got {
				want := LiveDataFileOf(&full.Data[i], parts)
				g := got[i]
				g.Pos = 0
				if !reflect.DeepEqual(g, want) {
					t.Errorf("v%d concurrency %d: file %d:\n%+v\nwant %+v", v, conc, i, g, want)
				}
				p := parts.All()[g.Partition]
				if p.SpecID != g.SpecID || !reflect.DeepEqual(p.Tuple, full.Data[i].Entry.DataFile.Partition) {
					t.Errorf("partition %d is %+v, want %v", g.Partition, p, full.Data[i].Entry.DataFile.Partition)
				}
			}
			if v == 3 && !got[0].HasFirstRowID {
				t.Errorf("v3 data files without first_row_id")
			}
			if n := len(parts.All()); n != 3 {
				t.Errorf("%d partitions interned, want 3", n)
			}
		}
	}
}

// DataOnly: the same data files in the same order, and no delete file.
// (One goroutine: partition ids are given in the order partitions are
// first seen.)
func TestScanLiveFilesDataOnly(t *testing.T) {
	e, tbl, snap := partitionedTable(t, 3)
	scan := func(dataOnly bool) ([]FileEntry, []LiveDataFile) {
		var mu sync.Mutex
		var got []LiveDataFile
		deletes, err := ScanLiveFiles(e.ctx, tbl.IO, snap, ScanOptions{Concurrency: 1, Partitions: NewPartitions(), DataOnly: dataOnly}, func() DataFileSink {
			return collectSink{mu: &mu, files: &got}
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(got, cmpPos)
		for i := range got {
			got[i].Pos = 0
		}
		return deletes, got
	}
	allDeletes, all := scan(false)
	deletes, data := scan(true)
	if len(allDeletes) == 0 || len(deletes) != 0 {
		t.Fatalf("%d delete files with DataOnly (%d without), want none", len(deletes), len(allDeletes))
	}
	if len(data) != 40 || !reflect.DeepEqual(data, all) {
		t.Errorf("DataOnly gives %d data files, differing from the full scan's %d", len(data), len(all))
	}
}

func cmpPos(a, b LiveDataFile) int {
	switch {
	case a.Pos < b.Pos:
		return -1
	case a.Pos > b.Pos:
		return 1
	}
	return 0
}

// Errors: a sink's error is returned as is; of several failing manifests,
// the error of the first in the manifest list.
func TestScanLiveFilesErrors(t *testing.T) {
	e, tbl, snap := partitionedTable(t, 2)
	mfs, err := ManifestFiles(e.ctx, tbl.IO, snap)
	if err != nil {
		t.Fatal(err)
	}
	full, err := LiveFiles(e.ctx, tbl.IO, snap)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []LiveDataFile
	bad := full.Data[len(full.Data)/2].Entry.DataFile.FilePath
	_, err = ScanLiveFiles(e.ctx, tbl.IO, snap, ScanOptions{Concurrency: 3, Partitions: NewPartitions()}, func() DataFileSink {
		return collectSink{mu: &mu, files: &got, fail: bad}
	})
	if err == nil || err.Error() != "sink refuses "+bad {
		t.Errorf("sink error: %v", err)
	}

	var dataManifests []string
	for _, mf := range mfs {
		if mf.Content == manifest.ManifestContentData {
			dataManifests = append(dataManifests, filepath.Base(mf.Path))
		}
	}
	for _, conc := range []int{1, 4} {
		fio := faultio.New(tbl.IO)
		// The second and the last data manifest cannot be opened.
		fio.FailPath(faultio.Open, dataManifests[1])
		fio.FailPath(faultio.Open, dataManifests[len(dataManifests)-1])
		for range 5 {
			_, err := ScanLiveFiles(e.ctx, fio, snap, ScanOptions{Concurrency: conc, Partitions: NewPartitions()}, func() DataFileSink {
				return collectSink{mu: &mu, files: &got}
			})
			if err == nil || !strings.Contains(err.Error(), dataManifests[1]) {
				t.Errorf("concurrency %d: error %v, want the one of %s", conc, err, dataManifests[1])
			}
		}
	}
	if _, err := ScanLiveFiles(e.ctx, tbl.IO, snap, ScanOptions{}, nil); err == nil {
		t.Error("no partition set accepted")
	}
}
