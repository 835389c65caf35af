package datafile

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/spec"
)

// TestPromotedDateOutOfRange: a date promoted to timestamp_ns reads as
// its midnight when that fits in nanoseconds since 1970 (1677-09-22 to
// 2262-04-11); a date outside fails the read, as the spec asks of values
// outside the promoted type's range, instead of wrapping into another
// timestamp. A date promoted to timestamp (microseconds) fits.
func TestPromotedDateOutOfRange(t *testing.T) {
	old := &spec.Schema{Fields: []spec.NestedField{{ID: 1, Name: "d", Type: spec.DateType{}}}}
	for _, c := range []struct {
		date string
		typ  spec.Type
		want string // row as rowsJSON renders it, or the error
	}{
		{"2262-04-11", spec.TimestampNsType{}, `["2262-04-11T00:00:00"]`},
		{"1677-09-22", spec.TimestampNsType{}, `["1677-09-22T00:00:00"]`},
		{"2262-04-12", spec.TimestampNsType{}, "date 2262-04-12 is out of the range of timestamp[ns]"},
		{"1677-09-21", spec.TimestampNsType{}, "date 1677-09-21 is out of the range of timestamp[ns]"},
		{"2300-01-01", spec.TimestampType{}, `["2300-01-01T00:00:00"]`},
	} {
		rec := recordFromJSON(t, old, `[{"d":"`+c.date+`"}]`)
		data, _ := writeParquet(t, old, nil, rec)
		rec.Release()
		s := &spec.Schema{Fields: []spec.NestedField{{ID: 1, Name: "d", Type: c.typ}}}
		rd, err := OpenReader(context.Background(), bytes.NewReader(data), int64(len(data)), ReadOptions{Schema: s})
		if err != nil {
			t.Fatal(err)
		}
		got, err := rd.Next()
		rd.Close()
		switch {
		case err != nil:
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s as %s: %v, want %s", c.date, c.typ, err, c.want)
			}
		default:
			if rows := rowsJSON(t, got); len(rows) != 1 || rows[0] != c.want {
				t.Errorf("%s as %s: read %v, want %s", c.date, c.typ, rows, c.want)
			}
			got.Release()
		}
	}
}
