package demo

import (
	"fmt"
	"slices"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/table"
)

// summarize counts main's live files and checks the surviving rows against
// what Build deleted, so a table that does not read back as built is an
// error rather than a demo.
func (b *builder) summarize(res *Result) error {
	md := b.tbl.Metadata
	res.MetadataLocation = b.tbl.MetadataLocation
	res.Snapshots = len(md.Snapshots)
	snap := md.CurrentSnapshot()
	fs, err := table.LiveFiles(b.ctx, b.tbl.IO, snap)
	if err != nil {
		return err
	}
	res.DataFiles = len(fs.Data)
	for _, d := range fs.Deletes {
		switch d.Entry.DataFile.Content {
		case manifest.ContentPositionDeletes:
			res.PositionDeleteFiles++
		case manifest.ContentEqualityDeletes:
			res.EqualityDeleteFiles++
		}
	}
	sum, err := scan.Checksum(b.ctx, b.tbl.IO, md, snap, scan.Options{})
	if err != nil {
		return err
	}
	res.Rows, res.Checksum = sum.RowCount, sum.Checksum
	var written int64
	for _, f := range b.files {
		written += int64(len(f.ids))
	}
	if want := written - int64(len(b.deleted)); res.Rows != want {
		return fmt.Errorf("demo table reads %d rows, want %d (%d written, %d deleted)", res.Rows, want, written, len(b.deleted))
	}
	res.DeletedOrderIDs = slices.Sorted(slices.Values(b.deleted))
	return nil
}
