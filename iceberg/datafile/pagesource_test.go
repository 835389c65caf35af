package datafile

import (
	"math/rand/v2"
	"testing"
)

// TestParsePageHeaderRejectsTruncation: every page header of a file parses
// to the page arrow-go's reader gives, and each of its prefixes is an
// error, as is garbage (never a panic or a page read past its end).
func TestParsePageHeaderRejectsTruncation(t *testing.T) {
	s := transcodeSchema()
	b := genBatch(t, s, 5000, 4)
	data, _ := writeParquet(t, s, map[string]string{PropPageSizeBytes: "1024"}, b)
	b.Release()
	pf := openTc(t, data)
	in := &tcInput{TranscodeInput: TranscodeInput{File: pf, Data: data}}
	headers := 0
	for j := range pf.MetaData().Schema.NumColumns() {
		var m memPages
		if ok, err := m.open(in, 0, j); !ok || err != nil {
			t.Fatalf("column %d: not readable in place: %v", j, err)
		}
		chunk := m.rest
		pr, err := pf.RowGroup(0).GetColumnPageReader(j)
		if err != nil {
			t.Fatal(err)
		}
		for pr.Next() {
			h, n, err := parsePageHeader(chunk)
			if err != nil {
				t.Fatalf("column %d, header %d: %v", j, headers, err)
			}
			p := pr.Page()
			if h.numValues != p.NumValues() || h.encoding != int32(p.Encoding()) || int32(p.Type()) != h.typ {
				t.Fatalf("column %d: header %+v, arrow-go page %s of %d values, %s", j, h, p.Type(), p.NumValues(), p.Encoding())
			}
			for k := range n {
				if _, _, err := parsePageHeader(chunk[:k]); err == nil {
					t.Fatalf("column %d: header cut to %d of %d bytes parsed", j, k, n)
				}
			}
			chunk = chunk[n+int(h.compressed):]
			headers++
		}
		if len(chunk) != 0 {
			t.Fatalf("column %d: %d bytes after the last page", j, len(chunk))
		}
	}
	if headers < 2*pf.MetaData().Schema.NumColumns() {
		t.Fatalf("%d page headers: the test wants several per column", headers)
	}
	r := rand.New(rand.NewPCG(1, 1))
	junk := make([]byte, 64)
	for range 10000 {
		for i := range junk {
			junk[i] = byte(r.Uint32())
		}
		if _, n, err := parsePageHeader(junk[:r.IntN(len(junk))]); err == nil && n > len(junk) {
			t.Fatalf("header of %d bytes in %d", n, len(junk))
		}
	}
}
