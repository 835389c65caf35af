package table

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/icectl/icectl/iceberg/spec"
)

// PartitionPath is the directory of a partition under the data location,
// like Java's PartitionSpec.partitionToPath: name=value per field, with
// time transforms shown as dates. It only makes names readable; readers
// never parse it.
func PartitionPath(ps *spec.PartitionSpec, tuple []any) string {
	if ps == nil || len(ps.Fields) == 0 {
		return ""
	}
	parts := make([]string, 0, len(ps.Fields))
	for i, f := range ps.Fields {
		var v any
		if i < len(tuple) {
			v = tuple[i]
		}
		parts = append(parts, url.QueryEscape(f.Name)+"="+url.QueryEscape(partitionValue(f.Transform, v)))
	}
	return strings.Join(parts, "/")
}

func partitionValue(tr spec.Transform, v any) string {
	if v == nil {
		return "null"
	}
	epoch := time.Unix(0, 0).UTC()
	if n, ok := v.(int32); ok {
		switch tr.Kind {
		case spec.TransformDay:
			return epoch.AddDate(0, 0, int(n)).Format("2006-01-02")
		case spec.TransformMonth:
			return epoch.AddDate(0, int(n), 0).Format("2006-01")
		case spec.TransformYear:
			return epoch.AddDate(int(n), 0, 0).Format("2006")
		case spec.TransformHour:
			return epoch.Add(time.Duration(n) * time.Hour).Format("2006-01-02-15")
		}
	}
	switch x := v.(type) {
	case []byte:
		return fmt.Sprintf("%x", x)
	case [16]byte:
		return fmt.Sprintf("%x-%x-%x-%x-%x", x[0:4], x[4:6], x[6:8], x[8:10], x[10:16])
	}
	return fmt.Sprint(v)
}
