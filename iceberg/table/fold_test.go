package table

import (
	"fmt"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// TestReplaceFoldsWhollyRemovedManifests removes every file of eight
// one-file appends and one of the two files of a ninth: the eight
// manifests are not rewritten one by one but folded into one manifest of
// DELETED entries (each with its own sequence numbers and, in v3, row
// ids), the ninth is rewritten, and the summary counts nine manifests
// replaced. iceberg-go reads the same rows, with the same lineage, before
// and after.
func TestReplaceFoldsWhollyRemovedManifests(t *testing.T) {
	testenv.Need(t, testenv.IcebergGoReader, "iceberg-go reader (scripts/build-iceberg-go-reader)")
	for _, v := range []int{2, 3} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			e, tbl := newEnv(t, v)
			const appends = 8
			var removed []manifest.DataFile
			var ids []int64
			for i := range appends {
				d := e.writeData(t, tbl, fmt.Sprintf("d%d", i), int64(2*i), int64(2*i+1))
				tbl, _ = e.commit(t, tbl, appendFiles(d))
				removed = append(removed, d)
				ids = append(ids, int64(2*i), int64(2*i+1))
			}
			a := e.writeData(t, tbl, "a", 100)
			b := e.writeData(t, tbl, "b", 101)
			tbl, _ = e.commit(t, tbl, appendFiles(a, b))
			removed = append(removed, a)
			ids = append(ids, 100, 101)
			before := scanWithIcebergGo(t, e, v >= 3)
			checkIDs(t, "before", before, ids...)

			var outIDs []int64
			for _, id := range ids {
				if id != 101 {
					outIDs = append(outIDs, id)
				}
			}
			var out manifest.DataFile
			if v >= 3 {
				// Rows keep their lineage: row ids and sequence numbers as read.
				var rowIDs, seqs []int64
				for _, r := range before {
					if r.ID != 101 {
						rowIDs, seqs = append(rowIDs, *r.RowID), append(seqs, *r.LastSeqNo)
					}
				}
				out = e.writeRows(t, tbl, "out", outIDs, rowIDs, seqs)
			} else {
				out = e.writeData(t, tbl, "out", outIDs...)
			}
			ch := Change{Operation: spec.OperationReplace, AddData: []manifest.DataFile{out}, DataSequenceNumber: ptr(int64(1))}
			for _, df := range removed {
				ch.Remove = append(ch.Remove, PathKey(df.FilePath))
			}
			tbl, snap := e.commit(t, tbl, ch)
			checkTotals(t, e.ctx, tbl, snap)

			mfs, err := ManifestFiles(e.ctx, tbl.IO, snap)
			if err != nil {
				t.Fatal(err)
			}
			// The added manifest, the rewrite of the ninth append's, and
			// the fold of the other eight.
			if len(mfs) != 3 {
				t.Fatalf("%d manifests after the replace, want 3", len(mfs))
			}
			for k, want := range map[string]int{"manifests-created": 3, "manifests-kept": 0, "manifests-replaced": appends + 1} {
				if got := atoiSummary(t, snap, k); got != want {
					t.Errorf("summary %s = %d, want %d", k, got, want)
				}
			}
			ents := entriesByPath(t, tbl, snap)
			var folded string
			for i, df := range removed[:appends] {
				seq := int64(i + 1)
				en := one(t, ents, df.FilePath)
				checkEntry(t, en, manifest.StatusDeleted, snap.SnapshotID, seq, seq)
				if folded == "" {
					folded = en.Manifest.Path
				}
				if en.Manifest.Path != folded {
					t.Errorf("file of append %d is in %s, want it folded into %s with the others", seq, en.Manifest.Path, folded)
				}
			}
			ea, eb := one(t, ents, a.FilePath), one(t, ents, b.FilePath)
			checkEntry(t, ea, manifest.StatusDeleted, snap.SnapshotID, appends+1, appends+1)
			checkEntry(t, eb, manifest.StatusExisting, *eb.Entry.SnapshotID, appends+1, appends+1)
			if ea.Manifest.Path == folded || ea.Manifest.Path != eb.Manifest.Path {
				t.Errorf("the ninth append's files are in %s and %s, want both in its own rewrite", ea.Manifest.Path, eb.Manifest.Path)
			}

			after := scanWithIcebergGo(t, e, v >= 3)
			checkIDs(t, "after", after, ids...) // b (101) stays
			for i, r := range after {
				var was scanRow
				for _, b := range before {
					if b.ID == r.ID {
						was = b
					}
				}
				if v >= 3 && (r.RowID == nil || *r.RowID != *was.RowID || *r.LastSeqNo != *was.LastSeqNo) {
					t.Errorf("row %d: lineage %v/%v, before %v/%v", i, r.RowID, r.LastSeqNo, was.RowID, was.LastSeqNo)
				}
			}
		})
	}
}
