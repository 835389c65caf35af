package icebergread

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
)

// AppendDeleteRequest says what AppendDelete does to an existing fixture
// table (one WriteFixture created, possibly changed since by icectl).
type AppendDeleteRequest struct {
	Target    ScanRequest
	From, To  int64   // append fixture rows From..To-1 (none when equal)
	DeleteIDs []int64 // then delete these ids with merge-on-read
}

// AppendDelete loads the table with iceberg-go, appends fixture rows in
// one commit, deletes ids in another, and scans the result through a
// fresh catalog connection.
func AppendDelete(ctx context.Context, req AppendDeleteRequest) (*ScanResult, error) {
	if req.To < req.From {
		return nil, errors.New("--to is below --from")
	}
	ns, name, err := splitTable(req.Target.Table)
	if err != nil {
		return nil, err
	}
	cat, closeCat, err := openCatalog(ctx, req.Target, true)
	if err != nil {
		return nil, err
	}
	if err := appendDelete(ctx, cat, append(ns, name), req); err != nil {
		closeCat()
		return nil, err
	}
	closeCat()
	return Scan(ctx, req.Target)
}

func appendDelete(ctx context.Context, cat catalog.Catalog, ident []string, req AppendDeleteRequest) error {
	tbl, err := cat.LoadTable(ctx, catalog.ToIdentifier(ident...))
	if err != nil {
		return fmt.Errorf("load %s: %w", req.Target.Table, err)
	}
	if req.To > req.From {
		_, evolved := tbl.Schema().FindFieldByName(EvolvedColumn)
		at := fixtureRecords(req.From, req.To, evolved)
		tbl, err = tbl.AppendTable(ctx, at, req.To-req.From, nil)
		at.Release()
		if err != nil {
			return fmt.Errorf("append rows %d..%d: %w", req.From, req.To-1, err)
		}
	}
	if len(req.DeleteIDs) > 0 {
		if _, err = tbl.Delete(ctx, iceberg.IsIn(iceberg.Reference("id"), req.DeleteIDs...), nil); err != nil {
			return fmt.Errorf("delete ids %v: %w", req.DeleteIDs, err)
		}
	}
	return nil
}
