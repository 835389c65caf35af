package plan

import (
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// isGlobal mirrors table.DeletesForTable: equality deletes of an
// unpartitioned spec apply to the whole table.
func isGlobal(md *spec.TableMetadata, df *manifest.DataFile) bool {
	return table.Unpartitioned(md, df.SpecID, df.Partition)
}
