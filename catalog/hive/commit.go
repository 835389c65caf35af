package hive

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/google/uuid"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/iceberg/spec"
)

// Environment context keys of alter_table (Hive's
// hive_metastoreConstants, StatsSetupConst).
const (
	envExpectedKey   = "expected_parameter_key"
	envExpectedValue = "expected_parameter_value"
	envDoNotUpdate   = "DO_NOT_UPDATE_STATS"
)

// modifiedMsg starts the MetaException a Hive 4 metastore throws when the
// conditional alter finds another metadata location.
const modifiedMsg = "The table has been modified. The parameter value for key '" + paramMetadataLocation + "' is"

// CommitTable makes one commit attempt as Java's HiveTableOperations does:
//
//  1. load the table, check reqs and apply ups, write the next metadata file;
//  2. unless engine.hive.lock-enabled (table property) or
//     iceberg.engine.hive.lock-enabled (catalog) is false, take the
//     metastore's EXCLUSIVE table lock, the lock Java's MetastoreLock takes,
//     heartbeating it while held;
//  3. read the metastore table again and check that metadata_location is
//     still the one the attempt started from;
//  4. alter_table with metadata_location set to the new file and
//     previous_metadata_location to the old one; lock-free, conditional on
//     the old one (expected_parameter_key/value).
//
// As Java's, the alter is conditional only lock-free: under the lock the
// lock excludes the other writers that take it, and a metastore that
// cannot run the condition (Hive 4.0.1 and later on Derby) still serves
// locked commits. Lock-free, icectl relies on the condition alone, as
// Java does: that needs Hive 4 (HIVE-26882). So all writers of a table
// must agree on the mode, as in Java.
//
// A lost race (the location moved, the conditional alter refused) wraps
// ErrCommitConflict and removes the written file. A lock not granted in
// iceberg.hive.lock-timeout-ms wraps ErrCommitConflict too. A connection
// lost after the alter was sent, or a lost lock heartbeat, wraps
// ErrCommitStateUnknown and deletes nothing.
func (c *Catalog) CommitTable(ctx context.Context, t *catalog.Table, reqs []spec.Requirement, ups []spec.Update) (*catalog.Table, error) {
	id := t.Ident
	if err := id.Validate(); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	current, err := c.LoadTable(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w: %w", id, catalog.ErrCommitFailed, err)
	}
	md, err := catalog.ApplyCommit(current, reqs, ups, time.Now())
	if err != nil {
		return nil, err
	}
	loc := catalog.NewMetadataLocation(md, catalog.NextMetadataVersion(current.MetadataLocation, current.Metadata))
	fio, err := c.ios.For(ctx, loc)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", id, err)
	}
	if err := catalog.WriteMetadata(ctx, fio, loc, md); err != nil {
		return nil, fmt.Errorf("commit %s: %w: %w", id, catalog.ErrCommitFailed, err)
	}
	// The file is unreferenced until the alter lands; removing it is safe
	// only while that is certain.
	discard := func(cause error) error {
		return errors.Join(cause, reclaim.DeleteWritten(ctx, fio, md, []string{loc}))
	}

	if c.beforeLock != nil {
		c.beforeLock()
	}
	if c.lockEnabledFor(current.Metadata) {
		// One metastore lock request per table at a time from this
		// process, as Java's MetastoreLock keeps one per JVM: concurrent
		// requests of one client only load the metastore's lock tables.
		release, err := c.processLock(ctx, id)
		if err != nil {
			return nil, discard(fmt.Errorf("commit %s: %w: %w", id, catalog.ErrCommitFailed, err))
		}
		defer release()
		l, err := c.acquireLock(ctx, id)
		if err != nil {
			return nil, discard(fmt.Errorf("commit %s: %w", id, err))
		}
		defer l.release()
		next, err := c.swap(ctx, current, md, loc, l, discard)
		if err != nil {
			return nil, err
		}
		return &catalog.Table{Ident: id, MetadataLocation: loc, Metadata: next, IO: fio}, nil
	}
	next, err := c.swap(ctx, current, md, loc, nil, discard)
	if err != nil {
		return nil, err
	}
	return &catalog.Table{Ident: id, MetadataLocation: loc, Metadata: next, IO: fio}, nil
}

