package datafile

import (
	"math/rand/v2"
	"testing"
)

// TestWriterDictionaryDecision: the Writer writes the columns whose first
// batch is nearly distinct (a unique long, random doubles) PLAIN from the
// start and keeps dictionaries for the others; a first batch too small to
// tell keeps them all; the rows read back are those arrow-go writes.
func TestWriterDictionaryDecision(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		rows int
		want map[string]bool
	}{
		{8000, map[string]bool{"id": false, "rnd": false, "cat": true, "code": true}},
		{500, map[string]bool{"id": true, "rnd": true, "cat": true, "code": true}},
	} {
		b := dictBatch(t, tc.rows, 0, r)
		data, _ := writeParquet(t, dictSchema, nil, b)
		enc := dictionaryEncoded(t, data)
		for c, dict := range tc.want {
			if enc[c] != dict {
				t.Errorf("%d rows: column %s: dictionary %v, want %v", tc.rows, c, enc[c], dict)
			}
		}
		compareRows(t, storedRowKeys(t, data), storedRowKeys(t, writePqarrow(t, b)))
		b.Release()
	}
}
