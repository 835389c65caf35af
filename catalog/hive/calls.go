package hive

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/thrift/lib/go/thrift"
)

// The metastore calls the catalog makes, by their names in
// hive_metastore.thrift. Field ids are those of Hive 4.0.1's IDL; the
// structs used here have had the same ids since Hive 2.

// Struct field ids (hive_metastore.thrift).
const (
	// Table
	tblName       = 1
	tblDB         = 2
	tblOwner      = 3
	tblCreateTime = 4
	tblLastAccess = 5
	tblRetention  = 6
	tblSD         = 7
	tblPartKeys   = 8
	tblParams     = 9
	tblType       = 12
	// StorageDescriptor
	sdCols         = 1
	sdLocation     = 2
	sdInputFormat  = 3
	sdOutputFormat = 4
	sdCompressed   = 5
	sdNumBuckets   = 6
	sdSerde        = 7
	// SerDeInfo
	serdeLib    = 2
	serdeParams = 3
	// Database
	dbName        = 1
	dbDescription = 2
	dbLocation    = 3
	dbParams      = 4
	dbOwnerName   = 6
	dbOwnerType   = 7
)

// Enum values.
const (
	principalUser  = 1  // PrincipalType.USER
	lockExclusive  = 3  // LockType.EXCLUSIVE, as Iceberg's MetastoreLock takes
	lockLevelTable = 2  // LockLevel.TABLE
	lockAcquired   = 1  // LockState.ACQUIRED
	lockWaiting    = 2  // LockState.WAITING
	opTypeUnset    = 5  // DataOperationType.UNSET
	noLimit        = -1 // max_tables: all
)

// isRemote reports whether err is the declared exception typ of a call.
func isRemote(err error, typ string) bool {
	var re *remoteError
	return errors.As(err, &re) && re.Type == typ
}

func (c *Catalog) getDatabase(ctx context.Context, name string) (*tstruct, error) {
	v, err := c.pool.do(ctx, "get_database", new(tstruct).str(1, name), true)
	if err != nil {
		return nil, err
	}
	db, ok := v.(*tstruct)
	if !ok {
		return nil, fmt.Errorf("metastore get_database: no result")
	}
	return db, nil
}

func (c *Catalog) getAllDatabases(ctx context.Context) ([]string, error) {
	v, err := c.pool.do(ctx, "get_all_databases", new(tstruct), true)
	if err != nil {
		return nil, err
	}
	return (&tstruct{fields: []field{{0, thrift.LIST, v}}}).getStrings(0), nil
}

func (c *Catalog) createDatabase(ctx context.Context, db *tstruct) error {
	_, err := c.pool.do(ctx, "create_database", new(tstruct).sub(1, db), false)
	return err
}

func (c *Catalog) dropDatabase(ctx context.Context, name string) error {
	args := new(tstruct).str(1, name).bool(2, false).bool(3, false) // deleteData, cascade
	_, err := c.pool.do(ctx, "drop_database", args, false)
	return err
}

// getTable reads a table with get_table_req: Hive 4.0.1 no longer serves
// get_table, and get_table_req has been there since Hive 2.
func (c *Catalog) getTable(ctx context.Context, db, name string) (*tstruct, error) {
	req := new(tstruct).str(1, db).str(2, name)
	v, err := c.pool.do(ctx, "get_table_req", new(tstruct).sub(1, req), true)
	if err != nil {
		return nil, err
	}
	res, _ := v.(*tstruct)
	if res == nil || res.getStruct(1) == nil {
		return nil, fmt.Errorf("metastore get_table_req: no table in the result")
	}
	return res.getStruct(1), nil
}

// icebergTableNames lists the tables of db whose table_type parameter is
// ICEBERG, with the filter Java's HiveCatalog.listTables uses.
func (c *Catalog) icebergTableNames(ctx context.Context, db string) ([]string, error) {
	filter := `hive_filter_field_params__table_type like "ICEBERG"`
	args := new(tstruct).str(1, db).str(2, filter).set(3, thrift.I16, int16(noLimit))
	v, err := c.pool.do(ctx, "get_table_names_by_filter", args, true)
	if err != nil {
		return nil, err
	}
	return (&tstruct{fields: []field{{0, thrift.LIST, v}}}).getStrings(0), nil
}

