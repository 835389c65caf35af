package compact

import (
	"fmt"
	"strings"

	"github.com/icectl/icectl/iceberg/spec"
)

// SortTerm is one term of an explicit sort order, as Spark's
// rewrite_data_files takes it in sort_order: a column, its direction and
// where its nulls go.
type SortTerm struct {
	Column     string
	Desc       bool
	NullsFirst bool
}

// ParseSortOrder parses Spark's sort_order syntax: comma-separated terms
// `column [ASC|DESC] [NULLS FIRST|NULLS LAST]`, keywords in any case, a
// column in backticks when its name has spaces or commas. As in Spark,
// nulls come first ascending and last descending unless told.
func ParseSortOrder(s string) ([]SortTerm, error) {
	parts, err := splitTerms(s)
	if err != nil {
		return nil, err
	}
	terms := make([]SortTerm, 0, len(parts))
	for _, p := range parts {
		col, rest, err := columnName(p)
		if err != nil {
			return nil, err
		}
		words := strings.Fields(strings.ToUpper(rest))
		t := SortTerm{Column: col}
		if len(words) > 0 && (words[0] == "ASC" || words[0] == "DESC") {
			t.Desc = words[0] == "DESC"
			words = words[1:]
		}
		t.NullsFirst = !t.Desc
		switch {
		case len(words) == 0:
		case len(words) == 2 && words[0] == "NULLS" && (words[1] == "FIRST" || words[1] == "LAST"):
			t.NullsFirst = words[1] == "FIRST"
		default:
			return nil, fmt.Errorf("sort term %q: want `column [ASC|DESC] [NULLS FIRST|NULLS LAST]`", strings.TrimSpace(p))
		}
		terms = append(terms, t)
	}
	return terms, nil
}

// ParseZOrder parses the columns of a z-order: `a,b` (or Spark's
// `zorder(a,b)`).
func ParseZOrder(s string) ([]string, error) {
	t := strings.TrimSpace(s)
	if l := strings.ToLower(t); strings.HasPrefix(l, "zorder(") && strings.HasSuffix(l, ")") {
		t = t[len("zorder(") : len(t)-1]
	}
	parts, err := splitTerms(t)
	if err != nil {
		return nil, err
	}
	cols := make([]string, 0, len(parts))
	for _, p := range parts {
		col, rest, err := columnName(p)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(rest) != "" {
			return nil, fmt.Errorf("z-order term %q: want a column name (z-order has no direction)", strings.TrimSpace(p))
		}
		cols = append(cols, col)
	}
	return cols, nil
}

