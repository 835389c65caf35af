package compact

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/dvmerge"
	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/deletefiles"
	"github.com/icectl/icectl/internal/testing/fixture"
	"github.com/icectl/icectl/upgrade"
	"github.com/icectl/icectl/verify"
)

// evo builds a table whose files were written under several schemas and
// partition specs, with deletes on files of each.
type evo struct {
	t   *testing.T
	e   *env
	v   int
	tbl *catalog.Table
	n   int
}

// newEvo creates a format-version v table with schema s, partition spec ps
// and sort order so.
func newEvo(t *testing.T, v int, s spec.Schema, ps spec.PartitionSpec, so spec.SortOrder) *evo {
	t.Helper()
	e := newEnvWith(t, fixture.TableOptions{FormatVersion: v, Schema: &s, Spec: ps, SortOrder: so})
	return &evo{t: t, e: e, v: v, tbl: e.Load(t)}
}

// evolve commits metadata updates through the catalog, as an engine's
// ALTER TABLE does.
func (b *evo) evolve(ups ...spec.Update) {
	b.t.Helper()
	tbl, err := b.e.Cat.CommitTable(b.e.Ctx, b.tbl, []spec.Requirement{spec.AssertTableUUID{UUID: b.tbl.Metadata.TableUUID}}, ups)
	if err != nil {
		b.t.Fatalf("evolve: %v", err)
	}
	b.tbl = tbl
}

// schema makes fields the current schema.
func (b *evo) schema(fields ...spec.NestedField) {
	b.t.Helper()
	b.evolve(spec.AddSchema{Schema: spec.Schema{Fields: fields}}, spec.SetCurrentSchema{SchemaID: spec.LastAdded})
}

// partitionBy makes fields the default partition spec.
func (b *evo) partitionBy(fields ...spec.PartitionField) {
	b.t.Helper()
	b.evolve(spec.AddSpec{Spec: spec.PartitionSpec{Fields: fields}}, spec.SetDefaultSpec{SpecID: spec.LastAdded})
}

// writeRows writes rows (a JSON array of objects) in schema s as a new
// Parquet file of the table, named prefix and a counter; nothing committed.
func (b *evo) writeRows(prefix string, s spec.Schema, rows string) manifest.DataFile {
	b.t.Helper()
	as, err := datafile.ArrowSchema(&s)
	if err != nil {
		b.t.Fatal(err)
	}
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, as, strings.NewReader(rows))
	if err != nil {
		b.t.Fatalf("rows %s: %v", rows, err)
	}
	defer rec.Release()
	b.n++
	return b.e.WriteRecord(b.t, b.tbl, prefix+strconv.Itoa(b.n), nil, &s, rec)
}

// write writes rows (a JSON array of objects) in schema s, which may be
// older than the table's, as a file of partition part under the default
// spec, and appends it.
func (b *evo) write(s spec.Schema, part []any, rows string) manifest.DataFile {
	b.t.Helper()
	df := b.writeRows("f", s, rows)
	if part == nil {
		part = []any{}
	}
	df.Partition, df.SpecID = part, int32(b.tbl.Metadata.DefaultSpecID)
	b.tbl = b.e.Append(b.t, b.tbl, df)
	return df
}

// del deletes rows of df by position: a position-delete file in v2, a DV
// in v3, in df's partition and spec.
func (b *evo) del(df manifest.DataFile, pos ...int64) {
	b.t.Helper()
	b.n++
	loc := table.DataLocation(b.tbl.Metadata) + "/d" + strconv.Itoa(b.n)
	var files []manifest.DataFile
	if b.v >= 3 {
		dvs, err := deletefiles.WriteDVs(b.e.Ctx, b.tbl.IO, loc+".puffin", df.Partition, map[string][]int64{df.FilePath: pos})
		if err != nil {
			b.t.Fatal(err)
		}
		files = dvs
	} else {
		pd, err := deletefiles.WritePositionDeletes(b.e.Ctx, b.tbl.IO, loc+".parquet", df.Partition, map[string][]int64{df.FilePath: pos}, true)
		if err != nil {
			b.t.Fatal(err)
		}
		files = []manifest.DataFile{pd}
	}
	for i := range files {
		files[i].SpecID = df.SpecID
	}
	b.tbl = b.e.AddDeletes(b.t, b.tbl, files...)
}

