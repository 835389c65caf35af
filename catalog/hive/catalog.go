package hive

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/user"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/caturi"
)

// Catalog properties, named as Java's HiveCatalog and Hive read them (a
// "hadoop." prefix, as Spark's catalog options carry Hadoop settings, is
// accepted too).
const (
	PropLockEnabled       = "iceberg.engine.hive.lock-enabled"
	PropHiveEngineEnabled = "iceberg.engine.hive.enabled"
	PropLockTimeoutMS     = "iceberg.hive.lock-timeout-ms"
	PropLockCheckMinMS    = "iceberg.hive.lock-check-min-wait-ms"
	PropLockCheckMaxMS    = "iceberg.hive.lock-check-max-wait-ms"
	PropLockHeartbeatMS   = "iceberg.hive.lock-heartbeat-interval-ms"
	PropTablePropMaxSize  = "iceberg.hive.table-property-max-size"
	PropSocketTimeout     = "hive.metastore.client.socket.timeout"
	PropFramedTransport   = "hive.metastore.thrift.framed.transport.enabled"
	// Table properties, as Java's TableProperties names them: they win
	// over the catalog's settings.
	TablePropLockEnabled       = "engine.hive.lock-enabled"
	TablePropHiveEngineEnabled = "engine.hive.enabled"
)

// Defaults, Java's (MetastoreLock, HiveOperationsBase); the socket timeout
// is shorter than Hive's 600 s so that a wrong port fails within a minute.
const (
	defaultLockTimeout    = 3 * time.Minute
	defaultLockCheckMin   = 50 * time.Millisecond
	defaultLockCheckMax   = 5 * time.Second
	defaultHeartbeat      = 4 * time.Minute
	defaultPropMaxSize    = 32672
	defaultSocketTimeout  = 60 * time.Second
	defaultConnectTimeout = 10 * time.Second
	defaultPort           = "9083"
)

// Catalog is a Hive Metastore catalog. It is safe for concurrent use.
type Catalog struct {
	name      string
	warehouse string
	pool      *pool
	ios       *catalog.FileIOs
	user      string
	host      string

	lockEnabled    bool
	hiveEngine     bool
	lockTimeout    time.Duration
	lockCheckMin   time.Duration
	lockCheckMax   time.Duration
	heartbeatEvery time.Duration
	propMaxSize    int

	tableMu    sync.Mutex
	tableLocks map[string]chan struct{} // per table, see processLock

	// beforeLock and beforeSwap, when set (by tests only), run after the
	// new metadata file is written, and between taking the lock (and
	// checking the location) and the alter_table that swaps it.
	beforeLock, beforeSwap func()
	// lockWaiting, when set (by tests only), runs when the metastore
	// answers a lock request with WAITING.
	lockWaiting func()
	// afterAlter, when set (by tests only), sees the alter_table's
	// outcome and may replace it: the metastore's answer seam.
	afterAlter func(error) error
}

var (
	_ catalog.Catalog          = (*Catalog)(nil)
	_ catalog.LocationProvider = (*Catalog)(nil)
)

