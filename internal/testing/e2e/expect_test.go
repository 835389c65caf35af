package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// live is a row expected to survive, with the lineage a v3 reader must
// give it (nil when not asked for).
type live struct {
	row
	rowID, seq *int64
}

// key renders a row for comparison, independently of the checksum
// encoding: timestamps as microseconds, floats in Go's %v.
func key(id int64, name *string, amount *float64, tsMicros int64, region string, rowID, seq *int64) string {
	str := func(p *string) string {
		if p == nil {
			return "<null>"
		}
		return fmt.Sprintf("%q", *p)
	}
	num := func(p *int64) string {
		if p == nil {
			return "<null>"
		}
		return fmt.Sprint(*p)
	}
	am := "<null>"
	if amount != nil {
		am = fmt.Sprint(*amount)
	}
	return fmt.Sprintf("id=%d name=%s amount=%s ts=%d region=%s row_id=%s seq=%s",
		id, str(name), am, tsMicros, region, num(rowID), num(seq))
}

// decodeRows decodes rows in iceberg-read's JSON (columns absent from a
// table decode as zero values).
func decodeRows(t *testing.T, raws []json.RawMessage) []live {
	t.Helper()
	out := make([]live, 0, len(raws))
	for _, raw := range raws {
		var r struct {
			ID     int64    `json:"id"`
			Name   *string  `json:"name"`
			Amount *float64 `json:"amount"`
			TS     string   `json:"ts"`
			Region string   `json:"region"`
			RowID  *int64   `json:"_row_id"`
			Seq    *int64   `json:"_last_updated_sequence_number"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("iceberg-go row %s: %v", raw, err)
		}
		ts, err := time.Parse(time.RFC3339Nano, strings.Replace(r.TS, " ", "T", 1))
		if err != nil {
			t.Fatalf("iceberg-go row %s: ts: %v", raw, err)
		}
		out = append(out, live{row: row{id: r.ID, name: r.Name, amount: r.Amount, ts: ts, region: r.Region}, rowID: r.RowID, seq: r.Seq})
	}
	return out
}

func (l live) key() string {
	return key(l.id, l.name, l.amount, l.ts.UnixMicro(), l.region, l.rowID, l.seq)
}

// checkExpected compares iceberg-go's rows, as a multiset, with the rows
// the test wrote minus the ones it deleted.
func checkExpected(t *testing.T, goRows []json.RawMessage, want []live) {
	t.Helper()
	var got, exp []string
	for _, l := range decodeRows(t, goRows) {
		got = append(got, l.key())
	}
	for _, l := range want {
		exp = append(exp, l.key())
	}
	slices.Sort(got)
	slices.Sort(exp)
	if slices.Equal(got, exp) {
		return
	}
	t.Errorf("iceberg-go returns %d rows, the test wrote %d surviving ones", len(got), len(exp))
	for _, g := range got {
		if !slices.Contains(exp, g) {
			t.Errorf("unexpected row: %s", g)
		}
	}
	for _, e := range exp {
		if !slices.Contains(got, e) {
			t.Errorf("missing row: %s", e)
		}
	}
}

// model tracks what the test wrote: each data file's rows in file order
// and which positions deletes removed.
type model struct {
	files []modelFile
}

type modelFile struct {
	path       string
	rows       []row
	seq        int64
	firstRowID int64
	deleted    map[int]bool
}

func (m *model) add(path string, rows []row, seq, firstRowID int64) {
	m.files = append(m.files, modelFile{path: path, rows: rows, seq: seq, firstRowID: firstRowID, deleted: map[int]bool{}})
}

func (m *model) file(t *testing.T, path string) *modelFile {
	t.Helper()
	for i := range m.files {
		if m.files[i].path == path {
			return &m.files[i]
		}
	}
	t.Fatalf("model has no data file %s", path)
	return nil
}

// deletePositions marks positions of a data file deleted.
func (m *model) deletePositions(t *testing.T, path string, pos ...int64) {
	f := m.file(t, path)
	for _, p := range pos {
		f.deleted[int(p)] = true
	}
}

// deleteEqual marks deleted the rows of region with one of ids in files
// whose data sequence number is below seq (an equality delete's rule).
func (m *model) deleteEqual(region string, seq int64, ids ...int64) {
	for i := range m.files {
		f := &m.files[i]
		if f.seq >= seq {
			continue
		}
		for p, r := range f.rows {
			if r.region == region && slices.Contains(ids, r.id) {
				f.deleted[p] = true
			}
		}
	}
}

// live returns the surviving rows; with lineage, each with its row id
// (the file's first row id plus its position) and sequence number.
func (m *model) live(lineage bool) []live {
	var out []live
	for _, f := range m.files {
		for p, r := range f.rows {
			if f.deleted[p] {
				continue
			}
			l := live{row: r}
			if lineage {
				id, seq := f.firstRowID+int64(p), f.seq
				l.rowID, l.seq = &id, &seq
			}
			out = append(out, l)
		}
	}
	return out
}