// eqDel writes an equality-delete file on the columns eqIDs of schema s
// (the table's schema when it was written), rows a JSON array, and commits
// it in the default spec's partition part.
func (b *evo) eqDel(s spec.Schema, eqIDs []int, part []any, rows string) {
	b.t.Helper()
	b.eqDelIn(b.tbl.Metadata.DefaultSpecID, s, eqIDs, part, rows)
}

// eqDelIn is eqDel in spec specID.
func (b *evo) eqDelIn(specID int, s spec.Schema, eqIDs []int, part []any, rows string) {
	b.t.Helper()
	df := b.writeRows("eq", s, rows)
	if part == nil {
		part = []any{}
	}
	df.Content, df.EqualityIDs = manifest.ContentEqualityDeletes, eqIDs
	df.Partition, df.SpecID = part, int32(specID)
	b.tbl = b.e.AddDeletes(b.t, b.tbl, df)
}

// ownRows reads the table's surviving rows through icectl's scan, every
// delete applied, each row as scan.EncodeRows renders it (the encoding
// iceberg-go's reader uses), sorted; with lineage, _row_id and
// _last_updated_sequence_number are part of each row.
func ownRows(t *testing.T, tbl *catalog.Table, lineage bool) []string {
	t.Helper()
	var rows []string
	err := scan.Rows(t.Context(), tbl.IO, tbl.Metadata, tbl.Metadata.CurrentSnapshot(), scan.Options{WithLineage: lineage},
		func(rec arrow.RecordBatch) error {
			enc, err := scan.EncodeRows(rec)
			if err != nil {
				return err
			}
			for _, r := range enc {
				rows = append(rows, string(r))
			}
			return nil
		})
	if err != nil {
		t.Fatalf("icectl scan: %v", err)
	}
	slices.Sort(rows)
	return rows
}

// goRowsLineage is goRows, with lineage when asked.
func goRowsLineage(t *testing.T, e *env, lineage bool) []string {
	t.Helper()
	if lineage {
		return goRows(t, e, "--lineage")
	}
	return goRows(t, e)
}

// bucketLong is Iceberg's bucket[n] of a long: Murmur3 x86 32-bit (seed 0)
// of its 8 little-endian bytes, sign bit cleared, modulo n.
func bucketLong(v int64, n int) int32 {
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], uint64(v))
	const c1, c2 = 0xcc9e2d51, 0x1b873593
	var h uint32
	for i := 0; i < 8; i += 4 {
		k := binary.LittleEndian.Uint32(buf[i:])
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
		h = bits.RotateLeft32(h, 13)
		h = h*5 + 0xe6546b64
	}
	h ^= 8
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return int32(h&0x7fffffff) % int32(n)
}

func TestBucketLong(t *testing.T) {
	// The spec's example: bucket hash of 34L is 2017239379.
	for n, want := range map[int]int32{2017239379 + 1: 2017239379, 16: 2017239379 % 16} {
		if got := bucketLong(34, n); got != want {
			t.Errorf("bucket[%d](34) = %d, want %d", n, got, want)
		}
	}
}

