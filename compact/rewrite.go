package compact

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/plan"
)

// errInputGone is wrapped when an input of a group is not live in the head
// it is resolved against.
var errInputGone = errors.New("input removed by another commit")

// input is one data file of a group with the deletes applied to it.
type input struct {
	entry   table.FileEntry
	deletes table.Applicable
	// consts are the values the spec's first projection rule gives the
	// file's rows (table.IdentityConstants): read in place of its columns.
	consts datafile.Constants
}

// rewrite is one rewrite of a group: its outputs and what they were made
// from, which the commit validates against the head it commits on.
type rewrite struct {
	inputs   []input
	outputs  []manifest.DataFile
	applied  map[table.FileKey]bool // every delete applied to some input
	retire   []table.FileKey        // delete files the commit removes
	dangling int                    // of retire, partition-scoped deletes left dangling
	rowsIn   int64
	rowsOut  int64
	bytesIn  int64
	bytesOut int64
	path     string // RewriteTranscode or RewriteArrow
	pathNote string // why RewriteArrow
	// namePrefix begins the names of the outputs (newOutputs).
	namePrefix string
}

// resolve finds the group's inputs in h with the deletes that apply to
// them now, and the delete files the commit retires: the DVs and
// file-scoped position deletes of the inputs as h has them, and the plan's
// partition-scoped retirements that are still live.
func resolve(h *head, g *plan.Group, baseSeq int64) (*rewrite, error) {
	rw := &rewrite{applied: map[table.FileKey]bool{}}
	retire := map[table.FileKey]bool{}
	addRetire := func(k table.FileKey, dangling bool) {
		if !retire[k] {
			retire[k] = true
			rw.retire = append(rw.retire, k)
			if dangling {
				rw.dangling++
			}
		}
	}
	for _, in := range g.Inputs {
		e, ok := h.data[in.Path]
		if !ok {
			return nil, fmt.Errorf("%w: %s", errInputGone, in.Path)
		}
		a := h.deletesFor(*e, baseSeq)
		consts, err := table.IdentityConstants(h.md, &e.Entry.DataFile)
		if err != nil {
			return nil, err
		}
		rw.inputs = append(rw.inputs, input{entry: *e, deletes: a, consts: consts})
		for _, k := range applicableKeys(a) {
			rw.applied[k] = true
		}
		if a.DV != nil {
			addRetire(a.DV.Key(), false)
		}
		for _, d := range a.PositionDeletes {
			if scopedTo(&d.Entry.DataFile, in.Path) {
				addRetire(d.Key(), false)
			}
		}
		rw.rowsIn += e.Entry.DataFile.RecordCount
		rw.bytesIn += e.Entry.DataFile.FileSizeInBytes
	}
	for _, d := range g.Retire {
		k := table.PathKey(d.Path)
		if d.ContentOffset != nil {
			k.ContentOffset = *d.ContentOffset
		}
		if !h.keys[k] {
			continue // gone meanwhile: nothing left to retire
		}
		addRetire(k, d.Reason == plan.RetirePartitionPos || d.Reason == plan.RetireEqualityDead)
	}
	return rw, nil
}

