package table

import (
	"fmt"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// IdentityConstants are the values the spec's first column projection
// rule gives df's rows: for each identity field of the spec df was
// written with (its manifest's), the source field's value is df's
// partition value, null included, for every row of the file. Keys are
// source field ids. Java's readers (PartitionUtil.constantsMap) substitute
// these even where the file stores the column, and so do icectl's
// (datafile.Constants says why).
//
// A spec icectl cannot find is an error: reading on would apply the
// wrong rule to the file's columns.
func IdentityConstants(md *spec.TableMetadata, df *manifest.DataFile) (map[int]any, error) {
	ps, ok := md.SpecByID(int(df.SpecID))
	if !ok {
		return nil, fmt.Errorf("data file %s: partition spec %d is not in the table's metadata", df.FilePath, df.SpecID)
	}
	var out map[int]any
	for i, f := range ps.Fields {
		if f.Transform.Kind != spec.TransformIdentity || len(f.SourceIDs) > 1 || i >= len(df.Partition) {
			continue
		}
		if out == nil {
			out = map[int]any{}
		}
		out[f.SourceID] = df.Partition[i]
	}
	return out, nil
}
