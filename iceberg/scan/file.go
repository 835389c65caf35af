package scan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// Schema is the Arrow schema of the batches Rows and ReadFile produce for
// md and opts: the projected columns (field ids under
// datafile.FieldIDKey), then _row_id and _last_updated_sequence_number
// (WithLineage), _file (WithFile) and _pos (WithPos).
func Schema(md *spec.TableMetadata, opts Options) (*arrow.Schema, error) {
	proj, err := projection(md, opts)
	if err != nil {
		return nil, err
	}
	var so []datafile.SchemaOption
	if opts.WithLineage {
		so = append(so, datafile.WithLineageColumns())
	}
	s, err := datafile.ArrowSchema(proj, so...)
	if err != nil {
		return nil, err
	}
	return arrow.NewSchema(append(s.Fields(), metaFields(opts)...), nil), nil
}

func metaFields(opts Options) []arrow.Field {
	var out []arrow.Field
	if opts.WithFile {
		out = append(out, arrow.Field{Name: FileColumnName, Type: arrow.BinaryTypes.String,
			Metadata: arrow.NewMetadata([]string{datafile.FieldIDKey}, []string{strconv.Itoa(spec.FieldIDMetaFile)})})
	}
	if opts.WithPos {
		out = append(out, arrow.Field{Name: PosColumnName, Type: arrow.PrimitiveTypes.Int64,
			Metadata: arrow.NewMetadata([]string{datafile.FieldIDKey}, []string{strconv.Itoa(spec.FieldIDMetaPos)})})
	}
	return out
}

// ReadFile reads one live data file of a table with the deletes that apply
// to it (from table.DeleteIndex.For) and calls fn with batches of the
// surviving rows, in file order, in the schema Schema(md, opts) describes.
// Row positions, _pos and _row_id are those of the stored file, before
// deletes. A batch is released when fn returns; fn must Retain what it
// keeps. Batches with no surviving rows are not passed to fn.
//
// md supplies the column types of equality deletes (by field id) and the
// name mapping; it is not otherwise consulted, so compaction can read a
// file against the table it plans on.
//
// ReadFile reads the file's delete files for this one call: to read many
// data files that share delete files, use a FileReader.
func ReadFile(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, entry table.FileEntry, deletes table.Applicable, opts Options, fn func(rec arrow.RecordBatch) error) error {
	r, err := NewFileReader(fio, md, []FileTask{{File: entry, Deletes: deletes}})
	if err != nil {
		return err
	}
	return r.Read(ctx, 0, opts, fn)
}

// eqGroup is the equality-delete files sharing one set of columns.
type eqGroup struct {
	cols []int // reader column of each equality id
	sets []map[string]struct{}
}

func readFile(ctx context.Context, l *deleteLoader, md *spec.TableMetadata, entry table.FileEntry, deletes table.Applicable, opts Options, fn func(rec arrow.RecordBatch) error) error {
	df := &entry.Entry.DataFile
	if df.Content != manifest.ContentData {
		return fmt.Errorf("read %s: not a data file (content %d)", df.FilePath, df.Content)
	}
	if err := readDataFile(ctx, l, md, entry, deletes, opts, fn); err != nil {
		return fmt.Errorf("read data file %s: %w", df.FilePath, err)
	}
	return nil
}