// Open connects to the metastore cfg.URI names (thrift://host:port, or
// several, comma-separated, tried in order) and checks that it answers,
// changing nothing.
func Open(ctx context.Context, cfg catalog.Config) (*Catalog, error) {
	name := cfg.Name
	if name == "" {
		name = "default"
	}
	addrs, err := Addrs(cfg.URI)
	if err != nil {
		return nil, err
	}
	props := cfg.Props
	if err := refuseAuth(props); err != nil {
		return nil, fmt.Errorf("hive catalog %q: %w", name, err)
	}
	get := func(k string) string {
		if v, ok := props[k]; ok {
			return v
		}
		return props["hadoop."+k]
	}
	c := &Catalog{
		name:      name,
		warehouse: strings.TrimSuffix(cfg.Warehouse, "/"),
		ios:       catalog.NewFileIOs(props),
		user:      currentUser(),
		host:      hostname(),
	}
	opts := &options{addrs: addrs, connectTimeout: defaultConnectTimeout, socketTimeout: defaultSocketTimeout}
	var errs []error
	boolProp := func(k string, def bool) bool {
		v := get(k)
		if v == "" {
			return def
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: want true or false", k, v))
		}
		return b
	}
	msProp := func(k string, def time.Duration) time.Duration {
		v := get(k)
		if v == "" {
			return def
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("%s=%q: want milliseconds", k, v))
			return def
		}
		return time.Duration(n) * time.Millisecond
	}
	c.lockEnabled = boolProp(PropLockEnabled, true)
	c.hiveEngine = boolProp(PropHiveEngineEnabled, false)
	opts.framed = boolProp(PropFramedTransport, false)
	c.lockTimeout = msProp(PropLockTimeoutMS, defaultLockTimeout)
	c.lockCheckMin = msProp(PropLockCheckMinMS, defaultLockCheckMin)
	c.lockCheckMax = msProp(PropLockCheckMaxMS, defaultLockCheckMax)
	c.heartbeatEvery = msProp(PropLockHeartbeatMS, defaultHeartbeat)
	c.propMaxSize = defaultPropMaxSize
	if v := get(PropTablePropMaxSize); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("%s=%q: want a number of characters", PropTablePropMaxSize, v))
		}
		c.propMaxSize = n
	}
	if v := get(PropSocketTimeout); v != "" {
		d, err := hiveDuration(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: want seconds (600) or a duration (600s, 10m)", PropSocketTimeout, v))
		}
		opts.socketTimeout = d
	}
	if v := props["rest.client.socket-timeout-ms"]; v != "" {
		// --catalog-timeout sets this for every kind of catalog.
		opts.socketTimeout = msProp("rest.client.socket-timeout-ms", opts.socketTimeout)
	}
	if c.heartbeatEvery <= 0 {
		errs = append(errs, fmt.Errorf("%s must be positive", PropLockHeartbeatMS))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("hive catalog %q: %w", name, errors.Join(errs...))
	}
	c.pool = &pool{opts: opts}
	// One read proves the address is a metastore before anything is
	// attempted: a refusal is one clear line, with nothing changed.
	if _, err := c.getAllDatabases(ctx); err != nil {
		c.pool.close()
		return nil, fmt.Errorf("hive catalog %q at %s: %w", name, caturi.Redact(cfg.URI), describe(err))
	}
	return c, nil
}

// describe adds what to check to a connection error.
func describe(err error) error {
	var te *transportError
	if errors.As(err, &te) {
		return fmt.Errorf("%w (check the metastore's host and Thrift port, default 9083)", err)
	}
	return err
}

// Addrs parses a metastore URI list: thrift://host[:port], comma-separated,
// into host:port addresses (port 9083 when omitted), as Hive's
// hive.metastore.uris reads it.
func Addrs(uri string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(uri, ",") {
		part = strings.TrimSpace(part)
		u, err := url.Parse(part)
		if err != nil || !strings.EqualFold(u.Scheme, "thrift") || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return nil, &caturi.Error{URI: caturi.Redact(uri), Reason: "a Hive Metastore URI is thrift://host:port (several comma-separated)"}
		}
		host, port := u.Hostname(), u.Port()
		if port == "" {
			port = defaultPort
		}
		out = append(out, net.JoinHostPort(host, port))
	}
	return out, nil
}

// refuseAuth refuses the settings of a Kerberos (SASL) or TLS metastore,
// which this client does not speak: a clear refusal rather than a hang or a
// garbled reply.
func refuseAuth(props map[string]string) error {
	for _, k := range []string{"hive.metastore.sasl.enabled", "hadoop.hive.metastore.sasl.enabled", "hive.metastore.use.SSL", "hadoop.hive.metastore.use.SSL", "metastore.use.SSL"} {
		if strings.EqualFold(props[k], "true") {
			return fmt.Errorf("%s=true: icectl's Hive Metastore client speaks plain Thrift only; Kerberos (SASL) and TLS metastores are not supported yet", k)
		}
	}
	for _, k := range []string{"hadoop.security.authentication", "hadoop.hadoop.security.authentication"} {
		if v := props[k]; v != "" && !strings.EqualFold(v, "simple") {
			return fmt.Errorf("%s=%s: icectl's Hive Metastore client speaks plain Thrift only; Kerberos (SASL) metastores are not supported yet", k, v)
		}
	}
	return nil
}

// hiveDuration reads a Hive time setting: seconds, or a number with a unit
// (ms, s, m, h, d as Hive writes them, e.g. 600s).
func hiveDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(strings.ToLower(v))
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
		return time.Duration(n) * time.Second, nil
	}
	for suffix, unit := range map[string]string{"sec": "s", "min": "m", "d": "h"} {
		if strings.HasSuffix(v, suffix) && !strings.HasSuffix(v, "ms") {
			n, err := strconv.ParseInt(strings.TrimSuffix(v, suffix), 10, 64)
			if err == nil && n > 0 {
				if suffix == "d" {
					n *= 24
				}
				return time.ParseDuration(strconv.FormatInt(n, 10) + unit)
			}
		}
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("bad duration")
	}
	return d, nil
}

func currentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "icectl"
}

