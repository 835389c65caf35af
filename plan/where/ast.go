package where

import (
	"fmt"
	"strings"
)

// Expr is a parsed, unbound expression.
type Expr interface {
	String() string
	isExpr()
}

// And, Or and Not combine expressions.
type (
	And struct{ L, R Expr }
	Or  struct{ L, R Expr }
	Not struct{ X Expr }
)

// Op is a comparison operator.
type Op int

const (
	OpEq Op = iota
	OpNotEq
	OpLt
	OpLtEq
	OpGt
	OpGtEq
	OpIn
	OpNotIn
	OpIsNull
	OpNotNull
)

func (o Op) String() string {
	return [...]string{"=", "!=", "<", "<=", ">", ">=", "IN", "NOT IN", "IS NULL", "IS NOT NULL"}[o]
}

// negate returns the operator of NOT (x op v).
func (o Op) negate() Op {
	return [...]Op{OpNotEq, OpEq, OpGtEq, OpGt, OpLtEq, OpLt, OpNotIn, OpIn, OpNotNull, OpIsNull}[o]
}

// LitKind says how a literal was written.
type LitKind int

const (
	LitInt LitKind = iota
	LitDecimal
	LitString
	LitDate
	LitTimestamp
	LitBool
)

// Literal is a literal as written; it gets a type when bound to a column.
type Literal struct {
	Kind LitKind
	Text string
	Pos  int
}

func (l Literal) String() string {
	switch l.Kind {
	case LitString:
		return "'" + strings.ReplaceAll(l.Text, "'", "''") + "'"
	case LitDate:
		return "DATE '" + strings.ReplaceAll(l.Text, "'", "''") + "'"
	case LitTimestamp:
		return "TIMESTAMP '" + strings.ReplaceAll(l.Text, "'", "''") + "'"
	}
	return l.Text
}

// Pred is a predicate on one column. Values holds one literal for
// comparisons, the list for IN, and none for IS [NOT] NULL.
type Pred struct {
	Column string
	Op     Op
	Values []Literal
	Pos    int // offset of the column name
}

func (*And) isExpr()  {}
func (*Or) isExpr()   {}
func (*Not) isExpr()  {}
func (*Pred) isExpr() {}

func (e *And) String() string { return "(" + e.L.String() + " AND " + e.R.String() + ")" }
func (e *Or) String() string  { return "(" + e.L.String() + " OR " + e.R.String() + ")" }
func (e *Not) String() string { return "NOT " + e.X.String() }
func (p *Pred) String() string {
	switch p.Op {
	case OpIsNull, OpNotNull:
		return fmt.Sprintf("%s %s", quoteIdent(p.Column), p.Op)
	case OpIn, OpNotIn:
		parts := make([]string, len(p.Values))
		for i, v := range p.Values {
			parts[i] = v.String()
		}
		return fmt.Sprintf("%s %s (%s)", quoteIdent(p.Column), p.Op, strings.Join(parts, ", "))
	}
	return fmt.Sprintf("%s %s %s", quoteIdent(p.Column), p.Op, p.Values[0])
}

func quoteIdent(s string) string {
	for i, r := range s {
		if !(isIdentRune(r) || r == '.') || (i == 0 && !isIdentStart(r)) {
			return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
		}
	}
	if _, kw := keywords[strings.ToUpper(s)]; kw {
		return `"` + s + `"`
	}
	return s
}

var keywords = map[string]struct{}{
	"AND": {}, "OR": {}, "NOT": {}, "IN": {}, "IS": {}, "NULL": {},
	"DATE": {}, "TIMESTAMP": {}, "TRUE": {}, "FALSE": {},
}
