package maintain

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/expire"
	"github.com/icectl/icectl/health"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/metastore"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/fixture"
)

// flinkCommit commits data files and equality deletes as one snapshot, as
// Iceberg's Flink sink commits a checkpoint (a row delta carrying the
// job's summary keys).
func flinkCommit(t *testing.T, tb *fixture.Table, checkpoint int, data []manifest.DataFile, eq []manifest.DataFile) {
	t.Helper()
	op := spec.OperationAppend
	if len(eq) > 0 {
		op = spec.OperationOverwrite
	}
	tb.Commit(t, nil, table.Change{Operation: op, AddData: data, AddDeletes: eq, Summary: map[string]string{
		FlinkJobIDKey: "job-1", "flink.operator-id": "op-1", expire.FlinkCheckpointKey: fmt.Sprint(checkpoint)}})
}

// TestStreamPolicy: tables a stream writes (many small commits in the
// last hour, with equality deletes) against a table holding the same
// files committed at once, read from real tables and planned by the pure
// planner. The stream with enough debt is due and runs its verbs in the
// stream order with the rows unchanged; the young stream's compaction
// waits; the batch table's and the stopped stream's do not.
func TestStreamPolicy(t *testing.T) {
	c := fixture.NewSQLite(t)
	// Upsert streams (v2 and v3): every checkpoint writes two rows and
	// deletes, by key, one row of the checkpoint before.
	upserts := func(name string, v int) *fixture.Table {
		tb := c.Table(t, fixture.TableOptions{Name: name, FormatVersion: v})
		for i := range 8 {
			id := int64(10 * i)
			var eq []manifest.DataFile
			if i > 0 {
				eq = append(eq, tb.WriteEqualityDeletes(t, nil, fmt.Sprintf("eq%d", i), nil, id-10))
			}
			flinkCommit(t, tb, i+1, []manifest.DataFile{tb.WriteIDs(t, nil, fmt.Sprintf("d%d", i), nil, id, id+1)}, eq)
		}
		return tb
	}
	stream, stream3 := upserts("stream", 2), upserts("stream3", 3)
	// A young append stream: 6 small files, below stream.small-files.
	young := c.Table(t, fixture.TableOptions{Name: "young"})
	var files []manifest.DataFile
	for i := range 6 {
		df := young.WriteIDs(t, nil, fmt.Sprintf("d%d", i), nil, int64(i))
		files = append(files, df)
		flinkCommit(t, young, i+1, []manifest.DataFile{df}, nil)
	}
	// A batch table: the same 6 files, committed once.
	batch := c.Table(t, fixture.TableOptions{Name: "batch"})
	batch.Append(t, nil, files...)

	ctx := context.Background()
	plan := func(now time.Time) map[string]*TablePlan {
		states := ReadStates(ctx, c.Catalog, []metastore.Ident{stream.ID, stream3.ID, young.ID, batch.ID}, &Policy{}, now, 1)
		p := NewPlan(states, now)
		if len(p.Failed) > 0 {
			t.Fatalf("unreadable: %+v", p.Failed)
		}
		out := map[string]*TablePlan{}
		for _, tp := range append(p.Due, p.Healthy...) {
			out[tp.Table] = tp
		}
		return out
	}
	now := time.Now()
	p := plan(now)
	sp, yp, bp := p["ns.stream"], p["ns.young"], p["ns.batch"]

	if sp.Stream == nil || !sp.Stream.Due || sp.Stream.Commits != 8 || sp.Stream.FlinkJobID != "job-1" ||
		!strings.Contains(sp.Stream.Reason, "8 writer commits in the last hour, Flink job job-1") ||
		!strings.Contains(sp.Stream.Reason, "15 small data files and delete files (stream.small-files: 12)") ||
		!strings.Contains(sp.Stream.Reason, "equality deletes 43.8% of the rows (stream.equality-delete-ratio: 10%)") {
		t.Errorf("stream: %+v", sp.Stream)
	}
	if got := dueVerbs(sp); got != "rewrite-equality-deletes,compact,rewrite-manifests" {
		t.Errorf("stream: due %s, want rewrite-equality-deletes,compact,rewrite-manifests", got)
	}

	if yp.Stream == nil || yp.Stream.Due || len(yp.Due) != 0 || len(yp.Off) != 1 || yp.Off[0].Verb != VerbCompact ||
		!strings.HasSuffix(yp.Off[0].Reason, "but it waits until the streamed table is due") ||
		!strings.Contains(yp.Stream.Reason, "streamed table (6 writer commits in the last hour, Flink job job-1) not due yet: 6 small data files and delete files (due at 12)") {
		t.Errorf("young stream: due %s, off %+v, stream %+v", dueVerbs(yp), yp.Off, yp.Stream)
	}
	if bp.Stream != nil || dueVerbs(bp) != "compact" {
		t.Errorf("batch: due %s, stream %+v", dueVerbs(bp), bp.Stream)
	}
	// Two hours on, the young stream's writer has stopped: the verbs'
	// own rules apply again.
	if yp := plan(now.Add(2 * time.Hour))["ns.young"]; yp.Stream != nil || dueVerbs(yp) != "compact" {
		t.Errorf("stopped stream: due %s, stream %+v", dueVerbs(yp), yp.Stream)
	}

	// On v3, dv merge resolves the equality deletes into DVs.
	if got := dueVerbs(p["ns.stream3"]); got != "dv-merge,compact,rewrite-manifests" {
		t.Errorf("v3 stream: due %s, want dv-merge,compact,rewrite-manifests", got)
	}

	// The run takes each stream's verbs in order; the rows stay, and no
	// equality delete is left.
	for _, tc := range []struct {
		tb   *fixture.Table
		want string
	}{
		{stream, "rewrite-equality-deletes:done compact:done rewrite-manifests:done"},
		{stream3, "dv-merge:done compact:done rewrite-manifests:done"},
	} {
		before := tc.tb.Checksum(t, nil)
		rep := Run(ctx, c.Catalog, &Plan{Due: []*TablePlan{p[tc.tb.Name()]}}, Options{})
		var ran []string
		for _, v := range rep.Tables[0].Verbs {
			ran = append(ran, v.Verb+":"+v.Status)
		}
		if got := strings.Join(ran, " "); got != tc.want || rep.Tables[0].Stream == nil {
			t.Errorf("%s run: %s, want %s (%+v)", tc.tb.Name(), got, tc.want, rep.Tables[0])
		}
		if got := tc.tb.Checksum(t, nil); got != before {
			t.Errorf("%s rows after = %+v, want %+v", tc.tb.Name(), got, before)
		}
		for _, d := range tc.tb.LiveFiles(t, nil).Deletes {
			if d.Entry.DataFile.Content == manifest.ContentEqualityDeletes {
				t.Errorf("%s: equality delete %s still live", tc.tb.Name(), d.Entry.DataFile.FilePath)
			}
		}
	}
	// Maintenance's replace commits are not writer commits: read again,
	// the stream still counts its 8.
	if sp := plan(now)["ns.stream"]; sp.Stream == nil || sp.Stream.Commits != 8 {
		t.Errorf("after the run: %+v", sp.Stream)
	}
}

