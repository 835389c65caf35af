package where

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SyntaxError is a parse error at a byte offset of the expression.
type SyntaxError struct {
	Pos int // byte offset, 0-based
	Msg string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("at offset %d: %s", e.Pos, e.Msg) }

type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokQuotedIdent
	tokNumber
	tokString
	tokOp // = != <> < <= > >=
	tokLParen
	tokRParen
	tokComma
)

type token struct {
	kind tokKind
	text string // identifier name, literal text or operator
	pos  int
}

func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "end of expression"
	case tokString:
		return fmt.Sprintf("string '%s'", t.text)
	case tokQuotedIdent:
		return fmt.Sprintf("identifier %q", t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

func lex(s string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			return nil, &SyntaxError{i, "invalid UTF-8"}
		case unicode.IsSpace(r):
			i += w
		case r == '(':
			toks = append(toks, token{tokLParen, "(", i})
			i++
		case r == ')':
			toks = append(toks, token{tokRParen, ")", i})
			i++
		case r == ',':
			toks = append(toks, token{tokComma, ",", i})
			i++
		case r == '=':
			toks = append(toks, token{tokOp, "=", i})
			i++
		case r == '!':
			if strings.HasPrefix(s[i:], "!=") {
				toks = append(toks, token{tokOp, "!=", i})
				i += 2
			} else {
				return nil, &SyntaxError{i, "unexpected '!' (did you mean '!='?)"}
			}
		case r == '<':
			switch {
			case strings.HasPrefix(s[i:], "<="):
				toks = append(toks, token{tokOp, "<=", i})
				i += 2
			case strings.HasPrefix(s[i:], "<>"):
				toks = append(toks, token{tokOp, "!=", i})
				i += 2
			default:
				toks = append(toks, token{tokOp, "<", i})
				i++
			}
		case r == '>':
			if strings.HasPrefix(s[i:], ">=") {
				toks = append(toks, token{tokOp, ">=", i})
				i += 2
			} else {
				toks = append(toks, token{tokOp, ">", i})
				i++
			}
		case r == '\'':
			text, n, err := lexQuoted(s, i, '\'')
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{tokString, text, i})
			i += n
		case r == '"' || r == '`':
			text, n, err := lexQuoted(s, i, byte(r))
			if err != nil {
				return nil, err
			}
			if text == "" {
				return nil, &SyntaxError{i, "empty quoted identifier"}
			}
			toks = append(toks, token{tokQuotedIdent, text, i})
			i += n
		case r == '-' || r == '+' || r == '.' || (r >= '0' && r <= '9'):
			j := i
			if r == '-' || r == '+' {
				j++
			}
			digits, dots := 0, 0
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
				if s[j] == '.' {
					dots++
				} else {
					digits++
				}
				j++
			}
			if digits == 0 || dots > 1 {
				return nil, &SyntaxError{i, fmt.Sprintf("malformed number %q", s[i:max(j, i+1)])}
			}
			if j < len(s) && isIdentRune(rune(s[j])) {
				return nil, &SyntaxError{j, fmt.Sprintf("unexpected %q after number", s[j:j+1])}
			}
			toks = append(toks, token{tokNumber, s[i:j], i})
			i = j
		case isIdentStart(r):
			j := i
			for j < len(s) {
				r2, w2 := utf8.DecodeRuneInString(s[j:])
				if !isIdentRune(r2) && r2 != '.' {
					break
				}
				j += w2
			}
			toks = append(toks, token{tokIdent, s[i:j], i})
			i = j
		default:
			return nil, &SyntaxError{i, fmt.Sprintf("unexpected character %q", r)}
		}
	}
	toks = append(toks, token{tokEOF, "", len(s)})
	return toks, nil
}

// lexQuoted reads a quoted token starting at s[i] == q, where a doubled
// quote stands for one; it returns the text and the bytes consumed.
func lexQuoted(s string, i int, q byte) (string, int, error) {
	var b strings.Builder
	j := i + 1
	for {
		if j >= len(s) {
			return "", 0, &SyntaxError{i, "unterminated quote"}
		}
		if s[j] == q {
			if j+1 < len(s) && s[j+1] == q {
				b.WriteByte(q)
				j += 2
				continue
			}
			return b.String(), j + 1 - i, nil
		}
		b.WriteByte(s[j])
		j++
	}
}

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }
func isIdentRune(r rune) bool  { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
