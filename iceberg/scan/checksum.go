package scan

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
)

// ChecksumResult is the number of surviving rows of a snapshot and a
// checksum of their content.
type ChecksumResult struct {
	RowCount int64
	Checksum string // lowercase hex SHA-256
}

// Checksum scans snap like Rows and summarises the surviving rows in the
// encoding of interop/cmd/iceberg-read (iceberg-go), so the two can be
// compared: each row is the JSON object (encoding/json, keys sorted)
// mapping column name to Arrow's GetOneForMarshal value of the cell
// (numbers as JSON numbers, strings as strings, timestamptz as RFC 3339
// with nanosecond precision in UTC, binary as base64, null as null); rows
// are sorted bytewise; the checksum is SHA-256 over the sorted rows, each
// followed by "\n". Every row's encoding is held in memory to sort it.
func Checksum(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, snap *spec.Snapshot, opts Options) (ChecksumResult, error) {
	var rows [][]byte
	err := Rows(ctx, fio, md, snap, opts, func(rec arrow.RecordBatch) error {
		enc, err := EncodeRows(rec)
		if err != nil {
			return err
		}
		rows = append(rows, enc...)
		return nil
	})
	if err != nil {
		return ChecksumResult{}, err
	}
	return ChecksumOf(rows), nil
}

// ChecksumOf sorts row encodings (from EncodeRows) in place and hashes
// them.
func ChecksumOf(rows [][]byte) ChecksumResult {
	slices.SortFunc(rows, bytes.Compare)
	h := sha256.New()
	for _, r := range rows {
		h.Write(r)
		h.Write([]byte{'\n'})
	}
	return ChecksumResult{RowCount: int64(len(rows)), Checksum: hex.EncodeToString(h.Sum(nil))}
}

// EncodeRows renders each row of rec as the JSON object Checksum hashes.
func EncodeRows(rec arrow.RecordBatch) ([][]byte, error) {
	fields := rec.Schema().Fields()
	n := int(rec.NumRows())
	out := make([][]byte, 0, n)
	row := make(map[string]any, len(fields))
	for i := range n {
		for c, col := range rec.Columns() {
			row[fields[c].Name] = col.GetOneForMarshal(i)
		}
		b, err := json.Marshal(row)
		if err != nil {
			return nil, fmt.Errorf("encode row %d: %w", i, err)
		}
		out = append(out, b)
	}
	return out, nil
}
