package where

import (
	"math"
	"slices"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// MatchFile reports whether a data file of the filter's spec may contain
// rows that satisfy the filter: its partition must match (see Match) and
// its column metrics must not rule every row out. Metrics are read as
// Java's InclusiveMetricsEvaluator reads them: a column without bounds or
// counts, or with a bound that does not decode, keeps the file.
func (pf *PartitionFilter) MatchFile(df *manifest.DataFile) (bool, error) {
	ok, err := pf.Match(df.Partition)
	if err != nil || !ok {
		return false, err
	}
	return mayMatch(pf.filter.root, df, pf.identity), nil
}

// MatchMetrics reports whether a data file may contain matching rows by its
// column metrics alone (value, null and NaN counts, lower and upper
// bounds); it never rules out a file whose metrics it cannot read. Unlike
// Java it keeps a file with no rows, so that metrics never rule out more
// than an exact (identity) partition match does (see PartitionsDecide).
func (f *Filter) MatchMetrics(df *manifest.DataFile) bool {
	return mayMatch(f.root, df, nil)
}

// MatchMetricsIn is MatchMetrics for a file written with spec ps (nil:
// unknown): a predicate on the source column of one of ps's identity
// fields is not judged by the column's metrics, since the spec's first
// projection rule makes the file's partition value that column's value in
// every row, whatever the file stores (a migrated Hive file stores no
// such column; a file icectl once wrote with the column as nulls has
// metrics that would rule it out). The partition match decides those.
func (f *Filter) MatchMetricsIn(df *manifest.DataFile, ps *spec.PartitionSpec) bool {
	return mayMatch(f.root, df, identitySources(ps))
}

// identitySources are the source field ids of ps's identity fields.
func identitySources(ps *spec.PartitionSpec) map[int]bool {
	if ps == nil {
		return nil
	}
	var out map[int]bool
	for _, pf := range ps.Fields {
		if pf.Transform.Kind == spec.TransformIdentity && len(pf.SourceIDs) <= 1 {
			if out == nil {
				out = map[int]bool{}
			}
			out[pf.SourceID] = true
		}
	}
	return out
}

// PartitionsDecide reports whether the partitions of specs alone select
// exactly the files MatchMetrics would keep too: every predicate is on the
// source column of an identity field in each spec, so a file's partition
// value is the value of all its rows. Callers then skip reading metrics.
func (f *Filter) PartitionsDecide(specs []spec.PartitionSpec) bool {
	return identityOnly(f.root, specs)
}

func identityOnly(n node, specs []spec.PartitionSpec) bool {
	switch n := n.(type) {
	case *andNode:
		return identityOnly(n.l, specs) && identityOnly(n.r, specs)
	case *orNode:
		return identityOnly(n.l, specs) && identityOnly(n.r, specs)
	case *leaf:
		for _, ps := range specs {
			if !slices.ContainsFunc(ps.Fields, func(pf spec.PartitionField) bool {
				return pf.SourceID == n.field.ID && len(pf.SourceIDs) <= 1 && pf.Transform.Kind == spec.TransformIdentity
			}) {
				return false
			}
		}
		return true
	}
	return false
}

// mayMatch evaluates n on df's metrics; predicates on the columns of
// skip are not judged (true).
func mayMatch(n node, df *manifest.DataFile, skip map[int]bool) bool {
	switch n := n.(type) {
	case *andNode:
		return mayMatch(n.l, df, skip) && mayMatch(n.r, df, skip)
	case *orNode:
		return mayMatch(n.l, df, skip) || mayMatch(n.r, df, skip)
	case *leaf:
		return skip[n.field.ID] || n.mayMatch(df)
	}
	return true
}

// mayMatch is the inclusive metrics evaluation of one predicate. NOT was
// pushed down when the filter was bound (NOT x < v is x >= v: with SQL's
// nulls both are false for a null x), so every predicate here is positive
// or a != / NOT IN, which metrics never rule out.
func (l *leaf) mayMatch(df *manifest.DataFile) bool {
	id := l.field.ID
	values, hasValues := df.ValueCounts[id]
	nulls, hasNulls := df.NullValueCounts[id]
	nans, hasNaNs := df.NaNValueCounts[id]
	nullsOnly := hasValues && hasNulls && values == nulls
	nansOnly := hasValues && hasNaNs && values == nans
	switch l.op {
	case OpIsNull:
		return !hasNulls || nulls != 0
	case OpNotNull:
		return !nullsOnly
	case OpNotEq, OpNotIn:
		return true
	}
	if nullsOnly || nansOnly {
		return false // a comparison with null or NaN is never true
	}
	lower, hasLower := l.bound(df.LowerBounds)
	upper, hasUpper := l.bound(df.UpperBounds)
	// Compares a bound with a literal; ok is false when they do not
	// compare, which keeps the file.
	cmpTo := func(bound, lit any) (int, bool) {
		if lit == nil {
			return 0, false
		}
		c, err := compareValues(bound, lit)
		return c, err == nil
	}
	switch l.op {
	case OpLt, OpLtEq:
		if !hasLower {
			return true
		}
		c, ok := cmpTo(lower, l.values[0])
		return !ok || c < 0 || (c == 0 && l.op == OpLtEq)
	case OpGt, OpGtEq:
		if !hasUpper {
			return true
		}
		c, ok := cmpTo(upper, l.values[0])
		return !ok || c > 0 || (c == 0 && l.op == OpGtEq)
	case OpEq, OpIn:
		for _, v := range l.values {
			if c, ok := cmpTo(lower, v); hasLower && ok && c > 0 {
				continue // below the lower bound
			}
			if c, ok := cmpTo(upper, v); hasUpper && ok && c < 0 {
				continue // above the upper bound
			}
			return true
		}
		return false
	}
	return true
}

// bound decodes the column's bound from m. A NaN bound (written by old
// writers that did not keep NaN out of the bounds) orders with nothing,
// so it counts as no bound, as Java's evaluator treats it.
func (l *leaf) bound(m map[int][]byte) (any, bool) {
	b, ok := m[l.field.ID]
	if !ok {
		return nil, false
	}
	v, err := spec.DecodeValue(l.field.Type, b)
	if err != nil {
		return nil, false
	}
	switch x := v.(type) {
	case float32:
		if math.IsNaN(float64(x)) {
			return nil, false
		}
	case float64:
		if math.IsNaN(x) {
			return nil, false
		}
	}
	return v, true
}
