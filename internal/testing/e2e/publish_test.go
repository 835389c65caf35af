package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/refs"
)

// Write-audit-publish on every catalog kind: a writer commits to an audit
// branch, the operator reads it and fast-forwards main to it; a staged
// snapshot (Spark's spark.wap.id: a snapshot no ref points at, its wap.id
// in the summary) is cherrypicked onto a main that moved meanwhile. After
// each, iceberg-go reads main as icectl does, with exactly the rows main
// had plus the published ones, and on v3 the rows main had keep their row
// ids while the published ones get new ones.

func TestPublishSQLite(t *testing.T) {
	t.Parallel()
	publish(t, sqliteBackend)
}

func TestPublishREST(t *testing.T) {
	t.Parallel()
	publish(t, restBackend)
}

func publish(t *testing.T, mk func(*testing.T) backend) {
	for _, v := range []int{2, 3} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			readerBin(t)
			b := mk(t)
			cat := b.open(t)
			ctx := context.Background()
			name := fmt.Sprintf("wap_v%d", v)
			ident := b.ns + "." + name
			w := newWriter(t, b, cat, name, v)
			var err error
			if w.tbl, err = cat.CommitTable(ctx, w.tbl, nil, []spec.Update{spec.SetProperties{Updates: map[string]string{"write.wap.enabled": "true"}}}); err != nil {
				t.Fatal(err)
			}
			w.commit(t, []manifest.DataFile{w.data(t, mkRows("eu", span(0, 10)...))})

			// The writer's audit branch.
			if _, stderr, code := runICECTLOn(t, b, "branch", "create", ident, "audit"); code != 0 {
				t.Fatalf("branch create: exit %d: %s", code, stderr)
			}
			w.reload(t)
			before := goScanTable(t, b, name, v >= 3)
			mainBefore := goScanTable(t, b, name, false)
			audited := w.commitTo(t, "audit", nil, w.data(t, mkRows("us", span(10, 25)...)))
			auditRead := scanSnapshot(t, b, name, audited)
			if g := goScanTable(t, b, name, false); g.RowCount != 10 {
				t.Fatalf("main reads %d rows while the audit branch is unpublished, want 10", g.RowCount)
			}

			// Publish: a dry run changes nothing, then main moves to the
			// audited snapshot itself.
			loc := w.reload(t).MetadataLocation
			if _, stderr, code := runICECTLOn(t, b, "fast-forward", ident, "--branch", "main", "--to", "audit", "--dry-run"); code != 0 {
				t.Fatalf("fast-forward --dry-run: exit %d: %s", code, stderr)
			}
			if w.reload(t).MetadataLocation != loc {
				t.Fatal("fast-forward --dry-run committed")
			}
			out, stderr, code := runICECTLOn(t, b, "fast-forward", ident, "--branch", "main", "--to", "audit", "--output", "json")
			if code != 0 {
				t.Fatalf("fast-forward: exit %d: %s", code, stderr)
			}
			var ff struct {
				BranchUpdated string `json:"branch_updated"`
				PreviousRef   int64  `json:"previous_ref"`
				UpdatedRef    int64  `json:"updated_ref"`
				Committed     bool   `json:"committed"`
			}
			if err := json.Unmarshal([]byte(out), &ff); err != nil || !ff.Committed || ff.UpdatedRef != audited || ff.BranchUpdated != "main" {
				t.Fatalf("fast-forward output %s (%v)", out, err)
			}
			if cur := *w.reload(t).Metadata.CurrentSnapshotID; cur != audited {
				t.Fatalf("main at %d after fast-forward, want the audited snapshot %d", cur, audited)
			}
			checkMainReads(t, b, cat, name, before, minus(auditRead.Rows, mainBefore.Rows), v)

			// Diverged branches: refused, nothing committed.
			w.commit(t, []manifest.DataFile{w.data(t, mkRows("eu", span(100, 105)...))})
			w.commitTo(t, "audit", nil, w.data(t, mkRows("us", span(200, 205)...)))
			loc = w.reload(t).MetadataLocation
			if _, stderr, code := runICECTLOn(t, b, "fast-forward", ident, "--branch", "main", "--to", "audit"); code != 1 || !strings.Contains(stderr, "not an ancestor") {
				t.Fatalf("fast-forward of diverged branches: exit %d: %s", code, stderr)
			}
			if _, _, code := runICECTLOn(t, b, "fast-forward", ident, "--branch", "nope", "--to", "missing"); code != 1 {
				t.Fatalf("fast-forward to a missing ref: exit %d", code)
			}
			if w.reload(t).MetadataLocation != loc {
				t.Fatal("a refused fast-forward committed")
			}

			// A staged snapshot (wap.id), then main moves: cherrypick
			// commits the staged append again on main.
			parentRead := goScanTable(t, b, name, false)
			staged := w.stage(t, "wap-42", w.data(t, mkRows("us", span(300, 312)...)))
			stagedRead := scanSnapshot(t, b, name, staged)
			w.commit(t, []manifest.DataFile{w.data(t, mkRows("eu", span(400, 403)...))})
			before = goScanTable(t, b, name, v >= 3)
			nextRowID := w.reload(t).Metadata.NextRowID
			loc = w.tbl.MetadataLocation
			if out, stderr, code := runICECTLOn(t, b, "cherrypick", ident, "--snapshot", strconv.FormatInt(staged, 10), "--dry-run"); code != 0 || !strings.Contains(out, "by append") {
				t.Fatalf("cherrypick --dry-run: exit %d: %s%s", code, out, stderr)
			}
			if w.reload(t).MetadataLocation != loc {
				t.Fatal("cherrypick --dry-run committed")
			}
			out, stderr, code = runICECTLOn(t, b, "cherrypick", ident, "--snapshot", strconv.FormatInt(staged, 10), "--output", "json")
			if code != 0 {
				t.Fatalf("cherrypick: exit %d: %s", code, stderr)
			}
			var cp struct {
				Kind              string `json:"kind"`
				PublishedWapID    string `json:"published_wap_id"`
				CurrentSnapshotID int64  `json:"current_snapshot_id"`
			}
			if err := json.Unmarshal([]byte(out), &cp); err != nil || cp.Kind != "append" || cp.PublishedWapID != "wap-42" {
				t.Fatalf("cherrypick output %s (%v)", out, err)
			}
			tbl := w.reload(t)
			head := tbl.Metadata.CurrentSnapshot()
			if head.SnapshotID != cp.CurrentSnapshotID || head.SnapshotID == staged ||
				head.Summary["source-snapshot-id"] != strconv.FormatInt(staged, 10) || head.Summary["published-wap-id"] != "wap-42" ||
				head.Summary["operation"] != spec.OperationAppend {
				t.Fatalf("main's head after cherrypick: %d %v", head.SnapshotID, head.Summary)
			}
			if v >= 3 && (head.FirstRowID == nil || nextRowID == nil || *head.FirstRowID != *nextRowID || head.AddedRows == nil || *head.AddedRows != 12) {
				t.Errorf("cherrypicked snapshot: first-row-id %v added-rows %v, want the table's next-row-id %v and 12", head.FirstRowID, head.AddedRows, nextRowID)
			}
			checkMainReads(t, b, cat, name, before, minus(stagedRead.Rows, parentRead.Rows), v)

			// Published once only: the same snapshot again, and another
			// snapshot staged with the same wap.id, are refused.
			again := w.stage(t, "wap-42", w.data(t, mkRows("us", span(500, 502)...)))
			loc = w.reload(t).MetadataLocation
			for _, id := range []int64{staged, again} {
				_, stderr, code := runICECTLOn(t, b, "cherrypick", ident, "--snapshot", strconv.FormatInt(id, 10))
				if code != 1 || !strings.Contains(stderr, "already") {
					t.Errorf("cherrypick %d a second time: exit %d: %s", id, code, stderr)
				}
			}
			if w.reload(t).MetadataLocation != loc {
				t.Fatal("a refused cherrypick committed")
			}
		})
	}
}

