package plan

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/icectl/icectl/iceberg/spec"
)

// compareTuples is a total order on partition tuples, used only to make
// plans deterministic: null first, then by value; values of different Go
// types order by a fixed type rank.
func compareTuples(a, b []any) int {
	for i := 0; i < min(len(a), len(b)); i++ {
		if c := compareValue(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func typeRank(v any) int {
	switch v.(type) {
	case nil:
		return 0
	case bool:
		return 1
	case int32, int64:
		return 2
	case float32, float64:
		return 3
	case string:
		return 4
	case []byte:
		return 5
	case [16]byte:
		return 6
	case spec.Decimal:
		return 7
	}
	return 8
}

func compareValue(a, b any) int {
	ra, rb := typeRank(a), typeRank(b)
	if ra != rb {
		return cmp.Compare(ra, rb)
	}
	switch x := a.(type) {
	case nil:
		return 0
	case bool:
		y := b.(bool)
		if x == y {
			return 0
		}
		if !x {
			return -1
		}
		return 1
	case int32, int64:
		return cmp.Compare(asInt64(a), asInt64(b))
	case float32, float64:
		return cmp.Compare(asFloat64(a), asFloat64(b))
	case string:
		return strings.Compare(x, b.(string))
	case []byte:
		return strings.Compare(string(x), string(b.([]byte)))
	case [16]byte:
		y := b.([16]byte)
		return strings.Compare(string(x[:]), string(y[:]))
	case spec.Decimal:
		y := b.(spec.Decimal)
		if x.Unscaled == nil || y.Unscaled == nil || x.Scale != y.Scale {
			return strings.Compare(x.String(), y.String())
		}
		return x.Unscaled.Cmp(y.Unscaled)
	}
	return strings.Compare(fmt.Sprintf("%T:%v", a, a), fmt.Sprintf("%T:%v", b, b))
}

func asInt64(v any) int64 {
	if x, ok := v.(int32); ok {
		return int64(x)
	}
	return v.(int64)
}

func asFloat64(v any) float64 {
	if x, ok := v.(float32); ok {
		return float64(x)
	}
	return v.(float64)
}