// TestDecideStream: each of the streaming policy's thresholds alone makes
// a streamed table due; below them it waits; the policy file sets them
// and can turn the policy off.
func TestDecideStream(t *testing.T) {
	p, err := ParsePolicy("p.yaml", []byte("defaults:\n  stream: {commits-per-hour: 30, small-files: 50, equality-delete-ratio: 0.2}\n"+
		"tables:\n  db.off:\n    stream: {enabled: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	debt := func(frag, manifests int, eqKeys int64) func(*TableState) {
		return func(st *TableState) {
			st.Writers = WriterStats{Commits: 30}
			st.Health.Data = health.FileStats{Records: 1000, SmallFiles: frag}
			st.Health.Manifests.SmallManifests = manifests
			st.Health.Deletes.Equality = health.KindStats{Count: 1, Records: eqKeys}
		}
	}
	cases := []struct {
		name string
		edit func(*TableState)
		want string // "": not streamed
	}{
		{"db.fragments", debt(49, 0, 0), "due: 50 small data files and delete files (stream.small-files: 50)"},
		{"db.manifests", debt(0, 50, 0), "due: 50 small manifests (stream.small-files: 50)"},
		{"db.ratio", debt(0, 0, 200), "due: equality deletes 20% of the rows (stream.equality-delete-ratio: 20%)"},
		{"db.waits", debt(10, 10, 10), "not due yet: 11 small data files and delete files (due at 50), 10 small manifests (due at 50), equality deletes 1% of the rows (due at 20%)"},
		{"db.slow", func(st *TableState) { debt(100, 0, 0)(st); st.Writers.Commits = 29 }, ""},
		{"db.off", debt(100, 0, 0), ""},
	}
	for _, c := range cases {
		st := state(t, c.name, 2, nil, c.edit)
		if st.Policy, err = p.Resolve(st.Ident, nil); err != nil {
			t.Fatal(err)
		}
		d := DecideStream(&st)
		switch {
		case c.want == "" && d != nil:
			t.Errorf("%s: streamed: %+v", c.name, d)
		case c.want != "" && (d == nil || !strings.Contains(d.Reason, c.want) || d.Due != strings.HasPrefix(c.want, "due")):
			t.Errorf("%s: %+v, want %q", c.name, d, c.want)
		}
	}
	for _, bad := range []string{"defaults:\n  stream: {commits-per-hour: 0}\n", "defaults:\n  stream: {equality-delete-ratio: 2}\n", "defaults:\n  stream: {every: 1}\n"} {
		if _, err := ParsePolicy("p.yaml", []byte(bad)); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
