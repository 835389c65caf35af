package plan

import (
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// isGlobal mirrors table.DeletesForTable: equality deletes of an
// unpartitioned spec apply to the whole table.
func isGlobal(md *spec.TableMetadata, df *manifest.DataFile) bool {
	if s, ok := md.SpecByID(int(df.SpecID)); ok {
		return s.IsUnpartitioned()
	}
	return len(df.Partition) == 0
}
