package manifest

import (
	"bytes"
	"errors"
	"github.com/icectl/icectl/internal/testing/crafted"
	"io"
	"reflect"
	"testing"
)

// scanAll reads every entry of a manifest with an EntryScanner, as the
// slim entries it returns and their decoded partitions.
func scanAll(s *EntryScanner, data []byte, mf ManifestFile) ([]SlimEntry, [][]any, error) {
	if err := s.Reset(bytes.NewReader(data), mf); err != nil {
		return nil, nil, err
	}
	var out []SlimEntry
	var parts [][]any
	for {
		var e SlimEntry
		err := s.Next(&e)
		if errors.Is(err, io.EOF) {
			return out, parts, nil
		}
		if err != nil {
			return nil, nil, err
		}
		p, err := s.DecodePartition(e.Partition)
		if err != nil {
			return nil, nil, err
		}
		e.Path = bytes.Clone(e.Path)
		e.Partition = nil
		out = append(out, e)
		parts = append(parts, p)
	}
}

// slimOf is what an EntryScanner must return for a fully decoded entry.
func slimOf(e Entry) SlimEntry {
	df := e.DataFile
	s := SlimEntry{Status: e.Status, Content: df.Content, Path: []byte(df.FilePath), Format: df.FileFormat,
		RecordCount: df.RecordCount, FileSizeInBytes: df.FileSizeInBytes}
	if e.SequenceNumber != nil {
		s.SequenceNumber, s.HasSequenceNumber = *e.SequenceNumber, true
	}
	if e.FileSequenceNumber != nil {
		s.FileSequenceNumber, s.HasFileSequenceNumber = *e.FileSequenceNumber, true
	}
	if df.FirstRowID != nil {
		s.FirstRowID, s.HasFirstRowID = *df.FirstRowID, true
	}
	return s
}

// compareScan checks the scanner against the full reader, both with
// inheritance from mf.
func compareScan(t *testing.T, what string, s *EntryScanner, data []byte, mf ManifestFile) {
	t.Helper()
	mr, err := OpenManifest(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	mr.InheritFrom(mf)
	var full []Entry
	for {
		e, err := mr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: full decode: %v", what, err)
		}
		full = append(full, e)
	}
	slim, parts, err := scanAll(s, data, mf)
	if err != nil {
		t.Fatalf("%s: scan: %v", what, err)
	}
	if len(slim) != len(full) {
		t.Fatalf("%s: %d entries scanned, %d in full", what, len(slim), len(full))
	}
	for i := range full {
		if want := slimOf(full[i]); !reflect.DeepEqual(slim[i], want) {
			t.Errorf("%s entry %d:\nscanned %+v\nwant    %+v", what, i, slim[i], want)
		}
		if !reflect.DeepEqual(parts[i], full[i].DataFile.Partition) {
			t.Errorf("%s entry %d: partition %#v, want %#v", what, i, parts[i], full[i].DataFile.Partition)
		}
	}
	if !reflect.DeepEqual(*s.Meta(), mr.Meta()) {
		t.Errorf("%s: meta %+v, want %+v", what, *s.Meta(), mr.Meta())
	}
}

func TestEntryScannerConformance(t *testing.T) {
	s := NewEntryScanner(NewScanCache())
	defer s.Close()
	n := 0
	for name, data := range conformanceFiles(t) {
		if isList(name) {
			continue
		}
		compareScan(t, name, s, data, ManifestFile{SequenceNumber: 7, AddedSnapshotID: 3})
		n++
	}
	if n == 0 {
		t.Fatal("no conformance manifests")
	}
}

func TestEntryScannerGenerated(t *testing.T) {
	cache := NewScanCache()
	s := NewEntryScanner(cache)
	defer s.Close()
	schema, ps := allTypesTable()
	for _, version := range []int{2, 3} {
		for _, content := range []ManifestContent{ManifestContentData, ManifestContentDeletes} {
			es := sampleEntries(version, content)
			es[0].DataFile.FileFormat = "A-FORMAT-LONGER-THAN-EIGHT"
			data, mf := writeManifest(t, WriterOptions{Version: version, Schema: schema, Spec: ps, SnapshotID: 7, Content: content}, es)
			for _, first := range []*int64{nil, ptr(int64(1000))} {
				mf.SequenceNumber, mf.FirstRowID = 9, first
				compareScan(t, "generated", s, data, mf)
				// A sequence number of 0 (as for v1 manifests) is inherited
				// by every entry.
				mf.SequenceNumber = 0
				compareScan(t, "generated, sequence number 0", s, data, mf)
			}
		}
	}
	if cache.programs.n == 0 {
		t.Error("nothing cached")
	}
}

func TestEntryScannerTruncated(t *testing.T) {
	schema, ps := allTypesTable()
	data, mf := writeManifest(t, WriterOptions{Version: 2, Schema: schema, Spec: ps, SnapshotID: 7}, sampleEntries(2, ManifestContentData))
	s := NewEntryScanner(NewScanCache())
	defer s.Close()
	for _, n := range []int{0, 3, 10, len(data) / 2, len(data) - 17, len(data) - 1} {
		if _, _, err := scanAll(s, data[:n], mf); err == nil {
			t.Errorf("truncated to %d bytes: no error", n)
		}
	}
	// The scanner is reusable after an error.
	compareScan(t, "after errors", s, data, mf)
}

// FuzzEntryScanner checks that the scanner never disagrees with a full
// read of the same bytes.
func FuzzEntryScanner(f *testing.F) {
	for name, d := range conformanceFiles(f) {
		if !isList(name) {
			f.Add(d)
		}
	}
	schema, ps := allTypesTable()
	d, _ := writeManifest(f, WriterOptions{Version: 3, Schema: schema, Spec: ps, SnapshotID: 7}, sampleEntries(3, ManifestContentData))
	f.Add(d)
	cache := NewScanCache()
	f.Fuzz(func(t *testing.T, data []byte) {
		mf := ManifestFile{SequenceNumber: 5, FirstRowID: ptr(int64(10))}
		mr, err := OpenManifest(bytes.NewReader(data))
		if err != nil {
			return
		}
		mr.InheritFrom(mf)
		var full []Entry
		for {
			e, err := mr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return // the scanner skips metrics a full read may find corrupt
			}
			full = append(full, e)
		}
		s := NewEntryScanner(cache)
		defer s.Close()
		var slim []SlimEntry
		var parts [][]any
		crafted.CheckAlloc(t, len(data), avroFuzzFixed, avroFuzzPerByte, func() { slim, parts, err = scanAll(s, data, mf) })
		if errors.Is(err, ErrNoFastPath) {
			return
		}
		if err != nil {
			t.Fatalf("full read succeeds, scan fails: %v", err)
		}
		if len(slim) != len(full) {
			t.Fatalf("%d entries scanned, %d in full", len(slim), len(full))
		}
		for i := range full {
			if want := slimOf(full[i]); !reflect.DeepEqual(slim[i], want) || !reflect.DeepEqual(parts[i], full[i].DataFile.Partition) {
				t.Fatalf("entry %d differs:\nscanned %+v %v\nfull    %+v %v", i, slim[i], parts[i], want, full[i].DataFile.Partition)
			}
		}
	})
}