func readDataFile(ctx context.Context, l *deleteLoader, md *spec.TableMetadata, entry table.FileEntry, deletes table.Applicable, opts Options, fn func(rec arrow.RecordBatch) error) error {
	df := &entry.Entry.DataFile
	proj, err := projection(md, opts)
	if err != nil {
		return err
	}
	deleted, err := l.positions(ctx, entry, deletes)
	if err != nil {
		return err
	}
	if opts.Skip != nil && !opts.Skip.IsEmpty() {
		// A copy: the delete loader may share deleted with other reads.
		all := opts.Skip.Clone()
		if deleted != nil {
			all.Or(deleted)
		}
		deleted = all
	}
	eqs, err := l.equality(ctx, deletes)
	if err != nil {
		return err
	}

	// Equality columns the projection lacks are read too, then dropped.
	readSchema, extra, err := withEqualityColumns(md, proj, eqs)
	if err != nil {
		return err
	}

	consts, err := table.IdentityConstants(md, df)
	if err != nil {
		return err
	}
	f, err := l.fio.Open(ctx, df.FilePath)
	if err != nil {
		return err
	}
	defer f.Close()
	rd, err := datafile.OpenReader(ctx, f, f.Size(), datafile.ReadOptions{
		Schema: readSchema, NameMapping: l.nm, WithLineage: opts.WithLineage,
		FirstRowID: df.FirstRowID, DataSequenceNumber: entry.DataSequenceNumber(), BatchSize: opts.BatchSize,
		Stored: df.StoredColumns(), Constants: consts,
	})
	if err != nil {
		return err
	}
	defer rd.Close()
	if rd.NumRows() != df.RecordCount {
		return fmt.Errorf("file has %d rows but its manifest entry says %d", rd.NumRows(), df.RecordCount)
	}

	// Map reader columns to output columns and equality ids.
	byID := map[int]int{}
	var outIdx []int
	var outFields []arrow.Field
	for j, fld := range rd.Schema().Fields() {
		id, err := fieldID(fld)
		if err != nil {
			return err
		}
		byID[id] = j
		if !extra[id] {
			outIdx = append(outIdx, j)
			outFields = append(outFields, fld)
		}
	}
	outSchema := arrow.NewSchema(append(outFields, metaFields(opts)...), nil)
	groups, err := groupEqualityDeletes(eqs, byID)
	if err != nil {
		return err
	}

	f2 := &filter{deleted: deleted, groups: groups}
	unfilteredSchema := arrow.NewSchema(outFields, nil)
	var pos int64
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if opts.Unfiltered != nil {
			if err := unfiltered(rec, outIdx, unfilteredSchema, opts.Unfiltered); err != nil {
				rec.Release()
				return err
			}
		}
		out, err := f2.apply(ctx, rec, pos, outIdx, outSchema, df.FilePath, opts)
		pos += rec.NumRows()
		rec.Release()
		if err != nil {
			return err
		}
		if out == nil {
			continue
		}
		err = fn(out)
		out.Release()
		if err != nil {
			return err
		}
	}
}

// withEqualityColumns is proj plus the equality columns of eqs it lacks
// (optional: a file may predate them), and which ones were added.
func withEqualityColumns(md *spec.TableMetadata, proj *spec.Schema, eqs []*eqFile) (*spec.Schema, map[int]bool, error) {
	readSchema := &spec.Schema{ID: proj.ID, Fields: append([]spec.NestedField(nil), proj.Fields...), IdentifierFieldIDs: proj.IdentifierFieldIDs}
	extra := map[int]bool{}
	for _, ef := range eqs {
		for _, id := range ef.ids {
			if hasTop(readSchema, id) {
				continue
			}
			fld, err := topField(md, id)
			if err != nil {
				return nil, nil, err
			}
			fld.Required = false
			readSchema.Fields = append(readSchema.Fields, fld)
			extra[id] = true
		}
	}
	return readSchema, extra, nil
}

func hasTop(s *spec.Schema, id int) bool {
	for _, f := range s.Fields {
		if f.ID == id {
			return true
		}
	}
	return false
}

func fieldID(f arrow.Field) (int, error) {
	v, ok := f.Metadata.GetValue(datafile.FieldIDKey)
	if !ok {
		return 0, fmt.Errorf("column %s has no field id", f.Name)
	}
	id, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("column %s: bad field id %q", f.Name, v)
	}
	return id, nil
}

func groupEqualityDeletes(eqs []*eqFile, byID map[int]int) ([]eqGroup, error) {
	idx := map[string]int{}
	var groups []eqGroup
	for _, ef := range eqs {
		k := idsKey(ef.ids)
		gi, ok := idx[k]
		if !ok {
			var cols []int
			for _, id := range ef.ids {
				j, ok := byID[id]
				if !ok {
					return nil, fmt.Errorf("equality field %d was not read", id)
				}
				cols = append(cols, j)
			}
			gi = len(groups)
			idx[k] = gi
			groups = append(groups, eqGroup{cols: cols})
		}
		groups[gi].sets = append(groups[gi].sets, ef.keys)
	}
	return groups, nil
}

// unfiltered calls fn with the columns outIdx of rec.
func unfiltered(rec arrow.RecordBatch, outIdx []int, sc *arrow.Schema, fn func(arrow.RecordBatch) error) error {
	cols := make([]arrow.Array, len(outIdx))
	for i, j := range outIdx {
		cols[i] = rec.Column(j)
	}
	out := array.NewRecordBatch(sc, cols, rec.NumRows())
	defer out.Release()
	return fn(out)
}
