package spec

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// PartitionText renders a partition tuple for people, Java style:
// "day=2024-01-05/region=eu". Date and time transforms show dates rather
// than day or hour counts. An empty tuple is "" (unpartitioned). Without
// the spec (a spec id the metadata lacks) the fields are numbered.
func PartitionText(ps *PartitionSpec, values []any) string {
	parts := make([]string, len(values))
	for i, v := range values {
		name := fmt.Sprintf("field%d", i+1)
		var tr Transform
		if ps != nil && i < len(ps.Fields) {
			name, tr = ps.Fields[i].Name, ps.Fields[i].Transform
		}
		parts[i] = name + "=" + partitionValueText(tr, v)
	}
	return strings.Join(parts, "/")
}

var textEpoch = time.Unix(0, 0).UTC()

func partitionValueText(tr Transform, v any) string {
	if v == nil {
		return "null"
	}
	if n, ok := partitionInt(v); ok {
		switch tr.Kind {
		case TransformYear:
			return strconv.Itoa(1970 + int(n))
		case TransformMonth:
			return textEpoch.AddDate(0, int(n), 0).Format("2006-01")
		case TransformDay:
			return textEpoch.AddDate(0, 0, int(n)).Format("2006-01-02")
		case TransformHour:
			return textEpoch.Add(time.Duration(n) * time.Hour).Format("2006-01-02-15")
		}
		return strconv.FormatInt(n, 10)
	}
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return "0x" + hex.EncodeToString(x)
	case [16]byte:
		return uuid.UUID(x).String()
	case Decimal:
		return x.String()
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

func partitionInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	}
	return 0, false
}
