package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/icectl/icectl/expire"
	"github.com/icectl/icectl/iceberg/reclaim"
	icetable "github.com/icectl/icectl/iceberg/table"
)

// The expire report streams its files (a FileList that spills to disk)
// and must print exactly what writing the whole view at once prints: the
// same JSON document as writeJSON, the same aligned text table as newTable.
func TestExpireReportStreamsTheSameShape(t *testing.T) {
	for _, n := range []int{0, 1, 7, 20000} {
		t.Run(fmt.Sprint(n, " files"), func(t *testing.T) {
			files := expire.NewFileList(t.TempDir())
			defer files.Close()
			var views []expireFileView
			for i := range n {
				f := expire.File{Path: fmt.Sprintf("file:///wh/t/data/%0*d.parquet", 1+i%9, i), Kind: icetable.FileKind(i % 3), Size: int64(i), SnapshotID: int64(i)}
				if i%4 == 0 {
					f.Kind, f.SnapshotID, f.Reason = expire.KindMetadataJSON, 0, "tab\tin a reason"
				}
				if err := files.Add(f); err != nil {
					t.Fatal(err)
				}
			}
			if err := files.Each(func(f expire.File) error { views = append(views, fileView(f)); return nil }); err != nil {
				t.Fatal(err)
			}
			h := expireHeadView{Table: "ns.t", DryRun: true, Cleanup: "all", OlderThan: "2026-01-01T00:00:00.000Z",
				ExpiredSnapshots: []expireSnapshotView{{SnapshotID: 1, Reason: "older"}}, RetainedSnapshots: []expireSnapshotView{}, RemovedRefs: []expireRefView{}}
			tail := expireTailView{DeletedFiles: 3, Refused: []expireFailureView{{Path: "p", Error: "kept"}}, Failed: []expireFailureView{}}

			var want, got bytes.Buffer
			if err := writeJSON(&want, expireReportView{expireHeadView: h, Files: append([]expireFileView{}, views...), expireTailView: tail}); err != nil {
				t.Fatal(err)
			}
			if err := writeExpireJSON(&got, h, files, tail); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Fatalf("streamed JSON differs:\n%s\nwant:\n%s", head(got.String()), head(want.String()))
			}

			want.Reset()
			got.Reset()
			tb := newTable(&want)
			for _, v := range views {
				tb.row("  "+v.Kind, v.Path, v.Reason)
			}
			if err := tb.flush(); err != nil {
				t.Fatal(err)
			}
			if err := writeExpireFiles(&got, files); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Fatalf("streamed text differs:\n%s\nwant:\n%s", head(got.String()), head(want.String()))
			}
		})
	}
}

// The report's counts come from the deletion tally, not from a list of
// every deleted path.
func TestExpireViewCounts(t *testing.T) {
	rep := &expire.Report{Plan: &expire.Plan{}, Files: expire.NewFileList(t.TempDir()), DeletedBytes: 42,
		Deletion: reclaim.Tally{Deleted: 2, Failed: []reclaim.Failure{{Path: "x", Err: fmt.Errorf("boom")}}}}
	_, tail := expireView(rep)
	if tail.DeletedFiles != 2 || tail.DeletedBytes != 42 || len(tail.Failed) != 1 || tail.Failed[0].Error != "boom" {
		t.Errorf("tail %+v", tail)
	}
}

func head(s string) string {
	lines := strings.SplitAfter(s, "\n")
	return strings.Join(lines[:min(len(lines), 30)], "")
}
