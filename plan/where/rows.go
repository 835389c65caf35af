package where

import (
	"fmt"
	"math"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// Fields returns the columns the filter reads, each once, in the order
// they first appear in the expression.
func (f *Filter) Fields() []spec.NestedField {
	var out []spec.NestedField
	seen := map[int]bool{}
	var walk func(n node)
	walk = func(n node) {
		switch n := n.(type) {
		case *andNode:
			walk(n.l)
			walk(n.r)
		case *orNode:
			walk(n.l)
			walk(n.r)
		case *leaf:
			if !seen[n.field.ID] {
				seen[n.field.ID] = true
				out = append(out, n.field)
			}
		}
	}
	walk(f.root)
	return out
}

// MatchRow reports whether a row satisfies the filter, with SQL's
// three-valued logic read as a DELETE reads it: a row is selected only
// when the filter is true, so a null compares true with nothing (NOT
// was pushed down when the filter was bound: NOT x < v is x >= v, and
// both are false for a null x). value gives the row's value of a column
// by field id, in the conventions of spec/values.go (nil: null). A NaN
// is equal to, less and greater than nothing: it matches != and NOT IN
// only, as the metrics evaluation assumes.
func (f *Filter) MatchRow(value func(id int) any) (bool, error) {
	return matchRow(f.root, value)
}

func matchRow(n node, value func(id int) any) (bool, error) {
	switch n := n.(type) {
	case *andNode:
		ok, err := matchRow(n.l, value)
		if err != nil || !ok {
			return false, err
		}
		return matchRow(n.r, value)
	case *orNode:
		ok, err := matchRow(n.l, value)
		if err != nil || ok {
			return ok, err
		}
		return matchRow(n.r, value)
	case *leaf:
		return n.matchValue(value(n.field.ID))
	}
	return false, fmt.Errorf("unexpected node %T", n)
}

// matchValue evaluates the predicate on one value of its column (a row's,
// or the partition value every row of a file has).
func (l *leaf) matchValue(v any) (bool, error) {
	switch x := v.(type) {
	case float32:
		if math.IsNaN(float64(x)) {
			return l.op == OpNotEq || l.op == OpNotIn, nil
		}
	case float64:
		if math.IsNaN(x) {
			return l.op == OpNotEq || l.op == OpNotIn, nil
		}
	case []byte:
		if _, ok := l.field.Type.(spec.UUIDType); ok && len(x) == 16 {
			v = [16]byte(x)
		}
	}
	ok, err := (&pleaf{op: l.op, values: l.values}).match(v)
	if err != nil {
		return false, fmt.Errorf("column %q: %w", l.field.Name, err)
	}
	return ok, nil
}

// AllMatchIn reports whether every row of a data file written with spec
// ps (nil: unknown) is proven to satisfy the filter, so the file can be
// removed whole without reading it: Java's StrictMetricsEvaluator, made
// stricter. A predicate on the source column of one of ps's identity
// fields is decided by the file's partition value (every row has it);
// any other by the column's metrics: bounds prove range predicates only
// with a null count of zero (a null row matches no comparison), a NaN
// count of zero for floating point columns, and never for string,
// binary or fixed columns, whose bounds may be truncated. Missing or
// undecodable metrics prove nothing.
func (f *Filter) AllMatchIn(df *manifest.DataFile, ps *spec.PartitionSpec) bool {
	return allMatch(f.root, df, identityIndex(ps))
}

// identityIndex maps the source field ids of ps's identity fields to
// their position in the partition tuple.
func identityIndex(ps *spec.PartitionSpec) map[int]int {
	if ps == nil {
		return nil
	}
	out := map[int]int{}
	for i, pf := range ps.Fields {
		if pf.Transform.Kind == spec.TransformIdentity && len(pf.SourceIDs) <= 1 {
			if _, dup := out[pf.SourceID]; !dup {
				out[pf.SourceID] = i
			}
		}
	}
	return out
}

func allMatch(n node, df *manifest.DataFile, identity map[int]int) bool {
	switch n := n.(type) {
	case *andNode:
		return allMatch(n.l, df, identity) && allMatch(n.r, df, identity)
	case *orNode:
		return allMatch(n.l, df, identity) || allMatch(n.r, df, identity)
	case *leaf:
		if i, ok := identity[n.field.ID]; ok {
			if i >= len(df.Partition) {
				return false
			}
			ok, err := n.matchValue(df.Partition[i])
			return err == nil && ok
		}
		return n.allMatch(df)
	}
	return false
}

// allMatch is the strict metrics evaluation of one predicate.
func (l *leaf) allMatch(df *manifest.DataFile) bool {
	id := l.field.ID
	values, hasValues := df.ValueCounts[id]
	nulls, hasNulls := df.NullValueCounts[id]
	switch l.op {
	case OpIsNull:
		return hasValues && hasNulls && values == nulls
	case OpNotNull:
		return hasNulls && nulls == 0
	}
	if !hasNulls || nulls != 0 {
		return false
	}
	switch l.field.Type.(type) {
	case spec.StringType, spec.BinaryType, spec.FixedType:
		return false // bounds may be truncated
	case spec.FloatType, spec.DoubleType:
		if nans, ok := df.NaNValueCounts[id]; !ok || nans != 0 {
			return false
		}
	}
	lower, hasLower := l.bound(df.LowerBounds)
	upper, hasUpper := l.bound(df.UpperBounds)
	// cmpTo orders a bound with a literal; ok is false when it cannot,
	// which proves nothing.
	cmpTo := func(bound, lit any) (int, bool) {
		if bound == nil || lit == nil {
			return 0, false
		}
		c, err := compareValues(bound, lit)
		return c, err == nil
	}
	if !hasLower {
		lower = nil
	}
	if !hasUpper {
		upper = nil
	}
	switch l.op {
	case OpLt, OpLtEq:
		c, ok := cmpTo(upper, l.values[0])
		return ok && (c < 0 || (c == 0 && l.op == OpLtEq))
	case OpGt, OpGtEq:
		c, ok := cmpTo(lower, l.values[0])
		return ok && (c > 0 || (c == 0 && l.op == OpGtEq))
	case OpEq, OpIn:
		cl, okl := cmpTo(lower, l.values[0])
		if !okl {
			return false
		}
		if cu, oku := cmpTo(upper, lower); !oku || cu != 0 {
			return false // more than one value
		}
		for _, v := range l.values {
			if c, ok := cmpTo(lower, v); ok && c == 0 {
				return true
			}
		}
		return l.op == OpEq && cl == 0
	case OpNotEq, OpNotIn:
		for _, v := range l.values {
			cl, okl := cmpTo(lower, v)
			cu, oku := cmpTo(upper, v)
			if !(okl && cl > 0) && !(oku && cu < 0) {
				return false // v may be in the file
			}
		}
		return true
	}
	return false
}