// evoCase is a table with history under older schemas or specs.
type evoCase struct {
	name     string
	versions []int
	build    func(t *testing.T, v int) *evo
	// want is what a scan of the built table must read (scan.EncodeRows
	// rows, sorted), before and after compaction: the evolved values
	// checked against the test's own model, not only against themselves.
	want []string
	// sort compacts with Options.Sort; check then reads each output file
	// and reports rows out of the default sort order.
	sort func(t *testing.T, tbl *catalog.Table)
	// after, when set, checks the table after compaction.
	after func(t *testing.T, tbl *catalog.Table)
	modes []string // nil: every mode
	// transcoded says the default path transcodes every group: nothing
	// in the case needs Arrow.
	transcoded bool
	// noGo, when set, says why iceberg-go cannot read the table: it is
	// left out of the comparison.
	noGo string
	// goWrongBefore, when set, says why iceberg-go misreads the table as
	// built: its reading is then compared with icectl's once compaction
	// (or dv merge) rewrote what it misreads, not with its own before.
	goWrongBefore string
	// refuse is the error every rewrite must fail with (nothing
	// committed) instead of compacting; with unreadable, a scan fails the
	// same way, so rows are not compared.
	refuse     string
	unreadable bool
}

// Compaction modes a case is run in.
const (
	modeDefault    = "default"
	modeArrow      = "arrow"
	modeRewriteAll = "rewrite-all"
	// v2 only: upgraded to v3, then compacted and dv-merged in both
	// orders; after a compaction of every file no position delete is left
	// to merge, so only the dv merge first converts any.
	modeUpgrade       = "upgrade-compact-dvmerge"
	modeUpgradeDVLast = "upgrade-dvmerge-compact"
)

// TestEvolution builds tables whose files were written under older
// schemas, partition specs and sort orders, with position deletes (v2) or
// DVs (v3) on files from before and after each change, and compacts them
// by default (transcoding where it can), through Arrow only, rewriting
// every file, and (v2) after an upgrade to v3 with dv merge: icectl's scan
// must read the rows the case's own model says before, and the same rows,
// checksum and v3 lineage after, iceberg-go the same rows as before; every
// output lies in one spec and partition and holds only its rows.
func TestEvolution(t *testing.T) {
	for _, c := range evoCases() {
		for _, v := range c.versions {
			modes := c.modes
			if modes == nil {
				modes = []string{modeDefault, modeArrow, modeRewriteAll, modeUpgrade, modeUpgradeDVLast}
			}
			for _, mode := range modes {
				if (mode == modeUpgrade || mode == modeUpgradeDVLast) && v != 2 {
					continue
				}
				t.Run(fmt.Sprintf("%s/v%d/%s", c.name, v, mode), func(t *testing.T) {
					runEvo(t, c, v, mode)
				})
			}
		}
	}
}

