package hive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/iceberg/spec"
)

// HMS table parameters of the Iceberg protocol (Java's
// BaseMetastoreTableOperations).
const (
	paramTableType        = "table_type"
	paramMetadataLocation = "metadata_location"
	paramPrevious         = "previous_metadata_location"
	icebergTableType      = "ICEBERG"
)

// ListTables returns the Iceberg tables of the database ns names, sorted;
// the database's other tables (Hive's own, views) are not listed.
func (c *Catalog) ListTables(ctx context.Context, ns []string) ([]catalog.Ident, error) {
	if _, err := c.requireDatabase(ctx, ns); err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	names, err := c.icebergTableNames(ctx, ns[0])
	if err != nil {
		return nil, fmt.Errorf("list tables of %s: %w", ns[0], err)
	}
	sort.Strings(names)
	out := make([]catalog.Ident, len(names))
	for i, n := range names {
		out[i] = catalog.Ident{Namespace: []string{ns[0]}, Name: n}
	}
	return out, nil
}

// hmsTable reads the metastore's table id and checks that it is an
// Iceberg table: ErrNoSuchTable when it does not exist or is another kind
// of table, which icectl leaves alone.
func (c *Catalog) hmsTable(ctx context.Context, id catalog.Ident) (*tstruct, string, error) {
	db, err := database(id.Namespace)
	if err != nil {
		return nil, "", fmt.Errorf("table %s: %w", id, err)
	}
	tbl, err := c.getTable(ctx, db, id.Name)
	if isRemote(err, "NoSuchObjectException") {
		return nil, "", fmt.Errorf("table %s: %w", id, catalog.ErrNoSuchTable)
	}
	if err != nil {
		return nil, "", fmt.Errorf("look up table %s: %w", id, err)
	}
	params := tbl.getStringMap(tblParams)
	if typ := params[paramTableType]; !strings.EqualFold(typ, icebergTableType) {
		return nil, "", fmt.Errorf("table %s is not an Iceberg table (%s table, table_type %q); icectl leaves it alone: %w",
			id, tbl.getString(tblType), typ, catalog.ErrNoSuchTable)
	}
	loc := params[paramMetadataLocation]
	if loc == "" {
		return nil, "", fmt.Errorf("table %s: the metastore's table has no metadata_location", id)
	}
	return tbl, loc, nil
}

// LoadTable reads the table's current metadata.
func (c *Catalog) LoadTable(ctx context.Context, id catalog.Ident) (*catalog.Table, error) {
	if err := id.Validate(); err != nil {
		return nil, fmt.Errorf("load table: %w", err)
	}
	_, loc, err := c.hmsTable(ctx, id)
	if err != nil {
		return nil, err
	}
	return c.readTable(ctx, id, loc)
}

func (c *Catalog) readTable(ctx context.Context, id catalog.Ident, loc string) (*catalog.Table, error) {
	fio, err := c.ios.For(ctx, loc)
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", id, err)
	}
	md, err := catalog.ReadMetadata(ctx, fio, loc)
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", id, err)
	}
	return &catalog.Table{Ident: id, MetadataLocation: loc, Metadata: md, IO: fio}, nil
}

// DefaultLocation is where a new table goes, as Java's HiveCatalog puts
// it: <database location>/<table>, else <warehouse>/<db>.db/<table>.
func (c *Catalog) DefaultLocation(ctx context.Context, id catalog.Ident) (string, error) {
	d, err := c.requireDatabase(ctx, id.Namespace)
	if err != nil {
		return "", err
	}
	if loc := strings.TrimSuffix(d.getString(dbLocation), "/"); loc != "" {
		return loc + "/" + id.Name, nil
	}
	if c.warehouse == "" {
		return "", fmt.Errorf("table %s: database %s has no location and the catalog has no warehouse", id, id.Namespace[0])
	}
	return c.warehouse + "/" + id.Namespace[0] + ".db/" + id.Name, nil
}

