package manifest

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// BenchmarkScanManifest reads BenchmarkReadManifest's manifest with an
// EntryScanner, as table.ScanLiveFiles does (the cache already holds the
// compiled header, as it does for all but a table's first manifest).
func BenchmarkScanManifest(b *testing.B) {
	data := benchManifest(b)
	s := NewEntryScanner(NewScanCache())
	defer s.Close()
	mf := ManifestFile{SequenceNumber: 3, AddedSnapshotID: 1}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	n := 0
	var e SlimEntry
	for b.Loop() {
		if err := s.Reset(bytes.NewReader(data), mf); err != nil {
			b.Fatal(err)
		}
		for {
			err := s.Next(&e)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "entries/s")
}