func runEvo(t *testing.T, c evoCase, v int, mode string) {
	e := c.build(t, v).e
	lineage := v >= 3
	if c.unreadable {
		refusedUnreadable(t, e, c, mode)
		return
	}
	own := ownRows(t, e.Load(t), false)
	if c.want != nil && !slices.Equal(own, c.want) {
		t.Fatalf("icectl reads the evolved table as:\n%s\nwant:\n%s", strings.Join(own, "\n"), strings.Join(c.want, "\n"))
	}
	ownL := own
	if lineage {
		ownL = ownRows(t, e.Load(t), true)
	}
	readGo := func(lineage bool) []string {
		t.Helper()
		if c.noGo != "" {
			t.Logf("iceberg-go not compared: %s", c.noGo)
			return nil
		}
		return goRowsLineage(t, e, lineage)
	}
	goL := readGo(lineage)
	sum := checksum(t, e.Load(t))
	dataFiles := len(liveFiles(t, e.Load(t)).Data)
	partsBefore := checkPartitions(t, e.Load(t))

	// from is the snapshot the rows were first read at (after the upgrade
	// in the upgrade modes): verify lineage holds later ones to it.
	var from *spec.Snapshot
	// check compares every reading with the one before compaction, and
	// runs icectl's own verifiers on the table.
	check := func(step string, ownWant, goWant []string, lineage bool) {
		t.Helper()
		tbl := e.Load(t)
		verifyTable(t, step, tbl, from)
		if got := ownRows(t, tbl, false); !slices.Equal(got, own) {
			t.Errorf("%s: icectl reads other rows:\n%s\nbefore:\n%s", step, strings.Join(got, "\n"), strings.Join(own, "\n"))
		}
		if lineage {
			if got := ownRows(t, tbl, true); !slices.Equal(got, ownWant) {
				t.Errorf("%s: icectl reads other rows or lineage:\n%s\nbefore:\n%s", step, strings.Join(got, "\n"), strings.Join(ownWant, "\n"))
			}
		}
		if got := checksum(t, tbl); got != sum {
			t.Errorf("%s: checksum %+v, before %+v", step, got, sum)
		}
		switch {
		case c.goWrongBefore != "" && step == "upgrade":
			t.Logf("%s: iceberg-go not compared: %s", step, c.goWrongBefore)
		case c.goWrongBefore != "":
			got := readGo(false)
			for i, r := range got {
				var b bytes.Buffer
				if err := json.Compact(&b, []byte(r)); err != nil {
					t.Fatal(err)
				}
				got[i] = b.String()
			}
			slices.Sort(got)
			if !slices.Equal(got, own) {
				t.Errorf("%s: iceberg-go reads other rows than icectl:\n%s\nicectl:\n%s", step, strings.Join(got, "\n"), strings.Join(own, "\n"))
			}
		default:
			if got := readGo(lineage); !slices.Equal(got, goWant) {
				t.Errorf("%s: iceberg-go reads other rows:\n%s\nbefore:\n%s", step, strings.Join(got, "\n"), strings.Join(goWant, "\n"))
			}
		}
	}

	opts := e.options()
	opts.Sort = c.sort != nil
	switch mode {
	case modeArrow:
		opts.ArrowOnly = true
	case modeRewriteAll:
		opts.Plan.RewriteAll = true
	case modeUpgrade, modeUpgradeDVLast:
		res, err := upgrade.Run(e.Ctx, e.Cat, e.Load(t), upgrade.Options{To: 3, AssignRowIDs: true, Commit: e.Opts})
		if err != nil {
			t.Fatalf("upgrade: %v", err)
		}
		if !res.Upgraded {
			t.Fatal("upgrade: nothing upgraded")
		}
		// From here on rows have lineage, which compaction and dv merge
		// must keep.
		lineage = true
		ownL = ownRows(t, e.Load(t), true)
		goL = readGo(true)
		check("upgrade", ownL, goL, true)
		if mode == modeUpgradeDVLast {
			rep := dvMerge(t, e)
			if rep.DVsWritten == 0 {
				t.Errorf("dv merge wrote no DV")
			}
			check("dv merge", ownL, goL, true)
		}
	}
	if lineage {
		from = e.Load(t).Metadata.CurrentSnapshot()
	}
	before := *e.Load(t).Metadata.CurrentSnapshotID
	rep, err := e.compact(t, opts)
	if c.refuse != "" {
		checkRefused(t, e, c, rep, err, before)
		check("refused compaction", ownL, goL, lineage)
		return
	}
	if err != nil {
		t.Fatalf("compaction: %v", err)
	}
	if rep.Committed() == 0 || rep.Failed() != 0 {
		t.Fatalf("compaction: %d groups committed, %d failed: %+v", rep.Committed(), rep.Failed(), rep.Groups)
	}
	for _, g := range rep.Groups {
		if g.Status != StatusCommitted {
			t.Errorf("group %s: %s (%s)", g.ID, g.Status, g.Reason)
		}
		t.Logf("group %s: %d files, %s (%s)", g.ID, g.InputFiles, g.Rewrite, g.RewriteNote)
	}
	if c.transcoded && mode != modeArrow {
		for _, g := range rep.Groups {
			if g.Rewrite != RewriteTranscode {
				t.Errorf("group %s: rewritten by %s (%s), want %s", g.ID, g.Rewrite, g.RewriteNote, RewriteTranscode)
			}
		}
	}
	if mode == modeRewriteAll && rep.FilesIn != dataFiles {
		t.Errorf("rewrite-all rewrote %d of %d data files", rep.FilesIn, dataFiles)
	}
	if mode == modeRewriteAll {
		// Every data file was rewritten with its deletes applied: no
		// delete file is left, and the rows the files hold (scan.RowsAt,
		// no delete applied) are the rows the table has.
		if n := len(liveFiles(t, e.Load(t)).Deletes); n != 0 {
			t.Errorf("%d delete files are live after every data file was rewritten", n)
		}
		if got := tableRows(t, e.Load(t)); len(got) != len(own) {
			t.Errorf("the rewritten files hold %d rows, the table %d:\n%s", len(got), len(own), strings.Join(got, "\n"))
		}
	}
	check("compaction", ownL, goL, lineage)
	// Groups are per spec and partition: every output lies in one the
	// inputs had, and holds only rows of it.
	partsAfter := checkPartitions(t, e.Load(t))
	for p := range partsAfter {
		if !partsBefore[p] {
			t.Errorf("compaction wrote a file in %s, where no input was", p)
		}
	}
	if mode == modeRewriteAll && len(partsAfter) != len(partsBefore) {
		t.Errorf("rewrite-all left files in %d specs and partitions, the inputs were in %d", len(partsAfter), len(partsBefore))
	}
	if c.sort != nil {
		c.sort(t, e.Load(t))
	}
	if c.after != nil {
		c.after(t, e.Load(t))
	}
	if mode == modeUpgrade {
		dvMerge(t, e)
		check("dv merge", ownL, goL, true)
	}
}

