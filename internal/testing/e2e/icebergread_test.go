package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/icectl/icectl/internal/testing/testenv"
)

// goScan is the output of iceberg-read scan and write-fixture: iceberg-go's
// rows, in the encoding of scan.EncodeRows, sorted, and their checksum.
type goScan struct {
	RowCount int64             `json:"row_count"`
	Checksum string            `json:"checksum"`
	Rows     []json.RawMessage `json:"rows"`
}

// icebergRead runs iceberg-read with args and decodes its output.
func icebergRead(t *testing.T, args ...string) goScan {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := testenv.IcebergGo(ctx, t, args...)
	var res goScan
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("iceberg-read %s: output is not JSON: %v", args[0], err)
	}
	// The tool indents its output; compact each row back to the encoding
	// it hashed.
	for i, r := range res.Rows {
		var c bytes.Buffer
		if err := json.Compact(&c, r); err != nil {
			t.Fatalf("iceberg-read row %d: %v", i, err)
		}
		res.Rows[i] = c.Bytes()
	}
	if int64(len(res.Rows)) != res.RowCount {
		t.Fatalf("iceberg-read %s: row_count %d but %d rows", args[0], res.RowCount, len(res.Rows))
	}
	return res
}

// readerBin returns the iceberg-read binary; every test asks for it first,
// so that none does icectl's half of its work and then skips.
func readerBin(t *testing.T) string {
	t.Helper()
	return testenv.Need(t, testenv.IcebergGoReader, "iceberg-go reader (scripts/build-iceberg-go-reader)")
}

// goScanTable scans ns.name of b with iceberg-go.
func goScanTable(t *testing.T, b backend, name string, lineage bool) goScan {
	t.Helper()
	args := append([]string{"scan", "--table", b.ns + "." + name}, b.goArgs...)
	if lineage {
		args = append(args, "--lineage")
	}
	return icebergRead(t, args...)
}

// sameRows reports the first difference between iceberg-go's rows and
// icectl's (both sorted), or "".
func sameRows(goRows []json.RawMessage, ours [][]byte) string {
	if len(goRows) != len(ours) {
		return "iceberg-go has " + strconv.Itoa(len(goRows)) + " rows, icectl " + strconv.Itoa(len(ours))
	}
	for i := range ours {
		if !bytes.Equal(goRows[i], ours[i]) {
			return "row " + strconv.Itoa(i) + ": iceberg-go " + string(goRows[i]) + ", icectl " + string(ours[i])
		}
	}
	return ""
}