func (c *Catalog) createTable(ctx context.Context, tbl *tstruct) error {
	_, err := c.pool.do(ctx, "create_table", new(tstruct).sub(1, tbl), false)
	return err
}

func (c *Catalog) alterTable(ctx context.Context, db, name string, tbl *tstruct, env map[string]string) error {
	envCtx := new(tstruct).set(1, thrift.MAP, stringMap(env))
	args := new(tstruct).str(1, db).str(2, name).sub(3, tbl).sub(4, envCtx)
	_, err := c.pool.do(ctx, "alter_table_with_environment_context", args, false)
	return err
}

func (c *Catalog) dropTableCall(ctx context.Context, db, name string) error {
	args := new(tstruct).str(1, db).str(2, name).bool(3, false) // deleteData
	_, err := c.pool.do(ctx, "drop_table", args, false)
	return err
}

// lockResponse is a LockResponse: the lock's id and state.
type lockResponse struct {
	id    int64
	state int32
}

func parseLockResponse(v value) (lockResponse, error) {
	s, _ := v.(*tstruct)
	if s == nil {
		return lockResponse{}, fmt.Errorf("metastore lock: no result")
	}
	st, _ := s.get(2)
	state, _ := st.(int32)
	return lockResponse{id: s.getI64(1), state: state}, nil
}

func (c *Catalog) lockCall(ctx context.Context, db, table, agent string) (lockResponse, error) {
	comp := new(tstruct).i32(1, lockExclusive).i32(2, lockLevelTable).str(3, db).str(4, table).i32(6, opTypeUnset)
	req := new(tstruct).set(1, thrift.LIST, structList([]*tstruct{comp})).
		str(3, c.user).str(4, c.host).str(5, agent)
	v, err := c.pool.do(ctx, "lock", new(tstruct).sub(1, req), false)
	if err != nil {
		return lockResponse{}, err
	}
	return parseLockResponse(v)
}

func (c *Catalog) checkLock(ctx context.Context, id int64) (lockResponse, error) {
	v, err := c.pool.do(ctx, "check_lock", new(tstruct).sub(1, new(tstruct).i64(1, id)), true)
	if err != nil {
		return lockResponse{}, err
	}
	return parseLockResponse(v)
}

func (c *Catalog) unlock(ctx context.Context, id int64) error {
	_, err := c.pool.do(ctx, "unlock", new(tstruct).sub(1, new(tstruct).i64(1, id)), false)
	return err
}

func (c *Catalog) heartbeat(ctx context.Context, id int64) error {
	_, err := c.pool.do(ctx, "heartbeat", new(tstruct).sub(1, new(tstruct).i64(1, id).i64(2, 0)), false)
	return err
}

// findLock looks up, with show_locks, the lock of db.table whose request
// carried agent (the agentInfo each lock request of this package is
// unique by), as Java's MetastoreLock does after a lock call whose answer
// was lost. ok is false when the metastore holds no such lock.
func (c *Catalog) findLock(ctx context.Context, db, table, agent string) (resp lockResponse, ok bool, err error) {
	req := new(tstruct).str(1, db).str(2, table)
	v, err := c.pool.do(ctx, "show_locks", new(tstruct).sub(1, req), true)
	if err != nil {
		return lockResponse{}, false, err
	}
	s, _ := v.(*tstruct)
	if s == nil {
		return lockResponse{}, false, fmt.Errorf("metastore show_locks: no result")
	}
	l, _ := s.get(1)
	locks, _ := l.(*tlist)
	if locks == nil {
		return lockResponse{}, false, nil
	}
	for _, e := range locks.elems {
		el, _ := e.(*tstruct)
		if el == nil || el.getString(13) != agent {
			continue
		}
		st, _ := el.get(5)
		state, _ := st.(int32)
		return lockResponse{id: el.getI64(1), state: state}, true, nil
	}
	return lockResponse{}, false, nil
}
