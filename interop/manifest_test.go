package interop

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/interop/icebergread"
)

const (
	snapshotID = int64(7001)
	parentID   = int64(7000)
	listSeq    = int64(6)
	firstRow   = int64(5000)
)

type written struct {
	path    string
	data    []byte
	entries []manifest.Entry
	mf      manifest.ManifestFile
}

func writeManifest(t *testing.T, version int, content manifest.ManifestContent, path string, entries []manifest.Entry) written {
	t.Helper()
	s := testSchema(version)
	var buf bytes.Buffer
	w, err := manifest.NewWriter(&buf, manifest.WriterOptions{
		Version: version, Content: content, Schema: s, Spec: testSpec(version), SnapshotID: snapshotID,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := w.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return written{path: path, data: buf.Bytes(), entries: entries, mf: w.ManifestFile(path, int64(buf.Len()))}
}

// TestManifestsReadByIcebergGo writes a data and a delete manifest and a
// manifest list listing them with icectl, for format v2 and v3, and checks
// that iceberg-go reads every field back: manifest-list entries, stored
// entry values, values after inheritance, partition values of every type,
// and v3 first_row_id assignment.
func TestManifestsReadByIcebergGo(t *testing.T) {
	for _, version := range []int{2, 3} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			s := testSchema(version)
			types := partitionTypes(s, testSpec(version))
			data := writeManifest(t, version, manifest.ManifestContentData, "s3://bucket/tbl/metadata/m-data.avro", dataEntries(version, s, types))
			dels := writeManifest(t, version, manifest.ManifestContentDeletes, "s3://bucket/tbl/metadata/m-deletes.avro", deleteEntries(version, types))
			// A second data manifest after the delete manifest: its first_row_id
			// must start where the first one's range ends, not where the
			// delete manifest would have put it.
			data2 := writeManifest(t, version, manifest.ManifestContentData, "s3://bucket/tbl/metadata/m-data2.avro", dataEntries(version, s, types)[:2])
			manifests := []written{data, dels, data2}

			var fr *int64
			if version >= 3 {
				fr = ptr(firstRow)
			}
			var buf bytes.Buffer
			lw, err := manifest.NewListWriter(&buf, version, snapshotID, ptr(parentID), listSeq, fr)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range manifests {
				if err := lw.Add(m.mf); err != nil {
					t.Fatal(err)
				}
			}
			if err := lw.Close(); err != nil {
				t.Fatal(err)
			}

			list, err := icebergread.ReadManifestList(buf.Bytes())
			if err != nil {
				t.Fatalf("iceberg-go cannot read icectl's manifest list: %v", err)
			}
			checkListHeader(t, version, list.Header)
			if len(list.Manifests) != len(manifests) {
				t.Fatalf("iceberg-go reads %d manifest-list entries, want %d", len(list.Manifests), len(manifests))
			}
			wantList := expectedList(version, manifests)
			for i := range manifests {
				checkListEntry(t, wantList[i], list.Manifests[i])
			}
			checkListAgainstIcectl(t, buf.Bytes(), list)
			if version >= 3 {
				rows := *wantList[0].AddedRowsCount + *wantList[0].ExistingRowsCount +
					*wantList[2].AddedRowsCount + *wantList[2].ExistingRowsCount
				if got := lw.NextRowID(); got == nil || *got != firstRow+rows {
					t.Errorf("ListWriter.NextRowID = %v, want %d", got, firstRow+rows)
				}
			}

			for i, m := range manifests {
				got, err := icebergread.ReadManifest(m.data, m.path, &list.Manifests[i])
				if err != nil {
					t.Fatalf("iceberg-go cannot read icectl's manifest %s: %v", m.path, err)
				}
				checkManifest(t, version, m, wantList[i], types, got)
				checkInheritanceAgainstIcectl(t, m, wantList[i], got)
			}
		})
	}
}

func checkListHeader(t *testing.T, version int, h map[string]string) {
	t.Helper()
	want := map[string]string{
		"snapshot-id":        strconv.FormatInt(snapshotID, 10),
		"parent-snapshot-id": strconv.FormatInt(parentID, 10),
		"sequence-number":    strconv.FormatInt(listSeq, 10),
		"format-version":     strconv.Itoa(version),
	}
	if version >= 3 {
		want["first-row-id"] = strconv.FormatInt(firstRow, 10)
	}
	for k, v := range want {
		if h[k] != v {
			t.Errorf("manifest list header %q = %q, want %q", k, h[k], v)
		}
	}
}