// run reads every input with its deletes applied and writes the surviving
// rows to new files in the group's spec and partition, in the current
// schema.
//
// Row lineage (v3). Rows move unchanged, so, per the spec's writer rules,
// each row's _row_id and _last_updated_sequence_number are read with
// inheritance applied (a stored value is copied; a null one becomes
// first_row_id + _pos and the file's data sequence number) and written as
// physical columns: the outputs' own first_row_id, assigned at commit,
// then never shows through for them. An input without a first_row_id (a
// file committed before the upgrade to v3, when this commit is the first
// since) has no ids yet: the spec assigns its rows ids by inheritance in
// the first commit after the upgrade, and for rows this commit moves that
// inheritance happens through the output file. So their _row_id is written
// null, and the output's first_row_id + position gives them fresh ids in
// this very commit, exactly as if the rows had stayed where they were;
// their _last_updated_sequence_number is the data sequence number of the
// file they came from, which is what inheritance would have given them
// there. Rows with lineage keep theirs. A group mixing both kinds of
// inputs therefore writes files with some null and some set _row_id
// values, which readers resolve row by row.
func (x *executor) run(ctx context.Context, h *head, g *plan.Group, rw *rewrite) (err error) {
	md := h.md
	schema := md.CurrentSchema()
	if schema == nil {
		return errors.New("table has no current schema")
	}
	lineage := md.FormatVersion >= 3
	writeSchema := schema
	if lineage {
		writeSchema = datafile.SchemaWithLineage(schema)
	}
	ps, ok := md.SpecByID(g.SpecID)
	if !ok {
		return fmt.Errorf("partition spec %d of group %s is not in the table", g.SpecID, g.ID)
	}
	dir := groupDir(md, ps, g)
	rw.namePrefix = x.groupPrefix(g)
	var partition []any
	if len(rw.inputs) > 0 {
		partition = rw.inputs[0].entry.Entry.DataFile.Partition
	}
	bpr := 0.0
	if rw.rowsIn > 0 {
		bpr = float64(rw.bytesIn) / float64(rw.rowsIn)
	}
	out := newOutputs(ctx, h.fio, md, writeSchema, dir, rw.namePrefix, x.p.Options.WriteMaxFileSize, bpr, int32(g.SpecID), partition)
	defer func() {
		if err != nil {
			err = errors.Join(err, out.abort())
		}
	}()
	sopts := scan.Options{WithLineage: lineage}
	outID := outputSpec(x.p, g)
	if outID != g.SpecID {
		// Rows of one input may belong to many partitions of the output
		// spec: each is routed to the files of its own.
		ops, ok := md.SpecByID(outID)
		if !ok {
			return fmt.Errorf("output partition spec %d is not in the table", outID)
		}
		as, err := scan.Schema(md, sopts)
		if err != nil {
			return err
		}
		if out.fan, err = newFanout(md, schema, ops, as); err != nil {
			return err
		}
		out.fan.newKid = func(t []any) *outputs {
			dir := table.DataLocation(md)
			if pp := table.PartitionPathOf(schema, ops, t); pp != "" {
				dir += "/" + pp
			}
			k := newOutputs(ctx, h.fio, md, writeSchema, dir, rw.namePrefix, x.p.Options.WriteMaxFileSize, bpr, int32(outID), t)
			k.sortOrderID = out.sortOrderID
			return k
		}
	}
	rw.path, rw.pathNote = RewriteArrow, ""
	if out.fan != nil {
		rw.pathNote = fmt.Sprintf("rows are repartitioned into spec %d", outID)
	} else if why := arrowReason(rw, x.opts, x.p.Options.WriteMaxFileSize); why != "" {
		rw.pathNote = why
	} else {
		err := x.transcode(ctx, h, rw, writeSchema, dir, int32(g.SpecID), partition)
		if !errors.Is(err, datafile.ErrNotTranscodable) {
			if err == nil {
				rw.path = RewriteTranscode
			}
			return err
		}
		rw.rowsOut = 0 // an input needs the Arrow path: start over
		rw.pathNote = err.Error()
	}
	sc := newSelfCheck(writeSchema, rw, lineage, x.opts.selfCheckHooks)
	sc.written = datafile.NewNonNullCounter(writeSchema)
	write := func(rec arrow.RecordBatch) error {
		if err := sc.wrote(rec); err != nil {
			return err
		}
		return out.write(rec)
	}
	var srt *sorter
	sortBuffer := max(x.opts.SortBuffer, x.p.Options.WriteMaxFileSize)
	if x.opts.SortBuffer == 0 {
		sortBuffer = max(DefaultSortBuffer, x.p.Options.WriteMaxFileSize)
	}
	if x.opts.sorting() {
		as, err := scan.Schema(md, sopts)
		if err != nil {
			return err
		}
		o, err := resolveOrdering(md, x.opts)
		if err != nil {
			return err
		}
		if srt, err = newSorter(o, as); err != nil {
			return err
		}
		if srt != nil {
			out.sortOrderID = o.orderID
		}
	}
	var pending []arrow.RecordBatch
	var pendingBytes int64
	runs := 0
	defer func() {
		for _, r := range pending {
			r.Release()
		}
	}()
	flushSorted := func(last bool) error {
		if len(pending) == 0 {
			return nil
		}
		// A group sorted in one run is cut into the files the plan
		// expects, of equal rows, as Spark's sort strategy range-partitions
		// a group into that many files of about the target size (fewer
		// when deletes left too few rows for them); the runs of a larger
		// group are cut at the write max size.
		pieces := int64(1)
		if last && runs == 0 && g.ExpectedOutputFiles > 1 {
			rows := float64(pendingRows(pending))
			fit := int64(math.Ceil(rows * bpr / float64(x.p.Options.TargetFileSize)))
			pieces = max(1, min(int64(g.ExpectedOutputFiles), fit))
		}
		runs++
		rec, err := srt.sort(pending)
		for _, r := range pending {
			r.Release()
		}
		pending, pendingBytes = nil, 0
		if err != nil {
			return err
		}
		defer rec.Release()
		// Written in slices, so that a file is cut once it reaches the
		// write max size too; each file is a range of the order.
		step := sortSlice(x.p.Options.WriteMaxFileSize, bpr)
		n := rec.NumRows()
		per := (n + pieces - 1) / pieces
		for lo := int64(0); lo < n; lo += per {
			hi := min(lo+per, n)
			for off := lo; off < hi; off += step {
				s := rec.NewSlice(off, min(off+step, hi))
				err := write(s)
				s.Release()
				if err != nil {
					return err
				}
			}
			if err := out.finish(); err != nil { // no file spans two pieces or runs
				return err
			}
		}
		return nil
	}
	// One reader for the group: a partition-scoped delete file applies to
	// every input of its partition and is read once, not once per input.
	// It is made per run, against this head's metadata, because a rebase
	// resolves the inputs again on a newer head.
	tasks := make([]scan.FileTask, len(rw.inputs))
	for i, in := range rw.inputs {
		tasks[i] = scan.FileTask{File: in.entry, Deletes: in.deletes}
	}
	rd, err := scan.NewFileReader(h.fio, md, tasks)
	if err != nil {
		return err
	}
	// The inputs are decoded on a reader goroutine while this one encodes:
	// an input is usually a single batch, so without the pipeline reading
	// and writing would take turns.
	read := func(ctx context.Context, i int, fn func(rec arrow.RecordBatch) error) error {
		seqFill := int64(-1)
		if in := rw.inputs[i]; lineage && in.entry.Entry.DataFile.FirstRowID == nil {
			seqFill = in.entry.DataSequenceNumber()
		}
		ic := sc.arrowInput(i, writeSchema)
		o := sopts
		o.Unfiltered = ic.all.Add
		return rd.Read(ctx, i, o, func(rec arrow.RecordBatch) error {
			// The self-check counts rows as they are to be written: with
			// the sequence number inheritance gives them filled in.
			if seqFill >= 0 {
				rec = datafile.FillSequence(rec, seqFill)
				defer rec.Release()
			}
			if err := sc.readKept(ic, rec); err != nil {
				return err
			}
			return fn(rec)
		})
	}
	err = prefetch(ctx, len(rw.inputs), read, func(_ int, rec arrow.RecordBatch) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if h := sc.hooks; h != nil && h.batch != nil {
			rec = h.batch(rec)
			defer rec.Release()
		}
		rw.rowsOut += rec.NumRows()
		if srt == nil {
			return write(rec)
		}
		rec.Retain()
		pending = append(pending, rec)
		pendingBytes += recordSize(rec)
		if pendingBytes >= sortBuffer {
			return flushSorted(false)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if srt != nil {
		if err := flushSorted(true); err != nil {
			return err
		}
	}
	if err := out.finish(); err != nil {
		return err
	}
	if err := sc.verifyArrow(rw, out.done); err != nil {
		return err
	}
	if err := verifyPartitionValues(ctx, h.fio, md, writeSchema, out.done); err != nil {
		return err
	}
	rw.takeOutputs(out)
	return nil
}

// sortSlice is the rows of a sorted run written at a time: the output
// file is cut between slices, so a slice is about a sixteenth of a file
// (by the inputs' bytes per row), at most 8192 rows.
func sortSlice(fileSize int64, bytesPerRow float64) int64 {
	if bytesPerRow <= 0 {
		return 1024
	}
	return int64(min(max(float64(fileSize)/bytesPerRow/16, 1), 8192))
}

// pendingRows is the number of rows of recs.
func pendingRows(recs []arrow.RecordBatch) int64 {
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	return n
}

// groupDir is the directory a group's outputs are written to.
func groupDir(md *spec.TableMetadata, ps *spec.PartitionSpec, g *plan.Group) string {
	dir := table.DataLocation(md)
	if pp := table.PartitionPathOf(md.CurrentSchema(), ps, g.PartitionTuple); pp != "" {
		dir += "/" + pp
	}
	return dir
}

// groupPrefix begins the names of g's output files: "" in a
// single-process run (random names), the plan's id and the group's in a
// sharded one, so the committer can list every file any attempt at the
// group wrote.
func (x *executor) groupPrefix(g *plan.Group) string {
	if x.planID == "" {
		return ""
	}
	return x.planID + "-" + g.ID + "-"
}

// takeOutputs makes the finished files of out the rewrite's outputs: from
// here on the commit (or discard) is responsible for them.
func (rw *rewrite) takeOutputs(out *outputs) {
	rw.outputs = out.done
	out.done = nil
	for i := range rw.outputs {
		rw.bytesOut += rw.outputs[i].FileSizeInBytes
	}
}

// recordSize is the memory rec's buffers take.
func recordSize(rec arrow.RecordBatch) int64 {
	var n int64
	var walk func(d arrow.ArrayData)
	walk = func(d arrow.ArrayData) {
		for _, b := range d.Buffers() {
			if b != nil {
				n += int64(b.Len())
			}
		}
		for _, c := range d.Children() {
			walk(c)
		}
	}
	for _, c := range rec.Columns() {
		walk(c.Data())
	}
	return n
}