// swap checks the metastore table and alters it to point at loc.
func (c *Catalog) swap(ctx context.Context, current *catalog.Table, md *spec.TableMetadata, loc string, l *hmsLock, discard func(error) error) (*spec.TableMetadata, error) {
	id := current.Ident
	// Nothing was sent that could change the table yet: any failure up
	// to the alter is a definite one.
	tbl, now, err := c.hmsTable(ctx, id)
	if err != nil {
		return nil, discard(fmt.Errorf("commit %s: %w: %w", id, catalog.ErrCommitFailed, err))
	}
	if now != current.MetadataLocation {
		return nil, discard(fmt.Errorf("commit %s: metadata location changed since %s: %w", id, current.MetadataLocation, catalog.ErrCommitConflict))
	}
	var removed []string
	for k := range current.Metadata.Properties {
		if _, ok := md.Properties[k]; !ok {
			removed = append(removed, k)
		}
	}
	params := tbl.getStringMap(tblParams)
	if params == nil {
		params = map[string]string{}
	}
	c.setParameters(params, loc, current.MetadataLocation, md, removed)
	tbl.set(tblParams, thrift.MAP, stringMap(params))
	tbl.sub(tblSD, storageDescriptor(md, c.hiveEngineEnabled(md)))

	if c.beforeSwap != nil {
		c.beforeSwap()
	}
	if l != nil {
		if err := l.active(); err != nil {
			return nil, discard(fmt.Errorf("commit %s: %w: %w", id, catalog.ErrCommitFailed, err))
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, discard(fmt.Errorf("commit %s: %w: %w", id, catalog.ErrCommitFailed, err))
	}
	env := map[string]string{envDoNotUpdate: "true"}
	if l == nil {
		env[envExpectedKey] = paramMetadataLocation
		env[envExpectedValue] = current.MetadataLocation
	}
	err = c.alterTable(ctx, id.Namespace[0], id.Name, tbl, env)
	if c.afterAlter != nil {
		err = c.afterAlter(err)
	}
	if err != nil {
		// nil when a look afterwards finds the alter landed.
		if err := c.alterFailed(ctx, current, loc, err, discard); err != nil {
			return nil, err
		}
	}
	if l != nil {
		if err := l.active(); err != nil {
			// As Java: without the lock, a locking writer that read the
			// old location may overwrite this commit.
			return nil, fmt.Errorf("commit %s: landed as %s but the metastore lock was lost meanwhile (check the table's history): %w: %w", id, loc, catalog.ErrCommitStateUnknown, err)
		}
	}
	return md, nil
}

// alterFailed classifies a failed alter_table; nil means it landed after
// all.
func (c *Catalog) alterFailed(ctx context.Context, current *catalog.Table, loc string, err error, discard func(error) error) error {
	id := current.Ident
	var re *remoteError
	if errors.As(err, &re) && strings.Contains(re.Message, modifiedMsg) {
		// The metastore's conditional update refused it: another commit
		// moved the table.
		return discard(fmt.Errorf("commit %s: metadata location changed since %s: %w", id, current.MetadataLocation, catalog.ErrCommitConflict))
	}
	var te *transportError
	if errors.As(err, &te) && !te.sent {
		return discard(fmt.Errorf("commit %s: %w: %w", id, catalog.ErrCommitFailed, err))
	}
	// The alter may have landed: look, on a new connection.
	checkCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	_, now, checkErr := c.hmsTable(checkCtx, id)
	switch {
	case checkErr == nil && now == loc:
		return nil
	case checkErr == nil && re != nil && now == current.MetadataLocation:
		// The metastore answered with an exception and rolled back: the
		// table is as it was, for good.
		if strings.Contains(re.Message, "TABLE_PARAMS") && strings.Contains(re.Message, "PARAM_VALUE") {
			err = fmt.Errorf("%w (the metastore cannot run the conditional update lock-free commits need, as Hive 4.0.1 and later on a Derby database cannot: commit under the metastore lock, %s=true)", err, TablePropLockEnabled)
		}
		return discard(fmt.Errorf("commit %s: %w: %w", id, catalog.ErrCommitFailed, err))
	case checkErr == nil:
		// Another commit moved the table. The alter landed if that
		// commit was made on top of it, when loc is in the log of the
		// metadata now current (Java's check of the commit status).
		// Otherwise it did not land, for good, only when the metastore
		// answered: a request lost with the connection may still land.
		got, lerr := c.LoadTable(checkCtx, id)
		if lerr != nil {
			break
		}
		if got.MetadataLocation == loc || slices.ContainsFunc(got.Metadata.MetadataLog, func(e spec.MetadataLogEntry) bool { return e.MetadataFile == loc }) {
			return nil
		}
		if re != nil {
			return discard(fmt.Errorf("commit %s: metadata location changed since %s (the metastore answered %v): %w", id, current.MetadataLocation, err, catalog.ErrCommitConflict))
		}
	}
	return fmt.Errorf("commit %s: swap metadata location to %s: %w: %w", id, loc, catalog.ErrCommitStateUnknown, err)
}

// processLock takes the process-level lock of a table.
func (c *Catalog) processLock(ctx context.Context, id catalog.Ident) (func(), error) {
	c.tableMu.Lock()
	if c.tableLocks == nil {
		c.tableLocks = map[string]chan struct{}{}
	}
	key := id.String()
	ch, ok := c.tableLocks[key]
	if !ok {
		ch = make(chan struct{}, 1)
		c.tableLocks[key] = ch
	}
	c.tableMu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// hmsLock is a held metastore lock and its heartbeat.
type hmsLock struct {
	c    *Catalog
	id   int64
	stop context.CancelFunc
	done chan struct{}
	mu   sync.Mutex
	err  error // the heartbeat's failure
}

// acquireLock takes the EXCLUSIVE table lock Java's MetastoreLock takes,
// waiting for it with check_lock (exponential backoff between
// iceberg.hive.lock-check-min-wait-ms and -max-wait-ms, up to
// iceberg.hive.lock-timeout-ms), and heartbeats it while held.
func (c *Catalog) acquireLock(ctx context.Context, id catalog.Ident) (*hmsLock, error) {
	agent := "icectl-" + uuid.NewString()
	resp, err := c.lockCall(ctx, id.Namespace[0], id.Name, agent)
	var te *transportError
	if errors.As(err, &te) && te.sent {
		// The metastore may have made the lock and the answer been
		// lost: a lock nobody knows of would keep every writer off the
		// table until the metastore expires it (metastore.txn.timeout,
		// 300 s by default). Look it up by its agent and carry on with
		// it, as Java's MetastoreLock does.
		found, ok, ferr := c.findLock(ctx, id.Namespace[0], id.Name, agent)
		if ferr == nil && ok {
			resp, err = found, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("take the metastore lock: %w: %w", catalog.ErrCommitFailed, err)
	}
	deadline := time.Now().Add(c.lockTimeout)
	wait := c.lockCheckMin
	if resp.state == lockWaiting && c.lockWaiting != nil {
		c.lockWaiting()
	}
	for resp.state == lockWaiting {
		if time.Now().After(deadline) {
			c.unlockQuietly(ctx, resp.id)
			return nil, fmt.Errorf("timed out after %s waiting for the metastore lock (another writer holds it; iceberg.hive.lock-timeout-ms): %w", c.lockTimeout, catalog.ErrCommitConflict)
		}
		select {
		case <-ctx.Done():
			c.unlockQuietly(ctx, resp.id)
			return nil, fmt.Errorf("wait for the metastore lock: %w: %w", catalog.ErrCommitFailed, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(time.Duration(float64(wait)*1.5), c.lockCheckMax)
		id := resp.id
		if resp, err = c.checkLock(ctx, id); err != nil {
			c.unlockQuietly(ctx, id)
			return nil, fmt.Errorf("wait for the metastore lock: %w: %w", catalog.ErrCommitFailed, err)
		}
		resp.id = id
	}
	if resp.state != lockAcquired {
		c.unlockQuietly(ctx, resp.id)
		return nil, fmt.Errorf("the metastore lock request ended in state %d: %w", resp.state, catalog.ErrCommitFailed)
	}
	hbCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	l := &hmsLock{c: c, id: resp.id, stop: stop, done: make(chan struct{})}
	go l.heartbeat(hbCtx)
	return l, nil
}

// heartbeat keeps the lock alive, first after half an interval, as Java
// schedules it.
func (l *hmsLock) heartbeat(ctx context.Context) {
	defer close(l.done)
	wait := l.c.heartbeatEvery / 2
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = l.c.heartbeatEvery
		if err := l.c.heartbeat(ctx, l.id); err != nil {
			if ctx.Err() != nil {
				return
			}
			l.mu.Lock()
			l.err = fmt.Errorf("heartbeat of metastore lock %d: %w", l.id, err)
			l.mu.Unlock()
			return
		}
	}
}

func (l *hmsLock) active() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// release stops the heartbeat and unlocks. An unlock that fails leaves a
// lock the metastore expires after hive.txn.timeout; it changes nothing
// in the table.
func (l *hmsLock) release() {
	l.stop()
	<-l.done
	l.c.unlockQuietly(context.Background(), l.id)
}

func (c *Catalog) unlockQuietly(ctx context.Context, id int64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	_ = c.unlock(ctx, id)
}
