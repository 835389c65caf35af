package where

import (
	"errors"
	"fmt"

	"github.com/icectl/icectl/iceberg/spec"
)

// Filter is a where expression bound to a table schema, in negation normal
// form (NOT pushed down to the predicates).
type Filter struct {
	text string
	root node
}

type node interface{ isNode() }

type andNode struct{ l, r node }
type orNode struct{ l, r node }

// leaf is a bound predicate on one source column.
type leaf struct {
	field  spec.NestedField
	op     Op
	values []any     // converted to the column's type
	lits   []Literal // as written, for messages
	pos    int
}

func (*andNode) isNode() {}
func (*orNode) isNode()  {}
func (*leaf) isNode()    {}

func (l *leaf) String() string {
	return (&Pred{Column: l.field.Name, Op: l.op, Values: l.lits}).String()
}

// Compile parses text and binds it to schema: columns must exist and be
// primitive, and literals must convert to the column's type.
func Compile(text string, schema *spec.Schema) (*Filter, error) {
	e, err := Parse(text)
	if err != nil {
		return nil, err
	}
	root, err := bind(e, schema, false)
	if err != nil {
		return nil, err
	}
	return &Filter{text: text, root: root}, nil
}

// String returns the expression as written.
func (f *Filter) String() string { return f.text }

func bind(e Expr, schema *spec.Schema, neg bool) (node, error) {
	switch e := e.(type) {
	case *Not:
		return bind(e.X, schema, !neg)
	case *And, *Or:
		var l, r Expr
		isAnd := false
		if a, ok := e.(*And); ok {
			l, r, isAnd = a.L, a.R, true
		} else {
			o := e.(*Or)
			l, r = o.L, o.R
		}
		bl, err := bind(l, schema, neg)
		if err != nil {
			return nil, err
		}
		br, err := bind(r, schema, neg)
		if err != nil {
			return nil, err
		}
		if isAnd != neg { // De Morgan
			return &andNode{bl, br}, nil
		}
		return &orNode{bl, br}, nil
	case *Pred:
		f, ok := schema.FindFieldByName(e.Column)
		if !ok {
			return nil, &SyntaxError{e.Pos, fmt.Sprintf("no column %q in the table schema", e.Column)}
		}
		if _, ok := f.Type.(spec.PrimitiveType); !ok {
			return nil, &SyntaxError{e.Pos, fmt.Sprintf("column %q is a %s, not a primitive column", e.Column, f.Type)}
		}
		lf := &leaf{field: f, op: e.Op, lits: e.Values, pos: e.Pos}
		if neg {
			lf.op = lf.op.negate()
		}
		for _, lit := range e.Values {
			v, err := convert(lit, f.Type)
			if err != nil {
				return nil, err
			}
			lf.values = append(lf.values, v)
		}
		return lf, nil
	}
	return nil, fmt.Errorf("unexpected expression %T", e)
}

// PartitionFilter is a Filter projected onto one partition spec: Match
// says whether a partition may hold matching rows, MatchFile whether a data
// file of the spec may, by its partition and then its column metrics.
type PartitionFilter struct {
	specID int
	names  []string
	root   pnode
	filter *Filter
	// identity are the source columns of the spec's identity fields,
	// which MatchFile leaves to the partition match (MatchMetricsIn).
	identity map[int]bool
}

type pnode interface{ isPNode() }
type pand struct{ l, r pnode }
type por struct{ l, r pnode }
type pleaf struct {
	index  int
	op     Op
	values []any
}

// ptrue is a predicate the spec's partitions say nothing about: every
// partition may hold matching rows (Java's alwaysTrue projection).
type ptrue struct{}

func (*pand) isPNode()  {}
func (*por) isPNode()   {}
func (*pleaf) isPNode() {}
func (ptrue) isPNode()  {}

// ForSpec projects the filter onto ps's partition tuples, inclusively: a
// predicate is projected through every partition field derived from its
// column, and one no field can project (a column that is not partitioned,
// a range on a bucket, != through a time or truncate transform, a void or
// unknown transform) keeps every partition, leaving the choice to the
// files' column metrics. schema gives each partition field's source type.
func (f *Filter) ForSpec(ps *spec.PartitionSpec, schema *spec.Schema) (*PartitionFilter, error) {
	pf := &PartitionFilter{specID: ps.ID, filter: f, identity: identitySources(ps)}
	for _, fld := range ps.Fields {
		pf.names = append(pf.names, fld.Name)
	}
	root, err := project(f.root, ps, schema)
	if err != nil {
		return nil, err
	}
	pf.root = root
	return pf, nil
}

func project(n node, ps *spec.PartitionSpec, schema *spec.Schema) (pnode, error) {
	switch n := n.(type) {
	case *andNode:
		l, err := project(n.l, ps, schema)
		if err != nil {
			return nil, err
		}
		r, err := project(n.r, ps, schema)
		if err != nil {
			return nil, err
		}
		return simplifyAnd(l, r), nil
	case *orNode:
		l, err := project(n.l, ps, schema)
		if err != nil {
			return nil, err
		}
		r, err := project(n.r, ps, schema)
		if err != nil {
			return nil, err
		}
		if _, ok := l.(ptrue); ok {
			return l, nil
		}
		if _, ok := r.(ptrue); ok {
			return r, nil
		}
		return &por{l, r}, nil
	case *leaf:
		return projectLeaf(n, ps)
	}
	return nil, fmt.Errorf("unexpected node %T", n)
}

func simplifyAnd(l, r pnode) pnode {
	if _, ok := l.(ptrue); ok {
		return r
	}
	if _, ok := r.(ptrue); ok {
		return l
	}
	return &pand{l, r}
}

