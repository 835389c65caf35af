package health

import (
	"context"
	"fmt"
	"time"

	"github.com/icectl/icectl/iceberg/metastore"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/partstats"
)

// ReadInput reads what Analyze looks at in t's current snapshot, with the
// thresholds of t's properties: its manifest list and live files, and its
// partition statistics file when one is registered (a file that cannot
// be read is a note, not an error: the report never needs it). It
// leaves Resurrected empty: finding those rows reads DVs and data, which
// only the health command does. A malformed threshold property is an
// error naming it.
func ReadInput(ctx context.Context, t *metastore.Table, now time.Time) (Input, error) {
	md := t.Metadata
	th, err := ThresholdsFor(md)
	if err != nil {
		return Input{}, &PropertyError{Err: err}
	}
	in := Input{Table: t.Ident.String(), Metadata: md, Now: now, Thresholds: th}
	if snap := md.CurrentSnapshot(); snap != nil {
		if in.Manifests, err = table.ManifestFiles(ctx, t.IO, snap); err != nil {
			return Input{}, fmt.Errorf("table %s: %w", t.Ident, err)
		}
		if in.Files, err = table.LiveFiles(ctx, t.IO, snap); err != nil {
			return Input{}, fmt.Errorf("table %s: %w", t.Ident, err)
		}
		if f, ok := partstats.Registered(md, snap.SnapshotID); ok {
			rows, err := partstats.Read(ctx, t.IO, md, f)
			if err != nil {
				in.Notes = append(in.Notes, fmt.Sprintf("table %s: %v; the report is the manifests' alone", t.Ident, err))
			} else {
				in.PartitionStats = &PartitionStats{File: f, Rows: rows}
			}
		}
	}
	return in, nil
}

// PropertyError is a table property ReadInput could not use: the table's
// owner fixes it, not the caller's code.
type PropertyError struct{ Err error }

func (e *PropertyError) Error() string { return e.Err.Error() }
func (e *PropertyError) Unwrap() error { return e.Err }

// PartitionStats is the current snapshot's partition statistics file, as
// read.
type PartitionStats struct {
	File spec.PartitionStatisticsFile
	Rows []partstats.Row
}
