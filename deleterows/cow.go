package deleterows

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/scan"
)

// rewrite writes a copy of f without the rows the run deletes, as Spark's
// copy-on-write DELETE does: the rows f's deletes leave, less the matched
// ones, in file order, in the table's current schema (identity partition
// values the file does not hold come from its partition, the spec's
// first projection rule). In v3 each row keeps its _row_id and
// _last_updated_sequence_number (a copied row is not an updated one);
// the rows of a file committed before the v3 upgrade, which have no row
// id yet, get the sequence number inheritance gave them, and fresh ids
// from the new file's first_row_id, as compaction gives them. The copy
// has f's spec, partition and sort order, and is added with the commit's
// own sequence number: the deletes that applied to f are applied here,
// and the commit fails if any was added meanwhile (validate).
func (w *writer) rewrite(ctx context.Context, path string, f *File) (manifest.DataFile, error) {
	md := w.md
	schema := md.CurrentSchema()
	lineage := md.FormatVersion >= 3
	if lineage {
		schema = datafile.SchemaWithLineage(schema)
	}
	out, err := w.fio.Create(ctx, path)
	if err != nil {
		return manifest.DataFile{}, fmt.Errorf("create %s: %w", path, err)
	}
	cw := &fileio.CountingWriter{W: out}
	pw, err := datafile.NewWriter(cw, schema, md.Properties)
	if err != nil {
		return manifest.DataFile{}, errors.Join(fmt.Errorf("write %s: %w", path, err), out.Abort())
	}
	src := &f.entry.Entry.DataFile
	fill := int64(-1)
	if lineage && src.FirstRowID == nil {
		fill = f.entry.DataSequenceNumber()
	}
	err = scan.ReadFile(ctx, w.fio, md, f.entry, f.deletes, scan.Options{WithLineage: lineage, Skip: f.matched}, func(rec arrow.RecordBatch) error {
		if fill >= 0 {
			rec = datafile.FillSequence(rec, fill)
			defer rec.Release()
		}
		return pw.Write(rec)
	})
	if err != nil {
		return manifest.DataFile{}, errors.Join(fmt.Errorf("copy %s: %w", src.FilePath, err), out.Abort())
	}
	m, err := pw.Close()
	if err != nil {
		return manifest.DataFile{}, errors.Join(fmt.Errorf("write %s: %w", path, err), out.Abort())
	}
	// Recorded before Close: a file half made visible is removed too.
	w.written = append(w.written, path)
	if err := out.Close(); err != nil {
		return manifest.DataFile{}, fmt.Errorf("close %s: %w", path, err)
	}
	df := m.DataFile(path, cw.N)
	df.SpecID, df.Partition, df.SortOrderID = src.SpecID, src.Partition, src.SortOrderID
	return df, nil
}
