package cli

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// writeJSON writes v as one indented JSON document. Integers are encoded from
// their Go integer types, never through float64, so int64 ids keep every
// digit.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// humanBytes renders a size for people, keeping the exact byte count.
func humanBytes(n int64) string {
	if n < 1024 && n > -1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v := float64(n) / 1024
	u := 0
	for (v >= 1024 || v <= -1024) && u < len(units)-1 {
		v /= 1024
		u++
	}
	return fmt.Sprintf("%.1f %s (%d bytes)", v, units[u], n)
}

// rfc3339Millis renders epoch milliseconds as an RFC 3339 UTC timestamp.
func rfc3339Millis(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// millisText renders epoch milliseconds for text output: the timestamp and
// the stored number.
func millisText(ms int64) string {
	return fmt.Sprintf("%s (%d)", rfc3339Millis(ms), ms)
}

// table aligns the rows of one section of text output. Sections are flushed
// one at a time, so long listings stream.
type table struct {
	w   io.Writer
	buf bytes.Buffer
	tw  *tabwriter.Writer
}

func newTable(w io.Writer) *table {
	t := &table{w: w}
	t.tw = tabwriter.NewWriter(&t.buf, 0, 0, 2, ' ', 0)
	return t
}

// row writes one line of tab-separated cells, each through escapeText:
// a tab or newline in a value must not break the columns or the line.
func (t *table) row(cells ...any) {
	for i, c := range cells {
		if i > 0 {
			fmt.Fprint(t.tw, "\t")
		}
		fmt.Fprint(t.tw, escapeText(fmt.Sprint(c)))
	}
	fmt.Fprint(t.tw, "\n")
}

// flush writes the section, without the padding tabwriter leaves after a
// last empty cell.
func (t *table) flush() error {
	if err := t.tw.Flush(); err != nil {
		return err
	}
	lines := strings.SplitAfter(t.buf.String(), "\n")
	t.buf.Reset()
	var out strings.Builder
	for _, l := range lines {
		if strings.HasSuffix(l, "\n") {
			out.WriteString(strings.TrimRight(l[:len(l)-1], " "))
			out.WriteString("\n")
		} else {
			out.WriteString(l)
		}
	}
	_, err := io.WriteString(t.w, out.String())
	return err
}

// sortedKeys returns the keys of m in order, for stable output.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// optInt64 renders an optional number for text output.
func optInt64(p *int64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

// hexBytes renders raw bytes for text output.
func hexBytes(b []byte) string {
	if b == nil {
		return "-"
	}
	return "0x" + strings.ToUpper(hex.EncodeToString(b))
}

// joinInt64s renders numbers as a comma-separated list.
func joinInt64s(v []int64) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}