func hostname() string {
	if h, err := os.Hostname(); err == nil {
		return h
	}
	return "localhost"
}

// Name returns the catalog's name.
func (c *Catalog) Name() string { return c.name }

// OwnsMetadataFiles reports that this catalog writes the table's metadata
// files (as Java's HiveTableOperations does), so the committer deletes
// those that fall off the metadata log.
func (c *Catalog) OwnsMetadataFiles() bool { return true }

// Close closes the idle connections.
func (c *Catalog) Close() error { return c.pool.close() }

// database returns the metastore database of a namespace: Hive's
// namespaces have one level.
func database(ns []string) (string, error) {
	if err := catalog.ValidateNamespace(ns); err != nil {
		return "", err
	}
	if len(ns) != 1 {
		return "", fmt.Errorf("namespace %s: a Hive Metastore namespace is one database, without levels", strings.Join(ns, "."))
	}
	return ns[0], nil
}

func (c *Catalog) requireDatabase(ctx context.Context, ns []string) (*tstruct, error) {
	db, err := database(ns)
	if err != nil {
		return nil, err
	}
	d, err := c.getDatabase(ctx, db)
	if isRemote(err, "NoSuchObjectException") {
		return nil, fmt.Errorf("namespace %s: %w", db, catalog.ErrNoSuchNamespace)
	}
	if err != nil {
		return nil, fmt.Errorf("namespace %s: %w", db, err)
	}
	return d, nil
}

// ListNamespaces returns the databases (a database has no children).
func (c *Catalog) ListNamespaces(ctx context.Context, parent []string) ([][]string, error) {
	if len(parent) > 0 {
		if _, err := c.requireDatabase(ctx, parent); err != nil {
			return nil, fmt.Errorf("list namespaces: %w", err)
		}
		return nil, nil
	}
	dbs, err := c.getAllDatabases(ctx)
	if err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	sort.Strings(dbs)
	out := make([][]string, len(dbs))
	for i, d := range dbs {
		out[i] = []string{d}
	}
	return out, nil
}

// Namespace properties with a place of their own in a Database, as Java's
// HiveCatalog maps them.
const (
	nsPropComment   = "comment"
	nsPropLocation  = "location"
	nsPropOwner     = "hive.metastore.database.owner"
	nsPropOwnerType = "hive.metastore.database.owner-type"
)

// CreateNamespace creates a database, at props["location"], else
// <warehouse>/<name>.db (Java's rule), else where the metastore puts it.
func (c *Catalog) CreateNamespace(ctx context.Context, ns []string, props map[string]string) error {
	name, err := database(ns)
	if err != nil {
		return fmt.Errorf("create namespace: %w", err)
	}
	db := new(tstruct).str(dbName, name)
	params := map[string]string{}
	owner, ownerType := c.user, int32(principalUser)
	for k, v := range props {
		switch k {
		case nsPropComment:
			db.str(dbDescription, v)
		case nsPropLocation:
			db.str(dbLocation, v)
		case nsPropOwner:
			owner = v
		case nsPropOwnerType:
			t, ok := map[string]int32{"USER": 1, "ROLE": 2, "GROUP": 3}[strings.ToUpper(v)]
			if !ok {
				return fmt.Errorf("create namespace %s: %s=%q: want USER, ROLE or GROUP", name, k, v)
			}
			ownerType = t
		default:
			params[k] = v
		}
	}
	if _, ok := db.get(dbLocation); !ok && c.warehouse != "" {
		db.str(dbLocation, c.warehouse+"/"+name+".db")
	}
	db.set(dbParams, thrift.MAP, stringMap(params))
	db.str(dbOwnerName, owner).i32(dbOwnerType, ownerType)
	err = c.createDatabase(ctx, db)
	if isRemote(err, "AlreadyExistsException") {
		return fmt.Errorf("create namespace %s: %w", name, catalog.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

// DropNamespace drops an empty database; one holding any table (Iceberg
// or not) is refused by the metastore and stays.
func (c *Catalog) DropNamespace(ctx context.Context, ns []string) error {
	name, err := database(ns)
	if err != nil {
		return fmt.Errorf("drop namespace: %w", err)
	}
	err = c.dropDatabase(ctx, name)
	switch {
	case isRemote(err, "NoSuchObjectException"):
		return fmt.Errorf("drop namespace %s: %w", name, catalog.ErrNoSuchNamespace)
	case isRemote(err, "InvalidOperationException"):
		return fmt.Errorf("drop namespace %s: %w (it holds tables)", name, catalog.ErrNamespaceNotEmpty)
	case err != nil:
		return fmt.Errorf("drop namespace %s: %w", name, err)
	}
	return nil
}
