package cli

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// escapeText makes s safe to print as one cell or line of text output.
// Table properties, file paths and messages come from files anyone with
// write access to a table can craft: printed raw, an ESC sequence in them
// retitles the terminal or clears the screen, and a newline forges a line
// of output. Control characters (C0, DEL, C1), line and paragraph
// separators, bidirectional overrides and invalid UTF-8 come out as Go
// escapes (\n, \x1b, \u202e, \xff), as --output json escapes them; every
// other character is kept, backslashes included.
func escapeText(s string) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if mustEscape(r, size) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case !mustEscape(r, size):
			b.WriteString(s[i : i+size])
		case r == utf8.RuneError:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

// mustEscape reports whether the rune r, size bytes long, is one
// escapeText escapes.
func mustEscape(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1: // invalid UTF-8
		return true
	case r < 0x20, r == 0x7f, 0x80 <= r && r <= 0x9f:
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separators
		return true
	case 0x202a <= r && r <= 0x202e, 0x2066 <= r && r <= 0x2069: // bidi embeddings, overrides, isolates
		return true
	}
	return false
}

// printf is fmt.Fprintf for text output: every string, error and
// fmt.Stringer argument is printed through escapeText, so only the format
// itself can lay out lines.
func printf(w io.Writer, format string, args ...any) (int, error) {
	for i, a := range args {
		switch v := a.(type) {
		case string:
			args[i] = escapeText(v)
		case error:
			args[i] = escapeText(v.Error())
		case fmt.Stringer:
			args[i] = escapeText(v.String())
		}
	}
	return fmt.Fprintf(w, format, args...)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/:._-+=@,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellJoin quotes each argument for a POSIX shell when it needs it.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = shellQuote(a)
	}
	return strings.Join(out, " ")
}