// reload loads the table's current version into w.
func (w *writer) reload(t *testing.T) *catalog.Table {
	t.Helper()
	tbl, err := w.cat.LoadTable(w.ctx, w.tbl.Ident)
	if err != nil {
		t.Fatal(err)
	}
	w.tbl = tbl
	return tbl
}

// commitTo appends data to branch as a writer with Spark's
// spark.wap.branch does; summary adds to the snapshot's summary. It
// returns the new snapshot's id.
func (w *writer) commitTo(t *testing.T, branch string, summary map[string]string, data ...manifest.DataFile) int64 {
	t.Helper()
	tbl, snap, err := table.CommitChange(w.ctx, w.cat, w.reload(t), table.Change{Operation: spec.OperationAppend, Branch: branch, AddData: data, Summary: summary}, w.opts)
	if err != nil {
		t.Fatalf("commit to %s: %v", branch, err)
	}
	w.tbl = tbl
	return snap.SnapshotID
}

// stage commits data as a staged snapshot, as Java's stageOnly (Spark's
// spark.wap.id) does: its parent is main's head, no ref points at it, and
// its summary holds wap.id.
func (w *writer) stage(t *testing.T, wapID string, data ...manifest.DataFile) int64 {
	t.Helper()
	tmp := "staging-" + wapID
	tbl, err := refs.Commit(w.ctx, w.cat, w.reload(t), refs.Create(spec.RefTypeBranch, tmp, nil, refs.Retention{}), w.opts)
	if err != nil {
		t.Fatal(err)
	}
	w.tbl = tbl
	id := w.commitTo(t, tmp, map[string]string{"wap.id": wapID}, data...)
	if w.tbl, err = refs.Commit(w.ctx, w.cat, w.tbl, refs.Drop(spec.RefTypeBranch, tmp), w.opts); err != nil {
		t.Fatal(err)
	}
	return id
}