// CreateTable writes md as metadata version 0 and creates the metastore
// table Java's HiveTableOperations would: an EXTERNAL_TABLE whose
// parameters carry table_type=ICEBERG and metadata_location.
func (c *Catalog) CreateTable(ctx context.Context, id catalog.Ident, md *spec.TableMetadata) (*catalog.Table, error) {
	if err := id.Validate(); err != nil {
		return nil, fmt.Errorf("create table: %w", err)
	}
	if _, err := c.requireDatabase(ctx, id.Namespace); err != nil {
		return nil, fmt.Errorf("create table %s: %w", id, err)
	}
	_, err := c.getTable(ctx, id.Namespace[0], id.Name)
	if err == nil {
		return nil, fmt.Errorf("create table %s: %w", id, catalog.ErrAlreadyExists)
	}
	if !isRemote(err, "NoSuchObjectException") {
		return nil, fmt.Errorf("create table %s: %w", id, err)
	}
	first := *md
	if first.Location == "" {
		if first.Location, err = c.DefaultLocation(ctx, id); err != nil {
			return nil, fmt.Errorf("create table %s: %w", id, err)
		}
	}
	first.Location = strings.TrimSuffix(first.Location, "/")
	loc := catalog.NewMetadataLocation(&first, 0)
	fio, err := c.ios.For(ctx, loc)
	if err != nil {
		return nil, fmt.Errorf("create table %s: %w", id, err)
	}
	if err := catalog.WriteMetadata(ctx, fio, loc, &first); err != nil {
		return nil, fmt.Errorf("create table %s: %w", id, err)
	}
	now := int32(time.Now().Unix())
	owner := first.Property("hive.metastore.table.owner", c.user)
	tbl := new(tstruct).str(tblName, id.Name).str(tblDB, id.Namespace[0]).str(tblOwner, owner).
		i32(tblCreateTime, now).i32(tblLastAccess, now).i32(tblRetention, 1<<31-1).
		sub(tblSD, storageDescriptor(&first, c.hiveEngineEnabled(&first))).
		set(tblPartKeys, thrift.LIST, &tlist{typ: thrift.LIST, etype: thrift.STRUCT}).
		str(tblType, "EXTERNAL_TABLE")
	params := map[string]string{"EXTERNAL": "TRUE"}
	c.setParameters(params, loc, "", &first, nil)
	tbl.set(tblParams, thrift.MAP, stringMap(params))
	err = c.createTable(ctx, tbl)
	if err == nil {
		return &catalog.Table{Ident: id, MetadataLocation: loc, Metadata: &first, IO: fio}, nil
	}
	var te *transportError
	if errors.As(err, &te) && te.sent {
		return nil, fmt.Errorf("create table %s: register %s: %w: %w", id, loc, catalog.ErrCommitStateUnknown, err)
	}
	// The metastore refused it (its transaction rolled back) or never got
	// it: nothing references the file.
	rmErr := reclaim.DeleteWritten(ctx, fio, &first, []string{loc})
	if isRemote(err, "AlreadyExistsException") {
		return nil, errors.Join(fmt.Errorf("create table %s: %w", id, catalog.ErrAlreadyExists), rmErr)
	}
	return nil, errors.Join(fmt.Errorf("create table %s: %w", id, err), rmErr)
}

// DropTable removes an Iceberg table from the metastore; its files stay
// (drop_table with deleteData false, as Java's dropTable without purge).
// Another kind of table is refused and left alone.
func (c *Catalog) DropTable(ctx context.Context, id catalog.Ident) error {
	if err := id.Validate(); err != nil {
		return fmt.Errorf("drop table: %w", err)
	}
	if _, _, err := c.hmsTable(ctx, id); err != nil {
		return fmt.Errorf("drop table: %w", err)
	}
	err := c.dropTableCall(ctx, id.Namespace[0], id.Name)
	if isRemote(err, "NoSuchObjectException") {
		return fmt.Errorf("drop table %s: %w", id, catalog.ErrNoSuchTable)
	}
	if err != nil {
		return fmt.Errorf("drop table %s: %w", id, err)
	}
	return nil
}

func (c *Catalog) hiveEngineEnabled(md *spec.TableMetadata) bool {
	if v, ok := md.Properties[TablePropHiveEngineEnabled]; ok {
		b, _ := strconv.ParseBool(v)
		return b
	}
	return c.hiveEngine
}

func (c *Catalog) lockEnabledFor(md *spec.TableMetadata) bool {
	if v, ok := md.Properties[TablePropLockEnabled]; ok {
		b, _ := strconv.ParseBool(v)
		return b
	}
	return c.lockEnabled
}

// storageDescriptor is the StorageDescriptor Java's HiveOperationsBase
// writes on every commit: the current schema's columns in Hive types and
// the table location, with Hive's Iceberg input/output formats and SerDe
// when the Hive engine is enabled.
func storageDescriptor(md *spec.TableMetadata, hiveEngine bool) *tstruct {
	var cols []*tstruct
	if s := md.CurrentSchema(); s != nil {
		for _, f := range s.Fields {
			col := new(tstruct).str(1, f.Name).str(2, hiveType(f.Type))
			if f.Doc != "" {
				col.str(3, f.Doc)
			}
			cols = append(cols, col)
		}
	}
	in, out, serde := "org.apache.hadoop.mapred.FileInputFormat", "org.apache.hadoop.mapred.FileOutputFormat", "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
	if hiveEngine {
		in, out, serde = "org.apache.iceberg.mr.hive.HiveIcebergInputFormat", "org.apache.iceberg.mr.hive.HiveIcebergOutputFormat", "org.apache.iceberg.mr.hive.HiveIcebergSerDe"
	}
	serdeInfo := new(tstruct).str(serdeLib, serde).set(serdeParams, thrift.MAP, stringMap(nil))
	return new(tstruct).set(sdCols, thrift.LIST, structList(cols)).str(sdLocation, md.Location).
		str(sdInputFormat, in).str(sdOutputFormat, out).bool(sdCompressed, false).i32(sdNumBuckets, 0).
		sub(sdSerde, serdeInfo)
}

