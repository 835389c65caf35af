package partstats_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/testenv"
	"github.com/icectl/icectl/partstats"
)

// pyarrowRead prints a Parquet file's columns (name, field id, nullable,
// nested) and rows as JSON, read by Arrow's C++ Parquet reader.
const pyarrowRead = `
import json, sys
import pyarrow.parquet as pq
t = pq.read_table(sys.argv[1])
def fields(fs):
    out = []
    for f in fs:
        fid = int((f.metadata or {}).get(b"PARQUET:field_id", b"-1"))
        kids = fields(list(f.type)) if f.type.num_fields else []
        out.append({"name": f.name, "id": fid, "nullable": f.nullable, "fields": kids})
    return out
print(json.dumps({"fields": fields(list(t.schema)), "rows": t.to_pylist()}, default=str))
`

type pyField struct {
	Name     string    `json:"name"`
	ID       int       `json:"id"`
	Nullable bool      `json:"nullable"`
	Fields   []pyField `json:"fields"`
}

func wantFields(fs []spec.NestedField) []pyField {
	out := []pyField{}
	for _, f := range fs {
		p := pyField{Name: f.Name, ID: f.ID, Nullable: !f.Required, Fields: []pyField{}}
		if st, ok := f.Type.(*spec.StructType); ok {
			p.Fields = wantFields(st.Fields)
		}
		out = append(out, p)
	}
	return out
}

// TestPyArrowReads: Arrow's C++ Parquet reader (an implementation
// independent of the Go one icectl writes with) reads the file of each
// format version with the spec's field ids, names and optionality, and
// the rows icectl computed; iceberg-go reads the table that registers it.
func TestPyArrowReads(t *testing.T) {
	py := testenv.Need(t, testenv.PyIceberg, "a python with pyarrow (scripts/install-pyiceberg)")
	for _, fv := range []int{2, 3} {
		t.Run(fmt.Sprintf("v%d", fv), func(t *testing.T) {
			h := newHistory(t, fv)
			tbl := h.tb.Load(t)
			res := compute(t, tbl, *tbl.Metadata.CurrentSnapshotID, false)
			tbl = register(t, h, res)
			f, _ := partstats.Registered(tbl.Metadata, res.SnapshotID)
			path := strings.TrimPrefix(f.StatisticsPath, "file://")
			if !filepath.IsAbs(path) {
				t.Fatalf("statistics path %s: want a local file", f.StatisticsPath)
			}
			cmd := exec.CommandContext(context.Background(), py, "-c", pyarrowRead, path)
			var out, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("pyarrow: %v\n%s", err, stderr.String())
			}
			var got struct {
				Fields []pyField         `json:"fields"`
				Rows   []json.RawMessage `json:"rows"`
			}
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			// iceberg-go loads the table with its partition-statistics entry
			// and reads as many rows as icectl. Not the same values: the
			// history's files hold names ("n1") other than their identity
			// partition's ("a"), which icectl reads as the spec's first
			// projection rule says (the partition value) and iceberg-go
			// from the file.
			goOut := testenv.IcebergGo(context.Background(), t, append([]string{"scan", "--table", h.tb.Name()}, h.tb.CatalogFlags()...)...)
			var scanned struct {
				RowCount int64 `json:"row_count"`
			}
			if err := json.Unmarshal(goOut, &scanned); err != nil {
				t.Fatal(err)
			}
			if want := h.tb.Checksum(t, tbl).RowCount; scanned.RowCount != want {
				t.Errorf("iceberg-go reads %d rows, icectl %d", scanned.RowCount, want)
			}

			want := wantFields(partstats.Schema(res.Type, fv).Fields)
			if g, w := mustJSON(t, got.Fields), mustJSON(t, want); g != w {
				t.Errorf("columns\n%s\nwant\n%s", g, w)
			}
			if len(got.Rows) != len(res.Rows) {
				t.Fatalf("pyarrow reads %d rows, icectl wrote %d", len(got.Rows), len(res.Rows))
			}
			for i, r := range res.Rows {
				if g, w := normJSON(t, got.Rows[i]), mustJSON(t, pyRow(res.Type, r, fv)); g != w {
					t.Errorf("row %d: pyarrow reads\n%s\nicectl wrote\n%s", i, g, w)
				}
			}
		})
	}
}

func pyRow(ut *spec.StructType, r partstats.Row, fv int) map[string]any {
	part := map[string]any{}
	for i, f := range ut.Fields {
		part[f.Name] = r.Partition[i]
	}
	m := map[string]any{"partition": part, "spec_id": r.SpecID, "data_record_count": r.DataRecordCount,
		"data_file_count": r.DataFileCount, "total_data_file_size_in_bytes": r.TotalDataFileSizeInBytes,
		"position_delete_record_count": r.PositionDeleteRecordCount, "position_delete_file_count": r.PositionDeleteFileCount,
		"equality_delete_record_count": r.EqualityDeleteRecordCount, "equality_delete_file_count": r.EqualityDeleteFileCount,
		"total_record_count": r.TotalRecordCount, "last_updated_at": r.LastUpdatedAt, "last_updated_snapshot_id": r.LastUpdatedSnapshotID}
	if fv >= 3 {
		m["dv_count"] = r.DVCount
	}
	return m
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return normJSON(t, b)
}

// normJSON re-encodes a JSON document with sorted keys.
func normJSON(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
