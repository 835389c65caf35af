package health

import "github.com/icectl/icectl/iceberg/spec"

// PartitionText renders a partition tuple for people: spec.PartitionText,
// the one rendering every command uses.
func PartitionText(ps *spec.PartitionSpec, values []any) string {
	return spec.PartitionText(ps, values)
}
