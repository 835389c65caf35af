package where

import (
	"fmt"
	"strings"
)

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 200

// Parse parses a where expression. Errors are *SyntaxError with the byte
// offset of the problem.
func Parse(s string) (Expr, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	if p.peek().kind == tokEOF {
		return nil, &SyntaxError{0, "empty expression"}
	}
	e, err := p.parseOr(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, &SyntaxError{t.pos, fmt.Sprintf("unexpected %s: expected AND, OR or end of expression", t.describe())}
	}
	return e, nil
}

type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func (p *parser) isKeyword(t token, kw string) bool {
	return t.kind == tokIdent && strings.EqualFold(t.text, kw)
}

func (p *parser) acceptKeyword(kw string) bool {
	if p.isKeyword(p.peek(), kw) {
		p.i++
		return true
	}
	return false
}

func (p *parser) parseOr(depth int) (Expr, error) {
	l, err := p.parseAnd(depth)
	if err != nil {
		return nil, err
	}
	for p.acceptKeyword("OR") {
		r, err := p.parseAnd(depth)
		if err != nil {
			return nil, err
		}
		l = &Or{l, r}
	}
	return l, nil
}

func (p *parser) parseAnd(depth int) (Expr, error) {
	l, err := p.parseUnary(depth)
	if err != nil {
		return nil, err
	}
	for p.acceptKeyword("AND") {
		r, err := p.parseUnary(depth)
		if err != nil {
			return nil, err
		}
		l = &And{l, r}
	}
	return l, nil
}

func (p *parser) parseUnary(depth int) (Expr, error) {
	if depth > maxDepth {
		return nil, &SyntaxError{p.peek().pos, "expression nested too deeply"}
	}
	t := p.peek()
	if p.isKeyword(t, "NOT") {
		p.next()
		x, err := p.parseUnary(depth + 1)
		if err != nil {
			return nil, err
		}
		return &Not{x}, nil
	}
	if t.kind == tokLParen {
		p.next()
		e, err := p.parseOr(depth + 1)
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != tokRParen {
			return nil, &SyntaxError{c.pos, fmt.Sprintf("expected ')' to close '(' at offset %d, found %s", t.pos, c.describe())}
		}
		return e, nil
	}
	return p.parsePred()
}

func (p *parser) parsePred() (Expr, error) {
	col := p.next()
	switch {
	case col.kind == tokQuotedIdent:
	case col.kind == tokIdent:
		if _, kw := keywords[strings.ToUpper(col.text)]; kw {
			return nil, &SyntaxError{col.pos, fmt.Sprintf("expected a column name, found keyword %s (quote it with \"...\" if it is a column)", strings.ToUpper(col.text))}
		}
	case col.kind == tokNumber || col.kind == tokString:
		return nil, &SyntaxError{col.pos, fmt.Sprintf("expected a column name, found %s: write the column first, as in col > 5", col.describe())}
	default:
		return nil, &SyntaxError{col.pos, fmt.Sprintf("expected a column name, found %s", col.describe())}
	}
	pred := &Pred{Column: col.text, Pos: col.pos}
	t := p.next()
	switch {
	case t.kind == tokOp:
		pred.Op = map[string]Op{"=": OpEq, "!=": OpNotEq, "<": OpLt, "<=": OpLtEq, ">": OpGt, ">=": OpGtEq}[t.text]
		lit, err := p.parseLiteral()
		if err != nil {
			return nil, err
		}
		pred.Values = []Literal{lit}
	case p.isKeyword(t, "IS"):
		pred.Op = OpIsNull
		if p.acceptKeyword("NOT") {
			pred.Op = OpNotNull
		}
		if n := p.next(); !p.isKeyword(n, "NULL") {
			return nil, &SyntaxError{n.pos, fmt.Sprintf("expected NULL after IS, found %s", n.describe())}
		}
	case p.isKeyword(t, "IN"):
		pred.Op = OpIn
		return p.parseInList(pred)
	case p.isKeyword(t, "NOT"):
		if n := p.next(); !p.isKeyword(n, "IN") {
			return nil, &SyntaxError{n.pos, fmt.Sprintf("expected IN after %s NOT, found %s", col.text, n.describe())}
		}
		pred.Op = OpNotIn
		return p.parseInList(pred)
	default:
		return nil, &SyntaxError{t.pos, fmt.Sprintf("expected an operator (=, !=, <, <=, >, >=, IN, IS) after %s, found %s", col.text, t.describe())}
	}
	return pred, nil
}

func (p *parser) parseInList(pred *Pred) (Expr, error) {
	if t := p.next(); t.kind != tokLParen {
		return nil, &SyntaxError{t.pos, fmt.Sprintf("expected '(' after %s, found %s", pred.Op, t.describe())}
	}
	for {
		lit, err := p.parseLiteral()
		if err != nil {
			return nil, err
		}
		pred.Values = append(pred.Values, lit)
		t := p.next()
		if t.kind == tokRParen {
			return pred, nil
		}
		if t.kind != tokComma {
			return nil, &SyntaxError{t.pos, fmt.Sprintf("expected ',' or ')' in the IN list, found %s", t.describe())}
		}
	}
}

func (p *parser) parseLiteral() (Literal, error) {
	t := p.next()
	switch {
	case t.kind == tokNumber:
		if strings.Contains(t.text, ".") {
			return Literal{LitDecimal, t.text, t.pos}, nil
		}
		return Literal{LitInt, t.text, t.pos}, nil
	case t.kind == tokString:
		return Literal{LitString, t.text, t.pos}, nil
	case p.isKeyword(t, "TRUE"), p.isKeyword(t, "FALSE"):
		return Literal{LitBool, strings.ToLower(t.text), t.pos}, nil
	case p.isKeyword(t, "DATE"), p.isKeyword(t, "TIMESTAMP"):
		s := p.next()
		if s.kind != tokString {
			return Literal{}, &SyntaxError{s.pos, fmt.Sprintf("expected a quoted string after %s, found %s", strings.ToUpper(t.text), s.describe())}
		}
		kind := LitDate
		if p.isKeyword(t, "TIMESTAMP") {
			kind = LitTimestamp
		}
		return Literal{kind, s.text, t.pos}, nil
	case p.isKeyword(t, "NULL"):
		return Literal{}, &SyntaxError{t.pos, "comparison with NULL is never true: use IS NULL or IS NOT NULL"}
	}
	return Literal{}, &SyntaxError{t.pos, fmt.Sprintf("expected a literal (number, 'string', TRUE, FALSE, DATE '...', TIMESTAMP '...'), found %s", t.describe())}
}