// checkMainReads checks that iceberg-go reads main as icectl does, and
// reads exactly the rows of before plus added (both sorted encodings);
// on v3, before's rows keep their row ids and every row id is distinct.
func checkMainReads(t *testing.T, b backend, cat catalog.Catalog, name string, before goScan, added []json.RawMessage, v int) {
	t.Helper()
	g := goScanTable(t, b, name, false)
	rows, sum := icectlScan(t, b, cat, name, false)
	agree(t, g, rows, sum)
	var plainBefore []json.RawMessage
	for _, r := range before.Rows {
		plainBefore = append(plainBefore, withoutLineage(t, r))
	}
	want := sortedRows(append(plainBefore, added...))
	if d := sameRows(want, toBytes(g.Rows)); d != "" {
		t.Errorf("main after publishing: %s", d)
	}
	if v < 3 {
		return
	}
	lin := goScanTable(t, b, name, v >= 3)
	have := map[string]bool{}
	ids := map[string]bool{}
	for _, r := range lin.Rows {
		have[string(r)] = true
		var m map[string]any
		if err := json.Unmarshal(r, &m); err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprint(m["_row_id"])
		if ids[id] || m["_row_id"] == nil {
			t.Errorf("row id %s is null or not unique", id)
		}
		ids[id] = true
	}
	for _, r := range before.Rows {
		if !have[string(r)] {
			t.Errorf("row %s lost its lineage on publishing", r)
		}
	}
}

func withoutLineage(t *testing.T, r json.RawMessage) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "_row_id")
	delete(m, "_last_updated_sequence_number")
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// minus is the rows of a that b does not have (multisets of encodings).
func minus(a, b []json.RawMessage) []json.RawMessage {
	n := map[string]int{}
	for _, r := range b {
		n[string(r)]++
	}
	var out []json.RawMessage
	for _, r := range a {
		if n[string(r)] > 0 {
			n[string(r)]--
			continue
		}
		out = append(out, r)
	}
	return out
}

func sortedRows(rs []json.RawMessage) []json.RawMessage {
	out := slices.Clone(rs)
	slices.SortFunc(out, func(a, b json.RawMessage) int { return strings.Compare(string(a), string(b)) })
	return out
}

func toBytes(rs []json.RawMessage) [][]byte {
	out := make([][]byte, len(rs))
	for i, r := range rs {
		out[i] = r
	}
	return out
}