// expectedList applies the spec's manifest-list rules to what the
// manifest writers reported: unassigned sequence numbers become the
// snapshot's, and in v3 data manifests get consecutive first_row_id ranges
// of added + existing rows while delete manifests get none.
func expectedList(version int, ms []written) []manifest.ManifestFile {
	next := firstRow
	out := make([]manifest.ManifestFile, len(ms))
	for i, m := range ms {
		mf := m.mf
		if mf.SequenceNumber == manifest.UnassignedSequenceNumber {
			mf.SequenceNumber = listSeq
		}
		if mf.MinSequenceNumber == manifest.UnassignedSequenceNumber {
			mf.MinSequenceNumber = listSeq
		}
		if version >= 3 && mf.Content == manifest.ManifestContentData {
			mf.FirstRowID = ptr(next)
			next += *mf.AddedRowsCount + *mf.ExistingRowsCount
		}
		out[i] = mf
	}
	return out
}

func checkListEntry(t *testing.T, want manifest.ManifestFile, got icebergread.ManifestFile) {
	t.Helper()
	where := want.Path
	eq := func(field string, w, g any) {
		if fmt.Sprint(w) != fmt.Sprint(g) {
			t.Errorf("%s: manifest list %s: iceberg-go reads %v, want %v", where, field, g, w)
		}
	}
	eq("manifest_path", want.Path, got.Path)
	eq("manifest_length", want.Length, got.Length)
	eq("partition_spec_id", want.SpecID, got.SpecID)
	eq("content", int32(want.Content), got.Content)
	eq("sequence_number", want.SequenceNumber, got.SequenceNumber)
	eq("min_sequence_number", want.MinSequenceNumber, got.MinSequenceNumber)
	eq("added_snapshot_id", want.AddedSnapshotID, got.AddedSnapshotID)
	eq("added_files_count", *want.AddedFilesCount, got.AddedFilesCount)
	eq("existing_files_count", *want.ExistingFilesCount, got.ExistingFilesCount)
	eq("deleted_files_count", *want.DeletedFilesCount, got.DeletedFilesCount)
	eq("added_rows_count", *want.AddedRowsCount, got.AddedRowsCount)
	eq("existing_rows_count", *want.ExistingRowsCount, got.ExistingRowsCount)
	eq("deleted_rows_count", *want.DeletedRowsCount, got.DeletedRowsCount)
	eq("first_row_id", deref(want.FirstRowID), deref(got.FirstRowID))
	eq("key_metadata", hexOf(want.KeyMetadata), deref(got.KeyMetadata))
	if len(got.Partitions) != len(want.Partitions) {
		t.Errorf("%s: %d partition summaries, want %d", where, len(got.Partitions), len(want.Partitions))
		return
	}
	for i, w := range want.Partitions {
		g := got.Partitions[i]
		eq(fmt.Sprintf("partitions[%d].contains_null", i), w.ContainsNull, g.ContainsNull)
		eq(fmt.Sprintf("partitions[%d].contains_nan", i), deref(w.ContainsNaN), deref(g.ContainsNaN))
		eq(fmt.Sprintf("partitions[%d].lower_bound", i), hexOf(w.LowerBound), deref(g.LowerBound))
		eq(fmt.Sprintf("partitions[%d].upper_bound", i), hexOf(w.UpperBound), deref(g.UpperBound))
	}
}

