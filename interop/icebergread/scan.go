package icebergread

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"

	// Drivers for the SQL catalog: SQLite (pure Go on common platforms)
	// and PostgreSQL.
	_ "github.com/jackc/pgx/v5/stdlib"
	// s3://, gs:// and abfs:// (wasb://) files, for tables on object stores.
	_ "github.com/apache/iceberg-go/io/gocloud/azure"
	_ "github.com/apache/iceberg-go/io/gocloud/gcs"
	_ "github.com/apache/iceberg-go/io/gocloud/s3"
	_ "github.com/uptrace/bun/driver/sqliteshim"
)

// ScanRequest names a table and how to scan it.
type ScanRequest struct {
	CatalogURI  string // sqlite:////abs/path.db, sqlite:PATH, file:PATH or postgres://... (SQL catalog)
	RESTURI     string // http(s)://... (REST catalog); used instead of CatalogURI
	Warehouse   string // REST warehouse
	CatalogName string
	Table       string // ns.tbl; the last dot separates the table name
	SnapshotID  *int64
	Lineage     bool              // add _row_id and _last_updated_sequence_number
	Props       map[string]string // catalog and FileIO properties (s3.endpoint, ...)
}

// ScanResult is every live row of a table snapshot, as iceberg-go reads it
// (applying position deletes, deletion vectors and equality deletes).
// Rows are the JSON encoding of each row as an object keyed by column name,
// sorted bytewise; Checksum is the SHA-256 of the sorted rows, each followed
// by a newline.
type ScanResult struct {
	RowCount int64             `json:"row_count"`
	Checksum string            `json:"checksum"`
	Columns  []string          `json:"columns"`
	Rows     []json.RawMessage `json:"rows"`
}

// Scan opens the table through iceberg-go's catalog and reads it.
func Scan(ctx context.Context, req ScanRequest) (*ScanResult, error) {
	cat, closeCat, err := openCatalog(ctx, req, false)
	if err != nil {
		return nil, err
	}
	defer closeCat()
	i := strings.LastIndex(req.Table, ".")
	if i <= 0 || i == len(req.Table)-1 {
		return nil, fmt.Errorf("table %q: want ns.tbl", req.Table)
	}
	ident := catalog.ToIdentifier(append(strings.Split(req.Table[:i], "."), req.Table[i+1:])...)
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", req.Table, err)
	}
	var opts []table.ScanOption
	if req.SnapshotID != nil {
		opts = append(opts, table.WithSnapshotID(*req.SnapshotID))
	}
	if req.Lineage {
		opts = append(opts, table.WithRowLineage())
	}
	schema, batches, err := tbl.Scan(opts...).ToArrowRecords(ctx)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", req.Table, err)
	}
	res := &ScanResult{Rows: []json.RawMessage{}}
	for _, f := range schema.Fields() {
		res.Columns = append(res.Columns, f.Name)
	}
	for rec, err := range batches {
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", req.Table, err)
		}
		rows, err := encodeRows(rec.Schema().Fields(), rec.Columns(), int(rec.NumRows()))
		rec.Release()
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", req.Table, err)
		}
		res.Rows = append(res.Rows, rows...)
	}
	slices.SortFunc(res.Rows, func(a, b json.RawMessage) int { return bytes.Compare(a, b) })
	h := sha256.New()
	for _, r := range res.Rows {
		h.Write(r)
		h.Write([]byte{'\n'})
	}
	res.RowCount = int64(len(res.Rows))
	res.Checksum = hex.EncodeToString(h.Sum(nil))
	return res, nil
}

// openCatalog connects to the catalog req names. Only create (a writer)
// may create the SQL catalog's tables in the database; for SQL catalogs
// req.Warehouse, when set, is the root new tables are placed under.
func openCatalog(ctx context.Context, req ScanRequest, create bool) (catalog.Catalog, func(), error) {
	props := iceberg.Properties{}
	for k, v := range req.Props {
		props[k] = v
	}
	if req.RESTURI != "" {
		opts := []rest.Option{rest.WithAdditionalProps(props)}
		if req.Warehouse != "" {
			opts = append(opts, rest.WithWarehouseLocation(req.Warehouse))
		}
		cat, err := rest.NewCatalog(ctx, req.CatalogName, req.RESTURI, opts...)
		if err != nil {
			return nil, nil, fmt.Errorf("open REST catalog %s: %w", req.RESTURI, err)
		}
		return cat, func() {}, nil
	}
	driver, dsn, dialect, err := sqlTarget(req.CatalogURI)
	if err != nil {
		return nil, nil, err
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("open SQL catalog %s: %w", req.CatalogURI, err)
	}
	// A reader must not create catalog tables in someone else's database.
	props["init_catalog_tables"] = strconv.FormatBool(create)
	if req.Warehouse != "" {
		props["warehouse"] = req.Warehouse
	}
	cat, err := sqlcat.NewCatalog(req.CatalogName, db, dialect, props)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("open SQL catalog %s: %w", req.CatalogURI, err)
	}
	return cat, func() { cat.Close(); db.Close() }, nil
}

func sqlTarget(uri string) (driver, dsn string, dialect sqlcat.SupportedDialect, err error) {
	switch {
	case strings.HasPrefix(uri, "postgres://"), strings.HasPrefix(uri, "postgresql://"):
		return "pgx", uri, sqlcat.Postgres, nil
	case strings.HasPrefix(uri, "sqlite:///"):
		// icectl's grammar (SQLAlchemy's): sqlite:////abs/path.db is
		// absolute, sqlite:///rel/path.db relative.
		return "sqliteshim", "file:" + strings.TrimPrefix(uri, "sqlite:///"), sqlcat.SQLite, nil
	case strings.HasPrefix(uri, "sqlite://"):
		return "", "", "", fmt.Errorf("catalog URI %q: want sqlite:////abs/path.db or sqlite:///rel/path.db", uri)
	case strings.HasPrefix(uri, "sqlite:"):
		return "sqliteshim", "file:" + strings.TrimPrefix(uri, "sqlite:"), sqlcat.SQLite, nil
	case strings.HasPrefix(uri, "file:"):
		return "sqliteshim", uri, sqlcat.SQLite, nil
	case uri == "":
		return "", "", "", errors.New("no catalog URI")
	}
	return "", "", "", fmt.Errorf("catalog URI %q: want sqlite:////abs/path.db, sqlite:PATH, file:PATH or postgres://", uri)
}