// checkPartitions checks that every row of every live data file of tbl
// (deleted or not) has the partition values its file's manifest entry
// gives under the file's spec, and returns the set of spec ids and
// partitions.
func checkPartitions(t *testing.T, tbl *catalog.Table) map[string]bool {
	t.Helper()
	md := tbl.Metadata
	out := map[string]bool{}
	for _, fe := range liveFiles(t, tbl).Data {
		df := fe.Entry.DataFile
		key := fmt.Sprintf("spec %d %v", df.SpecID, df.Partition)
		out[key] = true
		ps, ok := md.SpecByID(int(df.SpecID))
		if !ok || len(ps.Fields) != len(df.Partition) {
			t.Errorf("%s: %s does not fit its spec %+v", df.FilePath, key, ps)
			continue
		}
		err := scan.ReadFile(t.Context(), tbl.IO, md, fe, table.Applicable{}, scan.Options{}, func(rec arrow.RecordBatch) error {
			for k, f := range ps.Fields {
				src, ok := md.CurrentSchema().FindField(f.SourceID)
				if !ok {
					return fmt.Errorf("partition source %d is not in the schema", f.SourceID)
				}
				col := rec.Column(rec.Schema().FieldIndices(src.Name)[0])
				for i := range int(rec.NumRows()) {
					var got any
					if !col.IsNull(i) && f.Transform.Kind != spec.TransformVoid {
						switch c := col.(type) {
						case *array.String:
							got = c.Value(i)
						case *array.Int32:
							got = c.Value(i)
						case *array.Int64:
							got = c.Value(i)
							if f.Transform.Kind == spec.TransformBucket {
								got = bucketLong(c.Value(i), f.Transform.Param)
							}
						default:
							return fmt.Errorf("no partition check for %T", col)
						}
						if f.Transform.Kind != spec.TransformIdentity && f.Transform.Kind != spec.TransformBucket {
							return fmt.Errorf("no partition check for %s", f.Transform)
						}
					}
					// An int partition value of a column since promoted to
					// long is the same value.
					want := df.Partition[k]
					if w, ok := want.(int32); ok {
						want = int64(w)
					}
					if g, ok := got.(int32); ok {
						got = int64(g)
					}
					if got != want {
						t.Errorf("%s (%s): a row has %s = %v (%T)", df.FilePath, key, f.Name, got, got)
						return nil
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// refusedUnreadable compacts a table no reader can read (rows not compared).
func refusedUnreadable(t *testing.T, e *env, c evoCase, mode string) {
	t.Helper()
	opts := e.options()
	opts.ArrowOnly = mode == modeArrow
	opts.Plan.RewriteAll = mode == modeRewriteAll
	before := *e.Load(t).Metadata.CurrentSnapshotID
	rep, err := e.compact(t, opts)
	checkRefused(t, e, c, rep, err, before)
	if _, err := scan.Checksum(e.Ctx, e.Load(t).IO, e.Load(t).Metadata, e.Load(t).Metadata.CurrentSnapshot(), scan.Options{}); err == nil || !strings.Contains(err.Error(), c.refuse) {
		t.Errorf("scan: %v, want %q", err, c.refuse)
	}
}

// checkRefused checks that a compaction failed with c.refuse and
// committed nothing.
func checkRefused(t *testing.T, e *env, c evoCase, rep *Report, err error, before int64) {
	t.Helper()
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if rep != nil {
		if len(rep.Groups) == 0 {
			t.Errorf("nothing planned")
		}
		for _, g := range rep.Groups {
			if g.Status == StatusCommitted {
				t.Errorf("group %s committed, want it refused", g.ID)
			}
			msg += " " + g.Reason
		}
	}
	if !strings.Contains(msg, c.refuse) {
		t.Errorf("compaction: %q, want it refused with %q", msg, c.refuse)
	}
	t.Logf("refused: %s", msg)
	if got := *e.Load(t).Metadata.CurrentSnapshotID; got != before {
		t.Errorf("a refused compaction committed snapshot %d", got)
	}
}

// verifyTable runs `icectl verify deletes` (every file opened) on tbl's
// current snapshot and, when from is set, `verify lineage` from it, keyed
// by id (field 1 in every case).
func verifyTable(t *testing.T, step string, tbl *catalog.Table, from *spec.Snapshot) {
	t.Helper()
	md := tbl.Metadata
	dr, err := verify.Deletes(t.Context(), tbl.IO, md, md.CurrentSnapshot(), verify.DeletesOptions{CheckFiles: true})
	if err != nil {
		t.Fatalf("%s: verify deletes: %v", step, err)
	}
	if !dr.OK() {
		t.Errorf("%s: verify deletes: %+v", step, dr.First)
	}
	if from == nil {
		return
	}
	lr, err := verify.Lineage(t.Context(), tbl.IO, md, verify.LineageOptions{From: from, To: md.CurrentSnapshot(), KeyIDs: []int{1}})
	if err != nil {
		t.Fatalf("%s: verify lineage: %v", step, err)
	}
	if !lr.OK() || lr.Checked == 0 && lr.Matched > lr.DuplicateKeys {
		t.Errorf("%s: verify lineage: %d matched, %d checked: %+v", step, lr.Matched, lr.Checked, lr.First)
	}
}

func dvMerge(t *testing.T, e *env) *dvmerge.Report {
	t.Helper()
	// Equality deletes are resolved into DVs too (dv merge --equality),
	// reading the data files' columns through the evolved schema.
	opts := dvmerge.Options{Commit: e.Opts, Equality: true}
	p, err := dvmerge.PlanTable(e.Ctx, e.Load(t), opts)
	if err != nil {
		t.Fatalf("dv merge plan: %v", err)
	}
	defer p.Close()
	rep, err := dvmerge.Execute(e.Ctx, e.Cat, e.Load(t), p, opts)
	if err != nil {
		t.Fatalf("dv merge: %v", err)
	}
	return rep
}
