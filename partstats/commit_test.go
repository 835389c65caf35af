package partstats_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogs"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/metastore"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/fixture"
	"github.com/icectl/icectl/internal/testing/testenv"
	"github.com/icectl/icectl/partstats"
)

// failing is a catalog whose commits fail with err, without committing.
type failing struct {
	catalog.Catalog
	err error
}

func (f failing) CommitTable(ctx context.Context, t *metastore.Table, reqs []spec.Requirement, ups []spec.Update) (*metastore.Table, error) {
	return nil, fmt.Errorf("commit %s: %w", t.Ident, f.err)
}

// TestCommitFailure: a commit that definitely failed removes the file it
// would have registered; one whose outcome is unknown keeps it (the
// commit may reference it). The table is unchanged either way.
func TestCommitFailure(t *testing.T) {
	ctx := context.Background()
	h := newHistory(t, 2)
	tbl := h.tb.Load(t)
	res := compute(t, tbl, *tbl.Metadata.CurrentSnapshotID, false)
	data, err := partstats.Encode(res, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		err  error
		kept bool
	}{{metastore.ErrCommitFailed, false}, {metastore.ErrCommitStateUnknown, true}} {
		path := partstats.NewPath(tbl.Metadata, res.SnapshotID)
		f, err := partstats.Write(ctx, tbl.IO, path, res.SnapshotID, data)
		if err != nil {
			t.Fatal(err)
		}
		_, err = partstats.Commit(ctx, failing{h.tb.Cat, c.err}, tbl, f, fixture.NoWait())
		if !errors.Is(err, c.err) {
			t.Errorf("commit failing with %v: %v", c.err, err)
		}
		_, openErr := tbl.IO.Open(ctx, path)
		if kept := openErr == nil; kept != c.kept {
			t.Errorf("after %v: file kept %v, want %v", c.err, kept, c.kept)
		}
		if now := h.tb.Load(t); now.MetadataLocation != tbl.MetadataLocation {
			t.Errorf("after %v the table changed", c.err)
		}
	}
}

// TestREST registers files through the REST catalog (Iceberg's REST
// fixture applies the set-partition-statistics update) with the table's
// files on S3, and computes on incrementally from a file read back from
// S3.
func TestREST(t *testing.T) {
	r := testenv.NeedREST(t)
	ctx := context.Background()
	cat, err := catalogs.Create(ctx, catalog.Config{Name: "rest", URI: r.URI, Warehouse: r.Warehouse, Props: r.Props})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	var rnd [6]byte
	rand.Read(rnd[:])
	ns := "pstats_" + hex.EncodeToString(rnd[:])
	if err := cat.CreateNamespace(ctx, []string{ns}, nil); err != nil {
		t.Fatal(err)
	}
	id := catalog.Ident{Namespace: []string{ns}, Name: "t"}
	loc, err := cat.(catalog.LocationProvider).DefaultLocation(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	ps := spec.PartitionSpec{Fields: []spec.PartitionField{{SourceID: 2, FieldID: 1000, Name: "name", Transform: spec.ParseTransform("identity")}}}
	md, err := spec.NewTableMetadata(fixture.IDNameSchema(), ps, spec.SortOrder{}, loc, nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, id, md)
	if err != nil {
		t.Fatal(err)
	}
	appendFiles := func(i int) {
		t.Helper()
		var files []manifest.DataFile
		for j := range 3 {
			files = append(files, fixture.Listed(fmt.Sprintf("%s/data/f-%d-%d.parquet", loc, i, j), []any{fmt.Sprint("p", j)}, 10, 100))
		}
		if tbl, _, err = table.CommitChange(ctx, cat, tbl, table.Change{Operation: spec.OperationAppend, AddData: files}, fixture.NoWait()); err != nil {
			t.Fatal(err)
		}
	}
	register := func(wantBase bool) {
		t.Helper()
		head := *tbl.Metadata.CurrentSnapshotID
		res, err := partstats.Compute(ctx, tbl.IO, tbl.Metadata, head, partstats.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if (res.Base != nil) != wantBase {
			t.Fatalf("base %v, want one: %v", res.Base, wantBase)
		}
		full, err := partstats.Compute(ctx, tbl.IO, tbl.Metadata, head, partstats.Options{Full: true})
		if err != nil {
			t.Fatal(err)
		}
		if d := partstats.Diff(res.Rows, full.Rows); d != "" {
			t.Errorf("incremental and full differ: %s", d)
		}
		data, err := partstats.Encode(res, tbl.Metadata.FormatVersion)
		if err != nil {
			t.Fatal(err)
		}
		f, err := partstats.Write(ctx, tbl.IO, partstats.NewPath(tbl.Metadata, head), head, data)
		if err != nil {
			t.Fatal(err)
		}
		if tbl, err = partstats.Commit(ctx, cat, tbl, f, fixture.NoWait()); err != nil {
			t.Fatal(err)
		}
		if tbl, err = cat.LoadTable(ctx, id); err != nil {
			t.Fatal(err)
		}
		if got, ok := partstats.Registered(tbl.Metadata, head); !ok || got.StatisticsPath != f.StatisticsPath || got.FileSizeInBytes != f.FileSizeInBytes {
			t.Fatalf("the REST catalog registers %+v, want %+v", tbl.Metadata.PartitionStatistics, f)
		}
	}
	appendFiles(0)
	register(false)
	appendFiles(1)
	appendFiles(2)
	register(true)
}