// projectLeaf is Java's inclusive projection of one predicate: the AND of
// what every partition field on the column can say about it, and true
// when none can say anything.
func projectLeaf(l *leaf, ps *spec.PartitionSpec) (pnode, error) {
	var out pnode = ptrue{}
	for i, fld := range ps.Fields {
		if fld.SourceID != l.field.ID || len(fld.SourceIDs) > 1 {
			continue
		}
		p, err := projectField(l, fld, i)
		if errors.Is(err, errCannotProject) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("partition field %q (%s) of spec %d: %w", fld.Name, fld.Transform, ps.ID, err)
		}
		out = simplifyAnd(out, p)
	}
	return out, nil
}

// errCannotProject says a partition field tells nothing about a predicate.
var errCannotProject = errors.New("cannot project")

func projectField(l *leaf, fld spec.PartitionField, index int) (pnode, error) {
	tr := fld.Transform
	src := l.field.Type
	switch l.op {
	case OpIsNull, OpNotNull:
		switch tr.Kind {
		case spec.TransformIdentity, spec.TransformBucket, spec.TransformTruncate,
			spec.TransformYear, spec.TransformMonth, spec.TransformDay, spec.TransformHour:
			return &pleaf{index: index, op: l.op}, nil
		}
		return nil, errCannotProject
	}
	switch tr.Kind {
	case spec.TransformIdentity:
		return &pleaf{index: index, op: l.op, values: l.values}, nil
	case spec.TransformBucket:
		// A bucket holds values of any order: only equality projects.
		if l.op != OpEq && l.op != OpIn {
			return nil, errCannotProject
		}
		if _, ok := hashValue(src, l.values[0]); !ok {
			return nil, errCannotProject
		}
	case spec.TransformTruncate, spec.TransformYear, spec.TransformMonth, spec.TransformDay, spec.TransformHour:
		// Many values share a partition, so a partition other than t(v)
		// says nothing about x != v.
		if l.op == OpNotEq || l.op == OpNotIn {
			return nil, errCannotProject
		}
	default: // void keeps no values; an unknown transform cannot be applied
		return nil, errCannotProject
	}
	apply := func(v any) (any, error) { return applyTransform(tr, src, v) }
	switch l.op {
	case OpEq, OpIn:
		vals := make([]any, 0, len(l.values))
		for _, v := range l.values {
			tv, err := apply(v)
			if err != nil {
				return nil, err
			}
			vals = append(vals, tv)
		}
		op := OpEq
		if l.op == OpIn {
			op = OpIn
		}
		return &pleaf{index: index, op: op, values: vals}, nil
	case OpLt, OpGt:
		// x < v  =>  x <= v-1  =>  t(x) <= t(v-1), tighter than t(v) for
		// integer-like types; other types fall back to t(x) <= t(v).
		v, op := l.values[0], OpLtEq
		neighbour := predecessor
		if l.op == OpGt {
			op, neighbour = OpGtEq, successor
		}
		if nv, ok := neighbour(v); ok {
			v = nv
		}
		tv, err := apply(v)
		if err != nil {
			return nil, err
		}
		return &pleaf{index: index, op: op, values: []any{tv}}, nil
	case OpLtEq, OpGtEq:
		tv, err := apply(l.values[0])
		if err != nil {
			return nil, err
		}
		return &pleaf{index: index, op: l.op, values: []any{tv}}, nil
	}
	return nil, errCannotProject
}

// Match reports whether a file with this partition tuple may contain rows
// that satisfy the filter. A tuple that does not fit the spec is an error.
func (pf *PartitionFilter) Match(partition []any) (bool, error) {
	if len(partition) != len(pf.names) {
		return false, fmt.Errorf("partition tuple has %d values but spec %d has %d fields", len(partition), pf.specID, len(pf.names))
	}
	return pf.eval(pf.root, partition)
}

func (pf *PartitionFilter) eval(n pnode, part []any) (bool, error) {
	switch n := n.(type) {
	case *pand:
		ok, err := pf.eval(n.l, part)
		if err != nil || !ok {
			return false, err
		}
		return pf.eval(n.r, part)
	case *por:
		ok, err := pf.eval(n.l, part)
		if err != nil || ok {
			return ok, err
		}
		return pf.eval(n.r, part)
	case ptrue:
		return true, nil
	case *pleaf:
		ok, err := n.match(part[n.index])
		if err != nil {
			return false, fmt.Errorf("partition field %q of spec %d: %w", pf.names[n.index], pf.specID, err)
		}
		return ok, nil
	}
	return false, fmt.Errorf("unexpected node %T", n)
}

func (l *pleaf) match(v any) (bool, error) {
	switch l.op {
	case OpIsNull:
		return v == nil, nil
	case OpNotNull:
		return v != nil, nil
	}
	if v == nil {
		return false, nil // SQL: a comparison with null is not true
	}
	switch l.op {
	case OpIn, OpNotIn:
		found := false
		for _, want := range l.values {
			if want == nil {
				continue
			}
			c, err := compareValues(v, want)
			if err != nil {
				return false, err
			}
			if c == 0 {
				found = true
				break
			}
		}
		return found == (l.op == OpIn), nil
	}
	if l.values[0] == nil {
		return false, nil
	}
	c, err := compareValues(v, l.values[0])
	if err != nil {
		return false, err
	}
	switch l.op {
	case OpEq:
		return c == 0, nil
	case OpNotEq:
		return c != 0, nil
	case OpLt:
		return c < 0, nil
	case OpLtEq:
		return c <= 0, nil
	case OpGt:
		return c > 0, nil
	case OpGtEq:
		return c >= 0, nil
	}
	return false, fmt.Errorf("unexpected operator %s", l.op)
}