// checkListAgainstIcectl reads the same list with icectl's reader: the two
// implementations must agree on every entry.
func checkListAgainstIcectl(t *testing.T, data []byte, list *icebergread.ManifestList) {
	t.Helper()
	lr, err := manifest.OpenManifestList(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		mf, err := lr.Next()
		if errors.Is(err, io.EOF) {
			if i != len(list.Manifests) {
				t.Errorf("icectl reads %d manifest-list entries, iceberg-go %d", i, len(list.Manifests))
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if i < len(list.Manifests) {
			checkListEntry(t, mf, list.Manifests[i])
		}
	}
}

func checkManifest(t *testing.T, version int, m written, mf manifest.ManifestFile, types []spec.Type, got *icebergread.Manifest) {
	t.Helper()
	ps := testSpec(version)
	if got.FormatVersion != version || got.PartitionSpecID != ps.ID || got.Content != int32(mf.Content) {
		t.Errorf("%s: iceberg-go reads version %d, spec id %d, content %d; want %d, %d, %d",
			m.path, got.FormatVersion, got.PartitionSpecID, got.Content, version, ps.ID, mf.Content)
	}
	if len(got.PartitionFields) != len(ps.Fields) {
		t.Fatalf("%s: iceberg-go reads %d partition fields, want %d", m.path, len(got.PartitionFields), len(ps.Fields))
	}
	for i, f := range ps.Fields {
		g := got.PartitionFields[i]
		if g.FieldID != f.FieldID || g.SourceID != f.SourceID || g.Name != f.Name || g.Transform != f.Transform.String() {
			t.Errorf("%s: partition field %d: iceberg-go reads %+v, want %d/%d/%s/%s", m.path, i, g, f.FieldID, f.SourceID, f.Name, f.Transform)
		}
	}
	if len(got.Entries) != len(m.entries) {
		t.Fatalf("%s: iceberg-go reads %d entries, want %d", m.path, len(got.Entries), len(m.entries))
	}
	nextRow := int64(0)
	if mf.FirstRowID != nil {
		nextRow = *mf.FirstRowID
	}
	for i, w := range m.entries {
		g := got.Entries[i]
		where := fmt.Sprintf("%s entry %d (%s)", m.path, i, w.DataFile.FilePath)
		if g.Status != int32(w.Status) {
			t.Errorf("%s: status %d, want %d", where, g.Status, w.Status)
		}
		// Stored: what the writer put in the file. A null snapshot id is
		// written as the manifest's for ADDED and DELETED entries.
		storedSnap := w.SnapshotID
		if storedSnap == nil && w.Status != manifest.StatusExisting {
			storedSnap = ptr(snapshotID)
		}
		wantStored := icebergread.EntryNumbers{
			SnapshotID: storedSnap, SequenceNumber: w.SequenceNumber,
			FileSequenceNumber: w.FileSequenceNumber, FirstRowID: w.DataFile.FirstRowID,
		}
		checkNumbers(t, where+" stored", wantStored, g.Stored)

		// Inherited, by the spec's rules.
		inh := wantStored
		if inh.SnapshotID == nil {
			inh.SnapshotID = ptr(mf.AddedSnapshotID)
		}
		if w.Status == manifest.StatusAdded {
			if inh.SequenceNumber == nil {
				inh.SequenceNumber = ptr(mf.SequenceNumber)
			}
			if inh.FileSequenceNumber == nil {
				inh.FileSequenceNumber = ptr(mf.SequenceNumber)
			}
		}
		if mf.FirstRowID != nil && w.Status != manifest.StatusDeleted && inh.FirstRowID == nil {
			inh.FirstRowID = ptr(nextRow)
			nextRow += w.DataFile.RecordCount
		}
		if g.Inherited == nil {
			t.Errorf("%s: no inherited values", where)
		} else {
			checkNumbers(t, where+" inherited", inh, *g.Inherited)
		}
		checkDataFile(t, where, w.DataFile, int32(testSpec(version).ID), types, g.DataFile)
	}
}

func checkNumbers(t *testing.T, where string, want, got icebergread.EntryNumbers) {
	t.Helper()
	for _, c := range []struct {
		name string
		w, g *int64
	}{
		{"snapshot_id", want.SnapshotID, got.SnapshotID},
		{"sequence_number", want.SequenceNumber, got.SequenceNumber},
		{"file_sequence_number", want.FileSequenceNumber, got.FileSequenceNumber},
		{"first_row_id", want.FirstRowID, got.FirstRowID},
	} {
		if deref(c.w) != deref(c.g) {
			t.Errorf("%s %s: iceberg-go reads %s, want %s", where, c.name, deref(c.g), deref(c.w))
		}
	}
}

func checkDataFile(t *testing.T, where string, w manifest.DataFile, specID int32, types []spec.Type, g icebergread.DataFile) {
	t.Helper()
	eq := func(field string, want, got any) {
		if fmt.Sprint(want) != fmt.Sprint(got) {
			t.Errorf("%s: data_file.%s: iceberg-go reads %v, want %v", where, field, got, want)
		}
	}
	eq("content", int32(w.Content), g.Content)
	eq("file_path", w.FilePath, g.FilePath)
	eq("file_format", w.FileFormat, g.FileFormat)
	eq("spec_id", specID, g.SpecID)
	eq("record_count", w.RecordCount, g.RecordCount)
	eq("file_size_in_bytes", w.FileSizeInBytes, g.FileSizeInBytes)
	// Absent and empty maps and lists are not told apart: iceberg-go's
	// DataFile interface returns nil for both.
	for _, c := range []struct {
		name string
		w, g map[int]int64
	}{
		{"column_sizes", w.ColumnSizes, g.ColumnSizes},
		{"value_counts", w.ValueCounts, g.ValueCounts},
		{"null_value_counts", w.NullValueCounts, g.NullValueCounts},
		{"nan_value_counts", w.NaNValueCounts, g.NaNValueCounts},
	} {
		if !maps.Equal(c.w, c.g) {
			t.Errorf("%s: data_file.%s: iceberg-go reads %v, want %v", where, c.name, c.g, c.w)
		}
	}
	if want := hexMap(w.LowerBounds); !maps.Equal(want, g.LowerBounds) {
		t.Errorf("%s: data_file.lower_bounds: iceberg-go reads %v, want %v", where, g.LowerBounds, want)
	}
	if want := hexMap(w.UpperBounds); !maps.Equal(want, g.UpperBounds) {
		t.Errorf("%s: data_file.upper_bounds: iceberg-go reads %v, want %v", where, g.UpperBounds, want)
	}
	eq("key_metadata", hexOf(w.KeyMetadata), deref(g.KeyMetadata))
	if !slices.Equal(w.SplitOffsets, g.SplitOffsets) {
		t.Errorf("%s: data_file.split_offsets: iceberg-go reads %v, want %v", where, g.SplitOffsets, w.SplitOffsets)
	}
	if !slices.Equal(w.EqualityIDs, g.EqualityIDs) {
		t.Errorf("%s: data_file.equality_ids: iceberg-go reads %v, want %v", where, g.EqualityIDs, w.EqualityIDs)
	}
	eq("sort_order_id", deref(w.SortOrderID), deref(g.SortOrderID))
	eq("referenced_data_file", deref(w.ReferencedDataFile), deref(g.ReferencedDataFile))
	eq("content_offset", deref(w.ContentOffset), deref(g.ContentOffset))
	eq("content_size_in_bytes", deref(w.ContentSizeInBytes), deref(g.ContentSizeInBytes))

	if len(g.Partition) != len(types) {
		t.Errorf("%s: %d partition values, want %d", where, len(g.Partition), len(types))
		return
	}
	for i, typ := range types {
		pv := g.Partition[i]
		want := "null"
		if v := w.Partition[i]; v != nil {
			b, err := spec.EncodeValue(typ, v)
			if err != nil {
				t.Fatal(err)
			}
			want = hex.EncodeToString(b)
		}
		if got := deref(pv.Hex); got != want {
			t.Errorf("%s: partition %s (%s): iceberg-go reads %s (%s %v), want %s", where, pv.Name, typ, got, pv.GoType, pv.Value, want)
		}
	}
}

// checkInheritanceAgainstIcectl reads the manifest with icectl's reader and
// the same manifest-list entry: the two implementations must agree on
// every inherited value.
func checkInheritanceAgainstIcectl(t *testing.T, m written, mf manifest.ManifestFile, got *icebergread.Manifest) {
	t.Helper()
	r, err := manifest.OpenManifest(bytes.NewReader(m.data))
	if err != nil {
		t.Fatal(err)
	}
	r.InheritFrom(mf)
	for i := 0; ; i++ {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if i >= len(got.Entries) || got.Entries[i].Inherited == nil {
			t.Fatalf("%s: icectl reads more entries than iceberg-go", m.path)
		}
		ours := icebergread.EntryNumbers{SnapshotID: e.SnapshotID, SequenceNumber: e.SequenceNumber,
			FileSequenceNumber: e.FileSequenceNumber, FirstRowID: e.DataFile.FirstRowID}
		checkNumbers(t, fmt.Sprintf("%s entry %d: icectl vs iceberg-go inherited", m.path, i), ours, *got.Entries[i].Inherited)
	}
}

func deref[T any](p *T) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

func hexOf(b []byte) string {
	if b == nil {
		return "null"
	}
	return hex.EncodeToString(b)
}

func hexMap(m map[int][]byte) map[int]string {
	if m == nil {
		return nil
	}
	out := make(map[int]string, len(m))
	for k, v := range m {
		out[k] = hex.EncodeToString(v)
	}
	return out
}
