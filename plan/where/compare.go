package where

import (
	"bytes"
	"cmp"
	"fmt"
	"math/big"
	"strings"

	"github.com/icectl/icectl/iceberg/spec"
)

// compareValues orders two non-null values of the same Iceberg type. Ints
// and floats of different widths are widened (a column promoted from int
// to long keeps old partition values as int).
func compareValues(a, b any) (int, error) {
	switch x := a.(type) {
	case int32:
		switch y := b.(type) {
		case int32:
			return cmp.Compare(x, y), nil
		case int64:
			return cmp.Compare(int64(x), y), nil
		}
	case int64:
		switch y := b.(type) {
		case int64:
			return cmp.Compare(x, y), nil
		case int32:
			return cmp.Compare(x, int64(y)), nil
		}
	case float32:
		switch y := b.(type) {
		case float32:
			return cmp.Compare(x, y), nil
		case float64:
			return cmp.Compare(float64(x), y), nil
		}
	case float64:
		switch y := b.(type) {
		case float64:
			return cmp.Compare(x, y), nil
		case float32:
			return cmp.Compare(x, float64(y)), nil
		}
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), nil
		}
	case bool:
		if y, ok := b.(bool); ok {
			switch {
			case x == y:
				return 0, nil
			case !x:
				return -1, nil
			}
			return 1, nil
		}
	case []byte:
		if y, ok := b.([]byte); ok {
			return bytes.Compare(x, y), nil
		}
	case [16]byte:
		if y, ok := b.([16]byte); ok {
			return bytes.Compare(x[:], y[:]), nil
		}
	case spec.Decimal:
		if y, ok := b.(spec.Decimal); ok && x.Unscaled != nil && y.Unscaled != nil {
			xs, ys := x.Unscaled, y.Unscaled
			if x.Scale < y.Scale {
				xs = rescale(xs, y.Scale-x.Scale)
			} else if y.Scale < x.Scale {
				ys = rescale(ys, x.Scale-y.Scale)
			}
			return xs.Cmp(ys), nil
		}
	}
	return 0, fmt.Errorf("cannot compare partition value %v (%T) with %v (%T)", a, a, b, b)
}

func rescale(v *big.Int, by int) *big.Int {
	return new(big.Int).Mul(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(by)), nil))
}