// splitTerms splits s at commas outside backticks; no term may be empty.
func splitTerms(s string) ([]string, error) {
	var parts []string
	quoted, start := false, 0
	for i, r := range s {
		switch {
		case r == '`':
			quoted = !quoted
		case r == ',' && !quoted:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	if quoted {
		return nil, fmt.Errorf("unclosed backtick in %q", s)
	}
	parts = append(parts, s[start:])
	for _, p := range parts {
		if strings.TrimSpace(p) == "" {
			return nil, fmt.Errorf("empty term in %q", s)
		}
	}
	return parts, nil
}

// columnName splits a term into its column name and the rest.
func columnName(term string) (col, rest string, err error) {
	t := strings.TrimSpace(term)
	if strings.HasPrefix(t, "`") {
		end := strings.Index(t[1:], "`")
		if end <= 0 {
			return "", "", fmt.Errorf("term %q: empty column name", t)
		}
		return t[1 : end+1], t[end+2:], nil
	}
	i := strings.IndexFunc(t, func(r rune) bool { return r == ' ' || r == '\t' || r == '(' || r == ')' })
	if i < 0 {
		return t, "", nil
	}
	if t[i] == '(' || t[i] == ')' {
		return "", "", fmt.Errorf("term %q: sorting by a transform is not supported: name a column", t)
	}
	return t[:i], t[i:], nil
}

// ordering is how a rewrite orders its rows: by a sort order (the
// table's, or an explicit one) or by a z-order of columns.
type ordering struct {
	order *spec.SortOrder
	// orderID is the sort order id the outputs record: the table's order
	// they are sorted by, else (a z-order, an order the table does not
	// have) the unsorted order 0, as Spark's rewrite records it.
	orderID *int32
	zorder  []int // field ids
}

// CheckOrdering checks opts' sort order or z-order against md: columns
// that exist, of types that can be ordered. Errors wrap ErrInvalidOptions.
func CheckOrdering(md *spec.TableMetadata, opts Options) error {
	_, err := resolveOrdering(md, opts)
	return err
}

// resolveOrdering resolves opts' ordering against md's current schema;
// nil means rows are written as read. Errors wrap ErrInvalidOptions.
func resolveOrdering(md *spec.TableMetadata, opts Options) (*ordering, error) {
	switch {
	case len(opts.ZOrder) > 0 && opts.Sort:
		return nil, errorsJoinf("z-order and sort order are exclusive: give --zorder or --sort, not both")
	case len(opts.ZOrder) > 0:
		seen := map[int]bool{}
		o := &ordering{}
		for _, name := range opts.ZOrder {
			f, err := topLevelField(md, name)
			if err != nil {
				return nil, errorsJoinf("z-order: %v", err)
			}
			if seen[f.ID] {
				return nil, errorsJoinf("z-order: column %q given twice", name)
			}
			if _, err := zorderBytesOf(f.Type); err != nil {
				return nil, errorsJoinf("z-order: column %q: %v", name, err)
			}
			seen[f.ID] = true
			o.zorder = append(o.zorder, f.ID)
		}
		o.orderID = unsortedOrderID(md)
		return o, nil
	case !opts.Sort:
		return nil, nil
	case opts.SortOrder == "":
		order, ok := md.SortOrderByID(md.DefaultSortOrderID)
		if !ok || len(order.Fields) == 0 {
			return nil, nil
		}
		id := int32(order.OrderID)
		return &ordering{order: order, orderID: &id}, nil
	}
	terms, err := ParseSortOrder(opts.SortOrder)
	if err != nil {
		return nil, errorsJoinf("sort order: %v", err)
	}
	order := &spec.SortOrder{}
	for _, t := range terms {
		f, err := topLevelField(md, t.Column)
		if err != nil {
			return nil, errorsJoinf("sort order: %v", err)
		}
		if !sortable(f.Type) {
			return nil, errorsJoinf("sort order: cannot sort by column %q of type %s", t.Column, f.Type)
		}
		sf := spec.SortField{SourceID: f.ID, Transform: spec.ParseTransform("identity"), Direction: "asc", NullOrder: "nulls-last"}
		if t.Desc {
			sf.Direction = "desc"
		}
		if t.NullsFirst {
			sf.NullOrder = "nulls-first"
		}
		order.Fields = append(order.Fields, sf)
	}
	o := &ordering{order: order, orderID: unsortedOrderID(md)}
	for i := range md.SortOrders {
		if so := &md.SortOrders[i]; so.OrderID != 0 && sameOrder(so, order) {
			id := int32(so.OrderID)
			o.orderID = &id
			break
		}
	}
	return o, nil
}

// unsortedOrderID is the id of md's unsorted order (0, reserved for it
// by the spec), or nil when md has none: a file sorted by no order of
// the table's records it, as Spark's rewrite_data_files does for a
// z-order or an order the table does not have. Readers take 0 and none
// alike as "unsorted".
func unsortedOrderID(md *spec.TableMetadata) *int32 {
	if o, ok := md.SortOrderByID(0); ok && len(o.Fields) == 0 {
		id := int32(0)
		return &id
	}
	return nil
}

// sortable reports whether rows can be sorted by a column of type t (the
// types comparator compares).
func sortable(t spec.Type) bool {
	switch t.(type) {
	case spec.BooleanType, spec.IntType, spec.LongType, spec.FloatType, spec.DoubleType, spec.DateType,
		spec.TimeType, spec.TimestampType, spec.TimestampTzType, spec.TimestampNsType, spec.TimestampTzNsType,
		spec.StringType, spec.BinaryType, spec.FixedType, spec.UUIDType, spec.DecimalType:
		return true
	}
	return false
}

// sameOrder reports whether a and b order rows the same way.
func sameOrder(a, b *spec.SortOrder) bool {
	if len(a.Fields) != len(b.Fields) {
		return false
	}
	for i, f := range a.Fields {
		g := b.Fields[i]
		if f.SourceID != g.SourceID || f.Transform.Kind != g.Transform.Kind || f.Direction != g.Direction || f.NullOrder != g.NullOrder {
			return false
		}
	}
	return true
}

// topLevelField finds a top-level column of md's current schema by name:
// exactly, else case-insensitively when that is unambiguous (as Spark).
func topLevelField(md *spec.TableMetadata, name string) (*spec.NestedField, error) {
	s := md.CurrentSchema()
	if s == nil {
		return nil, fmt.Errorf("the table has no current schema")
	}
	var fold *spec.NestedField
	n := 0
	for i := range s.Fields {
		f := &s.Fields[i]
		if f.Name == name {
			return f, nil
		}
		if strings.EqualFold(f.Name, name) {
			fold, n = f, n+1
		}
	}
	if n == 1 {
		return fold, nil
	}
	names := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		names[i] = f.Name
	}
	return nil, fmt.Errorf("no column %q in the table (top-level columns: %s)", name, strings.Join(names, ", "))
}
