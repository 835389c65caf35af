package scan

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
)

// LineageRow is one surviving row of a snapshot as a lineage check sees
// it: its key, a digest of its other values, and its row lineage.
type LineageRow struct {
	// Key is the key columns' equality encoding (equal values, equal
	// bytes); KeyText is the same values as a JSON array, for messages.
	Key     string
	KeyText string
	// KeyNull is set when a key column is NULL: such a row has no key to
	// be matched by (NULL equals nothing, as in SQL).
	KeyNull bool
	// Digest is a SHA-256 of the row's columns other than the key and
	// lineage columns, in the encoding of EncodeRows.
	Digest [sha256.Size]byte
	// RowID and LastUpdated are _row_id and _last_updated_sequence_number
	// with inheritance applied; nil for rows without lineage (files from
	// before a v3 upgrade).
	RowID, LastUpdated *int64
	File               string
	Pos                int64
}

// LineageRows scans snap like Rows and calls fn once per surviving row,
// in Rows' order, with the key of the columns keyIDs (top-level field ids
// of md's current schema, of primitive type).
func LineageRows(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, snap *spec.Snapshot, keyIDs []int, fn func(LineageRow) error) error {
	if len(keyIDs) == 0 {
		return fmt.Errorf("lineage rows: no key column")
	}
	opts := Options{WithLineage: true, WithFile: true, WithPos: true}
	return Rows(ctx, fio, md, snap, opts, func(rec arrow.RecordBatch) error {
		fields := rec.Schema().Fields()
		byID := map[int]int{}
		for i, f := range fields {
			id, err := fieldID(f)
			if err != nil {
				return err
			}
			byID[id] = i
		}
		col := func(id int) (int, error) {
			i, ok := byID[id]
			if !ok {
				return 0, fmt.Errorf("lineage rows: the scan has no column with field id %d", id)
			}
			return i, nil
		}
		keyCols := make([]int, len(keyIDs))
		isKey := map[int]bool{}
		for k, id := range keyIDs {
			i, err := col(id)
			if err != nil {
				return err
			}
			keyCols[k], isKey[i] = i, true
		}
		var meta [4]int
		for k, id := range []int{spec.FieldIDRowID, spec.FieldIDLastUpdatedSequenceNumber, spec.FieldIDMetaFile, spec.FieldIDMetaPos} {
			i, err := col(id)
			if err != nil {
				return err
			}
			meta[k], isKey[i] = i, true
		}
		rowIDs, ok1 := rec.Column(meta[0]).(*array.Int64)
		seqs, ok2 := rec.Column(meta[1]).(*array.Int64)
		files, ok3 := rec.Column(meta[2]).(*array.String)
		poss, ok4 := rec.Column(meta[3]).(*array.Int64)
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return fmt.Errorf("lineage rows: unexpected metadata column types")
		}
		values := map[string]any{}
		keyVals := make([]any, len(keyCols))
		for i := range int(rec.NumRows()) {
			var key []byte
			keyNull := false
			for k, c := range keyCols {
				keyNull = keyNull || rec.Column(c).IsNull(i)
				var err error
				if key, err = appendKey(key, rec.Column(c), i); err != nil {
					return fmt.Errorf("key column %s: %w", fields[c].Name, err)
				}
				keyVals[k] = rec.Column(c).GetOneForMarshal(i)
			}
			keyText, err := json.Marshal(keyVals)
			if err != nil {
				return err
			}
			clear(values)
			for c, f := range fields {
				if !isKey[c] {
					values[f.Name] = rec.Column(c).GetOneForMarshal(i)
				}
			}
			enc, err := json.Marshal(values)
			if err != nil {
				return fmt.Errorf("encode row: %w", err)
			}
			row := LineageRow{Key: string(key), KeyText: string(keyText), KeyNull: keyNull, Digest: sha256.Sum256(enc), File: strings.Clone(files.Value(i)), Pos: poss.Value(i)}
			if !rowIDs.IsNull(i) {
				v := rowIDs.Value(i)
				row.RowID = &v
			}
			if !seqs.IsNull(i) {
				v := seqs.Value(i)
				row.LastUpdated = &v
			}
			if err := fn(row); err != nil {
				return err
			}
		}
		return nil
	})
}