// hiveType is the Hive type of an Iceberg type, as Java's HiveSchemaUtil
// converts it (for a Hive 3+ metastore).
func hiveType(t spec.Type) string {
	switch t := t.(type) {
	case spec.BooleanType:
		return "boolean"
	case spec.IntType:
		return "int"
	case spec.LongType:
		return "bigint"
	case spec.FloatType:
		return "float"
	case spec.DoubleType:
		return "double"
	case spec.DateType:
		return "date"
	case spec.TimeType, spec.StringType, spec.UUIDType:
		return "string"
	case spec.TimestampType, spec.TimestampNsType:
		return "timestamp"
	case spec.TimestampTzType, spec.TimestampTzNsType:
		return "timestamp with local time zone"
	case spec.FixedType, spec.BinaryType:
		return "binary"
	case spec.DecimalType:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale)
	case *spec.StructType:
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			parts[i] = f.Name + ":" + hiveType(f.Type)
		}
		return "struct<" + strings.Join(parts, ",") + ">"
	case *spec.ListType:
		return "array<" + hiveType(t.Element) + ">"
	case *spec.MapType:
		return "map<" + hiveType(t.Key) + "," + hiveType(t.Value) + ">"
	}
	return "unknown"
}

// Parameters Java keeps in step with the metadata (TableProperties,
// StatsSetupConst).
const (
	paramUUID            = "uuid"
	paramSnapshotCount   = "snapshot-count"
	paramCurrentSnapID   = "current-snapshot-id"
	paramCurrentSnapTS   = "current-snapshot-timestamp-ms"
	paramCurrentSummary  = "current-snapshot-summary"
	paramCurrentSchema   = "current-schema"
	paramDefaultSpec     = "default-partition-spec"
	paramDefaultSort     = "default-sort-order"
	paramStorageHandler  = "storage_handler"
	paramNumFiles        = "numFiles"
	paramNumRows         = "numRows"
	paramTotalSize       = "totalSize"
	paramColStatsAcc     = "COLUMN_STATS_ACCURATE"
	paramDoNotUpdate     = "DO_NOT_UPDATE_STATS"
	icebergStorageHandle = "org.apache.iceberg.mr.hive.HiveIcebergStorageHandler"
)

// setParameters updates a metastore table's parameters for metadata md at
// loc, as Java's HMSTablePropertyHelper.updateHmsTableForIcebergTable does
// (the properties pushed down, the ones removed since the previous
// version dropped, the current snapshot's figures), plus the stats
// settings of HiveTableOperations.doCommit.
func (c *Catalog) setParameters(params map[string]string, loc, previous string, md *spec.TableMetadata, removed []string) {
	for k, v := range md.Properties {
		if strings.EqualFold(k, "hive.metastore.table.owner") {
			continue
		}
		if k == "gc.enabled" {
			k = "external.table.purge"
		}
		params[k] = v
	}
	if md.TableUUID != "" {
		params[paramUUID] = md.TableUUID
	}
	for _, k := range removed {
		delete(params, k)
	}
	params[paramTableType] = icebergTableType
	params[paramMetadataLocation] = loc
	if previous != "" {
		params[paramPrevious] = previous
	}
	expose := c.propMaxSize > 0
	setField := func(k, v string) {
		if len(v) <= c.propMaxSize {
			params[k] = v
		}
	}
	delete(params, paramCurrentSchema)
	if s := md.CurrentSchema(); expose && s != nil {
		if b, err := json.Marshal(s); err == nil {
			setField(paramCurrentSchema, string(b))
		}
	}
	if c.hiveEngineEnabled(md) {
		params[paramStorageHandler] = icebergStorageHandle
	} else {
		delete(params, paramStorageHandler)
	}
	snap := md.CurrentSnapshot()
	if snap != nil {
		for from, to := range map[string]string{"total-data-files": paramNumFiles, "total-records": paramNumRows, "total-files-size": paramTotalSize} {
			if v, ok := snap.Summary[from]; ok {
				params[to] = v
			}
		}
	}
	delete(params, paramCurrentSnapID)
	delete(params, paramCurrentSnapTS)
	delete(params, paramCurrentSummary)
	if expose && snap != nil {
		params[paramCurrentSnapID] = strconv.FormatInt(snap.SnapshotID, 10)
		params[paramCurrentSnapTS] = strconv.FormatInt(snap.TimestampMS, 10)
		if b, err := json.Marshal(snap.Summary); err == nil {
			setField(paramCurrentSummary, string(b))
		}
	}
	params[paramSnapshotCount] = strconv.Itoa(len(md.Snapshots))
	delete(params, paramDefaultSpec)
	if ps := md.DefaultSpec(); expose && ps != nil && len(ps.Fields) > 0 {
		if b, err := json.Marshal(ps); err == nil {
			setField(paramDefaultSpec, string(b))
		}
	}
	delete(params, paramDefaultSort)
	if so, ok := md.SortOrderByID(md.DefaultSortOrderID); expose && ok && len(so.Fields) > 0 {
		if b, err := json.Marshal(so); err == nil {
			setField(paramDefaultSort, string(b))
		}
	}
	delete(params, paramColStatsAcc)
	params[paramDoNotUpdate] = "TRUE"
}
