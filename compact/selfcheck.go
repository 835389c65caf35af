package compact

import (
	"context"
	"errors"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// errSelfCheck is wrapped by every self-check failure.
var errSelfCheck = errors.New("self-check")

// selfCheckHooks break a rewrite on purpose, so that tests can see the
// self-check refuse it. Nil in production.
type selfCheckHooks struct {
	// batch replaces each Arrow batch before it is written; it returns a
	// new reference.
	batch func(arrow.RecordBatch) arrow.RecordBatch
	// input changes each transcoded input after its deletes are counted.
	input func(*datafile.TranscodeInput)
}

// selfCheck compares what a group's rewrite read with what it wrote,
// before its outputs may be committed: a reader that silently reads a
// column as nulls, or rows, values or lineage lost on the way, fail the
// group instead of reaching the table. See the package documentation.
type selfCheck struct {
	leaves  []datafile.LeafColumn
	top     map[int]bool // the schema's top-level field ids
	lineage bool
	hooks   *selfCheckHooks
	inputs  []inputCheck
	// Arrow path, counted on the writing goroutine.
	written      *datafile.NonNullCounter
	writtenPairs pairSum
}

// inputCheck is what was read of one input.
type inputCheck struct {
	// Transcode path.
	deleted int64
	tally   datafile.TranscodeTally
	// Arrow path: every row as read, the rows kept, their lineage.
	all, kept *datafile.NonNullCounter
	keptPairs pairSum
}

func newSelfCheck(schema *spec.Schema, rw *rewrite, lineage bool, hooks *selfCheckHooks) *selfCheck {
	top := make(map[int]bool, len(schema.Fields))
	for _, f := range schema.Fields {
		top[f.ID] = true
	}
	return &selfCheck{leaves: datafile.LeafColumns(schema), top: top, lineage: lineage, hooks: hooks, inputs: make([]inputCheck, len(rw.inputs))}
}

// transcodeInput prepares input k for the Transcoder: its deleted rows are
// counted from the positions the deletes gave, before the Transcoder sees
// them.
func (sc *selfCheck) transcodeInput(k int, in *datafile.TranscodeInput, rows int64) {
	sc.inputs[k].deleted = deletedRows(in.Deleted, rows)
	in.Tally = &sc.inputs[k].tally
	if sc.hooks != nil && sc.hooks.input != nil {
		sc.hooks.input(in)
	}
}

// deletedRows is how many of a file's rows del deletes (a delete of a
// position past the end deletes nothing).
func deletedRows(del *roaring64.Bitmap, rows int64) int64 {
	if del == nil || rows == 0 {
		return 0
	}
	return int64(del.Rank(uint64(rows - 1)))
}

// verifyTranscode checks a transcoded group before its outputs are taken.
func (sc *selfCheck) verifyTranscode(rw *rewrite, outs []manifest.DataFile) error {
	var read, deleted int64
	kept := map[int]int64{}
	written := map[int]int64{}
	for k := range rw.inputs {
		ic := &sc.inputs[k]
		read += rw.inputs[k].entry.Entry.DataFile.RecordCount
		deleted += ic.deleted
		for id, n := range ic.tally.NonNull {
			if lt, ok := ic.tally.Lineage[id]; ok {
				// Rows without a stored value inherit one.
				kept[id] += int64(expectedLineage(rw.inputs[k], id, lt).N)
				continue
			}
			kept[id] += n - ic.tally.Dropped[id]
		}
		for id, n := range ic.tally.Written {
			written[id] += n
		}
	}
	if err := sc.verifyCounts(read, deleted, kept, written, outs); err != nil {
		return err
	}
	for k, in := range rw.inputs {
		if err := sc.verifyInput(in, sc.inputs[k].tally.NonNull); err != nil {
			return err
		}
		if err := sc.verifyLineage(in, &sc.inputs[k].tally); err != nil {
			return err
		}
	}
	return nil
}

// verifyCounts checks rows (read less deleted is written) and each leaf's
// non-null values (kept ones read is written, by the count taken as they
// were written and by the outputs' metrics where they have them).
func (sc *selfCheck) verifyCounts(read, deleted int64, kept, written map[int]int64, outs []manifest.DataFile) error {
	var rows int64
	for i := range outs {
		rows += outs[i].RecordCount
	}
	if read-deleted != rows {
		return fmt.Errorf("%w: %d rows read, %d deleted, %d written", errSelfCheck, read, deleted, rows)
	}
	for _, l := range sc.leaves {
		if kept[l.ID] != written[l.ID] {
			return fmt.Errorf("%w: column %s (id %d): %d non-null values read, %d written", errSelfCheck, l.Name, l.ID, kept[l.ID], written[l.ID])
		}
		if n, ok := metricsNonNull(outs, l.ID); ok && n != kept[l.ID] {
			return fmt.Errorf("%w: column %s (id %d): %d non-null values read, %d written by the outputs' metrics", errSelfCheck, l.Name, l.ID, kept[l.ID], n)
		}
	}
	return nil
}

// verifyInput checks what was read of one input file, every row, against
// its manifest entry's metrics: a column the reader failed to match reads
// as nulls, which agrees with itself from reading to writing. A column
// the file's partition gives (input.consts) is checked against that value
// instead: every row non-null, or every row null, whatever the file
// stores (a file written with the column as nulls by mistake is repaired
// by the rewrite, not refused).
func (sc *selfCheck) verifyInput(in input, read map[int]int64) error {
	df := &in.entry.Entry.DataFile
	for _, l := range sc.leaves {
		if v, ok := in.consts[l.ID]; ok {
			if !sc.top[l.ID] {
				// Inside a struct: the constant fills the rows whose
				// struct is stored, which no metric counts.
				continue
			}
			want := df.RecordCount
			if v == nil {
				want = 0
			}
			if read[l.ID] != want {
				return fmt.Errorf("%w: column %s (id %d): %d non-null values read from %s, whose partition value for it is %v in each of its %d rows",
					errSelfCheck, l.Name, l.ID, read[l.ID], df.FilePath, v, df.RecordCount)
			}
			continue
		}
		if l.Repeated {
			continue // writers disagree on these null counts: see LeafColumn
		}
		if l.ID == spec.FieldIDRowID || l.ID == spec.FieldIDLastUpdatedSequenceNumber {
			// Metrics count the stored values; a read fills the nulls by
			// inheritance (Spark stores the column with nulls for rows
			// that inherit). The lineage check compares these exactly.
			continue
		}
		vc, ok1 := df.ValueCounts[l.ID]
		nc, ok2 := df.NullValueCounts[l.ID]
		if !ok1 || !ok2 {
			continue
		}
		if want := vc - nc; read[l.ID] != want {
			return fmt.Errorf("%w: column %s (id %d): %d non-null values read from %s, %d by its manifest entry",
				errSelfCheck, l.Name, l.ID, read[l.ID], df.FilePath, want)
		}
	}
	return nil
}

// metricsNonNull is the non-null values of field id in outs by their
// metrics, when every output has them.
func metricsNonNull(outs []manifest.DataFile, id int) (int64, bool) {
	var n int64
	for i := range outs {
		vc, ok1 := outs[i].ValueCounts[id]
		nc, ok2 := outs[i].NullValueCounts[id]
		if !ok1 || !ok2 {
			return 0, false
		}
		n += vc - nc
	}
	return n, len(outs) > 0
}

// verifyLineage checks that the lineage values the Transcoder wrote for
// one input are those its rows have.
func (sc *selfCheck) verifyLineage(in input, t *datafile.TranscodeTally) error {
	for id, lt := range t.Lineage {
		if want := expectedLineage(in, id, lt); lt.Written != want {
			return fmt.Errorf("%w: column %s (id %d): the values written for the rows of %s are not the rows' own (%d non-null expected, %d written)",
				errSelfCheck, lineageName(id), id, in.entry.Entry.DataFile.FilePath, want.N, lt.Written.N)
		}
	}
	return nil
}

// expectedLineage is what lineage column id must be written as for the
// kept rows of in: a stored value, or else the one inherited from the
// manifest entry's first_row_id and data sequence number (no row id
// before the table's first v3 commit, whose rows get theirs from the
// output's first_row_id). It is derived from the entry, not from what the
// Transcoder was told, so wrong inheritance shows.
func expectedLineage(in input, id int, lt datafile.LineageTally) datafile.LineageSums {
	first := in.entry.Entry.DataFile.FirstRowID
	seq := uint64(in.entry.DataSequenceNumber())
	inh := lt.Inherited
	var want datafile.LineageSums
	switch {
	case id == spec.FieldIDRowID && first != nil:
		f := uint64(*first)
		want = lt.Stored
		want.N += inh.N
		want.O += inh.O
		want.V += inh.N*f + inh.V
		want.OV += f*inh.O + inh.OV
	case id == spec.FieldIDRowID:
	case first != nil:
		want = lt.Stored
		want.N += inh.N
		want.O += inh.O
		want.V += inh.N * seq
		want.OV += seq * inh.O
	default:
		n, o := lt.Stored.N+inh.N, lt.Stored.O+inh.O
		want = datafile.LineageSums{N: n, O: o, V: n * seq, OV: o * seq}
	}
	return want
}

func lineageName(id int) string {
	if id == spec.FieldIDRowID {
		return "_row_id"
	}
	return "_last_updated_sequence_number"
}

// arrowInput starts counting input k of the Arrow path.
func (sc *selfCheck) arrowInput(k int, schema *spec.Schema) *inputCheck {
	ic := &sc.inputs[k]
	ic.all, ic.kept = datafile.NewNonNullCounter(schema), datafile.NewNonNullCounter(schema)
	return ic
}

// readKept counts a batch of kept rows as read, lineage as it is to be
// written (sequence numbers inherited by rows without lineage filled in).
func (sc *selfCheck) readKept(ic *inputCheck, rec arrow.RecordBatch) error {
	if err := ic.kept.Add(rec); err != nil {
		return fmt.Errorf("self-check: %w", err)
	}
	if sc.lineage {
		ic.keptPairs.add(rec)
	}
	return nil
}

// wrote counts a batch handed to the writer.
func (sc *selfCheck) wrote(rec arrow.RecordBatch) error {
	if err := sc.written.Add(rec); err != nil {
		return fmt.Errorf("self-check: %w", err)
	}
	if sc.lineage {
		sc.writtenPairs.add(rec)
	}
	return nil
}

// verifyArrow checks a group rewritten through Arrow before its outputs
// are taken.
func (sc *selfCheck) verifyArrow(rw *rewrite, outs []manifest.DataFile) error {
	var read, kept int64
	keptNN := map[int]int64{}
	var pairs pairSum
	for k, in := range rw.inputs {
		ic := &sc.inputs[k]
		if ic.all == nil {
			return fmt.Errorf("%w: input %s was not read", errSelfCheck, in.entry.Entry.DataFile.FilePath)
		}
		if n := in.entry.Entry.DataFile.RecordCount; ic.all.Rows() != n {
			return fmt.Errorf("%w: %d rows read from %s, %d by its manifest entry", errSelfCheck, ic.all.Rows(), in.entry.Entry.DataFile.FilePath, n)
		}
		read += ic.all.Rows()
		kept += ic.kept.Rows()
		for id, n := range ic.kept.NonNull() {
			keptNN[id] += n
		}
		pairs.n += ic.keptPairs.n
		pairs.sum += ic.keptPairs.sum
		if err := sc.verifyInput(in, ic.all.NonNull()); err != nil {
			return err
		}
	}
	if err := sc.verifyCounts(read, read-kept, keptNN, sc.written.NonNull(), outs); err != nil {
		return err
	}
	if sc.lineage && pairs != sc.writtenPairs {
		return fmt.Errorf("%w: columns _row_id, _last_updated_sequence_number: the %d rows written do not carry the lineage of the %d rows read",
			errSelfCheck, sc.writtenPairs.n, pairs.n)
	}
	return nil
}

// pairSum sums a hash of each row's (_row_id, _last_updated_sequence_number)
// pair: order does not matter (a sorted rewrite reorders rows), a changed
// or swapped value does.
type pairSum struct {
	n, sum uint64
}

// add adds the rows of rec, whose last two columns are the lineage
// columns; a null sequence number counts as seqFill when that is >= 0.
func (p *pairSum) add(rec arrow.RecordBatch) {
	nc := int(rec.NumCols())
	rid, ok1 := rec.Column(nc - 2).(*array.Int64)
	seq, ok2 := rec.Column(nc - 1).(*array.Int64)
	if !ok1 || !ok2 {
		p.n = ^uint64(0) // cannot match: the check fails with the row counts
		return
	}
	for i := range rid.Len() {
		r := ^uint64(0) // null: no row id yet
		if rid.IsValid(i) {
			r = uint64(rid.Value(i))
		}
		s := ^uint64(0)
		if seq.IsValid(i) {
			s = uint64(seq.Value(i))
		}
		p.sum += mix64(mix64(r) ^ s)
	}
	p.n += uint64(rid.Len())
}

// mix64 is SplitMix64's finalizer.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// verifyPartitionValues checks that every output holds its partition
// value in every row of each column the spec's first projection rule
// gives one (an identity-partition source column): readers that take the
// column from the file (iceberg-go, any plain Parquet reader) and engines
// that prune on the file's metrics (Spark's filters) must find the value
// there, not the nulls a reader that ignored the rule would have written.
// The outputs' metrics prove it where they are exact (null count 0, value
// count the rows, lower = upper = the value); otherwise the column is read
// back from the file as stored.
func verifyPartitionValues(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, schema *spec.Schema, outs []manifest.DataFile) error {
	for i := range outs {
		df := &outs[i]
		consts, err := table.IdentityConstants(md, df)
		if err != nil {
			return fmt.Errorf("%w: %w", errSelfCheck, err)
		}
		var unproven []spec.NestedField
		for _, f := range schema.Fields {
			if _, ok := consts[f.ID]; !ok {
				continue
			}
			want, _, err := datafile.Constants(consts).Value(f)
			if err != nil {
				return fmt.Errorf("%w: output %s: %w", errSelfCheck, df.FilePath, err)
			}
			if !metricsHold(df, f, want) {
				unproven = append(unproven, f)
			}
		}
		if len(unproven) == 0 {
			continue
		}
		if err := readBackConstants(ctx, fio, df, unproven, consts); err != nil {
			return err
		}
	}
	return nil
}

// metricsHold reports whether df's metrics prove that every row of column
// f holds want (nil: null).
func metricsHold(df *manifest.DataFile, f spec.NestedField, want any) bool {
	vc, ok1 := df.ValueCounts[f.ID]
	nc, ok2 := df.NullValueCounts[f.ID]
	if !ok1 || !ok2 || vc != df.RecordCount {
		return false
	}
	if want == nil {
		return nc == df.RecordCount
	}
	if nc != 0 || df.NaNValueCounts[f.ID] != 0 {
		return false
	}
	if df.RecordCount == 0 {
		return true
	}
	for _, b := range [][]byte{df.LowerBounds[f.ID], df.UpperBounds[f.ID]} {
		if b == nil {
			return false
		}
		v, err := spec.DecodeValue(f.Type, b)
		if err != nil || !datafile.SameValue(v, want) {
			return false // a truncated bound, say: read the values
		}
	}
	return true
}

// readBackConstants reads columns of the output df as stored and checks
// each row against its partition value.
func readBackConstants(ctx context.Context, fio fileio.FileIO, df *manifest.DataFile, cols []spec.NestedField, consts datafile.Constants) error {
	f, err := fio.Open(ctx, df.FilePath)
	if err != nil {
		return fmt.Errorf("%w: read back %s: %w", errSelfCheck, df.FilePath, err)
	}
	defer f.Close()
	if err := datafile.CheckConstants(ctx, f, f.Size(), &spec.Schema{Fields: cols}, consts, nil); err != nil {
		return fmt.Errorf("%w: output %s does not hold its partition's values: %w", errSelfCheck, df.FilePath, err)
	}
	return nil
}
