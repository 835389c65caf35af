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

	"github.com/icectl/icectl/internal/shared/bytesize"
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

// jsonLine encodes v on one line, escaped as writeJSON escapes it, for
// documents streamed element by element through a jsonIndenter. v is a
// view of plain fields, which always encodes.
func jsonLine(v any) string {
	s, _ := marshalLine(v)
	return s
}

// marshalLine is jsonLine for a value that may fail to encode.
func marshalLine(v any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// optSize renders an optional size as every size is shown (bytesize.Format),
// or "-" when it is absent.
func optSize(p *int64) string {
	if p == nil {
		return "-"
	}
	return bytesize.Format(*p)
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

// jsonIndenter re-indents a JSON document streamed through it the way
// writeJSON indents one (two spaces, "[]" and "{}" kept on one line, a
// newline after the document), so that commands which stream a document
// too large to hold (a plan, a listing of orphans, a manifest's entries)
// print it as every other command prints its result. Whitespace between
// tokens is dropped and replaced.
type jsonIndenter struct {
	w        io.Writer
	buf      []byte
	depth    int
	inString bool
	escaped  bool
	opened   bool // a '{' or '[' was the last token: its line break waits for the next one
}

func newJSONIndenter(w io.Writer) *jsonIndenter { return &jsonIndenter{w: w} }

func (j *jsonIndenter) Write(p []byte) (int, error) {
	j.buf = j.buf[:0]
	for _, c := range p {
		if j.inString {
			j.buf = append(j.buf, c)
			switch {
			case j.escaped:
				j.escaped = false
			case c == '\\':
				j.escaped = true
			case c == '"':
				j.inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		if j.opened {
			j.opened = false
			if c == '}' || c == ']' {
				j.depth--
				j.buf = append(j.buf, c)
				j.endValue()
				continue
			}
			j.newline()
		}
		switch c {
		case '{', '[':
			j.buf = append(j.buf, c)
			j.depth++
			j.opened = true
		case '}', ']':
			j.depth--
			j.newline()
			j.buf = append(j.buf, c)
			j.endValue()
		case ',':
			j.buf = append(j.buf, c)
			j.newline()
		case ':':
			j.buf = append(j.buf, ':', ' ')
		case '"':
			j.buf = append(j.buf, c)
			j.inString = true
		default:
			j.buf = append(j.buf, c)
		}
	}
	if _, err := j.w.Write(j.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (j *jsonIndenter) newline() {
	j.buf = append(j.buf, '\n')
	for range j.depth {
		j.buf = append(j.buf, ' ', ' ')
	}
}

// endValue ends the document with a newline when the closing bracket was
// its last.
func (j *jsonIndenter) endValue() {
	if j.depth == 0 {
		j.buf = append(j.buf, '\n')
	}
}

// Values of the global --output flag.
const (
	outputText = "text"
	outputJSON = "json"
)

// words turns a JSON status label (would_delete) into the words of a
// text report (would delete).
func words(label string) string { return strings.ReplaceAll(label, "_", " ") }
