package hive

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"maps"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogtest"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// cutProxy forwards connections to the metastore and, once the skip+1-th
// call of method cutAfter has gone through, drops the connection before
// the metastore's reply comes back: the metastore gets the request, the
// client never hears the outcome. With refuseAfterCut, later connections
// are refused too (the metastore unreachable from then on).
type cutProxy struct {
	ln             net.Listener
	upstream       string
	cutAfter       []byte // the method name as the binary protocol sends it, length first
	skip           atomic.Int32
	refuseAfterCut bool
	cut            atomic.Bool
	wg             sync.WaitGroup
}

func newCutProxy(t *testing.T, upstream, cutAfter string, skip int, refuse bool) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// "lock" must not match check_lock or unlock.
	name := binary.BigEndian.AppendUint32(nil, uint32(len(cutAfter)))
	p := &cutProxy{ln: ln, upstream: upstream, cutAfter: append(name, cutAfter...), refuseAfterCut: refuse}
	p.skip.Store(int32(skip))
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.wg.Wait() })
	return p
}

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.cut.Load() && p.refuseAfterCut {
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.upstream)
		if err != nil {
			c.Close()
			continue
		}
		p.wg.Add(2)
		mine := &atomic.Bool{}
		go func() { // client -> metastore
			defer p.wg.Done()
			buf := make([]byte, 64<<10)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					if bytes.Contains(buf[:n], p.cutAfter) && !p.cut.Load() && p.skip.Add(-1) < 0 {
						mine.Store(true)
					}
					up.Write(buf[:n])
				}
				if err != nil {
					up.Close()
					return
				}
			}
		}()
		go func() { // metastore -> client
			defer p.wg.Done()
			buf := make([]byte, 64<<10)
			for {
				n, err := up.Read(buf)
				if mine.Load() {
					p.cut.Store(true)
					c.Close()
					up.Close()
					return
				}
				if n > 0 {
					c.Write(buf[:n])
				}
				if err != nil {
					c.Close()
					return
				}
			}
		}()
	}
}

func (p *cutProxy) uri() string { return "thrift://" + p.ln.Addr().String() }

// TestConnectionLostAtEachStep: the connection to the metastore drops
// after one call of a commit was sent, at each call a commit makes (the
// lock, the wait for it, the look at the table under it, a heartbeat of
// the lock, the alter, the unlock), with the metastore reachable again at once or unreachable from
// then on. The table stays valid and holds either commit whole: before
// the alter the commit fails (a conflict or a failure, never "unknown")
// and removes the file it wrote; after the alter was sent it is known to
// have landed when a second look is possible and "state unknown" with
// every file kept when not; an unlock lost after the alter changes
// nothing the commit did. When the metastore is reachable again, no lock
// is left behind (a lock whose grant was lost is found by its agent and
// used, as Java's MetastoreLock does): the next writer commits at once.
func TestConnectionLostAtEachStep(t *testing.T) {
	uri := testenv.Need(t, testenv.HiveMetastore, "a Hive Metastore (scripts/install-hms)")
	addrs, err := Addrs(uri)
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		name, method string
		skip         int  // calls of method let through first
		waits        bool // another writer holds the lock: the commit waits (check_lock)
		holds        bool // the commit holds the lock long enough to heartbeat it
	}{
		{"Lock", "lock", 0, false, false},
		{"CheckLock", "check_lock", 0, true, false},
		// The first get_table_req is the commit's load, the second its
		// look under the lock.
		{"GetTable", "get_table_req", 1, false, false},
		// A lost heartbeat before the alter: the lock may lapse, so the
		// commit must not alter (Java fails it too).
		{"Heartbeat", "heartbeat", 0, false, true},
		{"Alter", "alter_table_with_environment_context", 0, false, false},
		{"Unlock", "unlock", 0, false, false},
	} {
		for _, refuse := range []bool{false, true} {
			name := step.name + map[bool]string{false: "Reconnects", true: "Unreachable"}[refuse]
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				fast := map[string]string{PropLockTimeoutMS: "1000", PropLockCheckMinMS: "50", PropLockCheckMaxMS: "100"}
				setup := openHMS(t, fast)
				id := catalog.Ident{Namespace: []string{prefix(t) + "cut"}, Name: "t"}
				first := catalogtest.NewTable(t, setup, id, nil)
				p := newCutProxy(t, addrs[0], step.method, step.skip, refuse)
				props := maps.Clone(fast)
				if step.holds {
					// The first heartbeat goes at half the interval.
					props[PropLockHeartbeatMS] = "200"
				}
				c, err := Open(ctx, catalog.Config{Name: "hms", URI: p.uri(), Warehouse: "file://" + t.TempDir(), Props: props})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				_, ups := catalogtest.AppendSnapshot(first.Metadata, 7)
				var next *catalog.Table
				attempt := func() { next, err = c.CommitTable(ctx, first, nil, ups) }
				want := []int64{7} // the snapshots the table may hold afterwards
				if step.holds {
					c.beforeSwap = func() { time.Sleep(time.Second) }
				}
				if step.waits {
					// setup holds the lock while c asks for it and waits,
					// then commits snapshot 8 itself.
					setup.beforeSwap = func() { setup.beforeSwap = nil; attempt() }
					_, ups8 := catalogtest.AppendSnapshot(first.Metadata, 8)
					if _, err := setup.CommitTable(ctx, first, nil, ups8); err != nil {
						t.Fatalf("the lock holder's commit: %v", err)
					}
					want = []int64{8}
				} else {
					attempt()
				}
				if !p.cut.Load() {
					t.Fatalf("the proxy never cut a %s call", step.method)
				}
				got, lerr := setup.LoadTable(ctx, id)
				if lerr != nil {
					t.Fatalf("table after the cut: %v", lerr)
				}
				if _, err := fileio.ReadFile(ctx, got.IO, got.MetadataLocation); err != nil {
					t.Fatalf("the current metadata file is gone: %v", err)
				}
				catalogtest.CheckMetadataLog(t, got)
				cur := got.Metadata.CurrentSnapshot()
				files := catalogtest.MetadataFiles(t, got)
				t.Logf("commit: %v; table at %s", err, got.MetadataLocation)
				switch {
				case err == nil:
					if cur == nil || cur.SnapshotID != 7 || next.MetadataLocation != got.MetadataLocation {
						t.Errorf("the commit succeeded as %s, but the table is at %s (snapshot %v)", next.MetadataLocation, got.MetadataLocation, cur)
					}
				case errors.Is(err, catalog.ErrCommitStateUnknown):
					if step.method != "alter_table_with_environment_context" || !refuse {
						t.Errorf("commit state unknown for a connection lost at %s (reconnect %v): %v", step.method, !refuse, err)
					}
					if len(files) != 2 {
						t.Errorf("state unknown, but metadata files are %v: want both kept", files)
					}
					want = []int64{0, 7} // either
				case errors.Is(err, catalog.ErrCommitFailed), errors.Is(err, catalog.ErrCommitConflict):
					if cur != nil && cur.SnapshotID == 7 {
						t.Errorf("the commit failed (%v), but the table holds its snapshot", err)
					}
					// The first, and the lock holder's when there is one.
					if len(files) != 1 && !step.waits || len(files) != 2 && step.waits {
						t.Errorf("failed commit: metadata files %v, want its own removed", files)
					}
					if !step.waits {
						want = []int64{0}
					}
				default:
					t.Errorf("commit: %v, want success, a failure, a conflict or (after the alter) state unknown", err)
				}
				var curID int64
				if cur != nil {
					curID = cur.SnapshotID
				}
				if !slices.Contains(want, curID) {
					t.Errorf("table at snapshot %d, want one of %v", curID, want)
				}
				if refuse {
					// A lock the metastore granted stays until it
					// expires (metastore.txn.timeout).
					return
				}
				// Reachable again, the client left no lock behind: the
				// next writer's lock is granted at once.
				_, ups9 := catalogtest.AppendSnapshot(got.Metadata, 9)
				if _, err := setup.CommitTable(ctx, got, nil, ups9); err != nil {
					t.Errorf("the next commit: %v", err)
				}
			})
		}
	}
}

// TestAlterFailedTableMoved: the alter fails and, when icectl looks, the
// table is at another writer's commit. The metastore's answer is
// replaced at the seam (afterAlter) by an error it could give; the
// metastore and the other writer are real. When the other commit was made
// on top of this one (its metadata log names this commit's file), the
// commit landed; when not and the metastore answered, it did not land, for
// good: a conflict, its file removed; when not and the connection was
// lost, the request may still land: state unknown, every file kept.
func TestAlterFailedTableMoved(t *testing.T) {
	answered := &remoteError{Method: "alter_table_with_environment_context", Type: "MetaException",
		Message: "javax.jdo.JDODataStoreException: Put request failed"}
	lost := &transportError{sent: true, err: errors.New("connection reset by peer")}
	for _, tc := range []struct {
		name     string
		landed   bool  // the real alter lands and the other writer commits on top of it
		answer   error // what icectl hears instead of the metastore's answer
		want     error // nil: success
		wantSnap int64 // the table's current snapshot afterwards
		files    int   // metadata files afterwards
	}{
		{"LandedThenSuperseded", true, answered, nil, 3, 3},
		{"NotLandedAnswered", false, answered, catalog.ErrCommitConflict, 2, 2},
		{"NotLandedLost", false, lost, catalog.ErrCommitStateUnknown, 2, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			a, b, id := newRacers(t, map[string]string{PropLockEnabled: "false"})
			base, err := a.LoadTable(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			var bErr error
			if tc.landed {
				a.afterAlter = func(err error) error {
					if err != nil {
						t.Errorf("the real alter: %v", err)
					}
					bErr = catalogtest.CommitWithRetry(ctx, b, id, 3)
					return tc.answer
				}
			} else {
				a.beforeSwap = func() { bErr = catalogtest.CommitWithRetry(ctx, b, id, 2) }
				a.afterAlter = func(error) error { return tc.answer }
			}
			_, ups := catalogtest.AppendSnapshot(base.Metadata, 7)
			next, err := a.CommitTable(ctx, base, nil, ups)
			if bErr != nil {
				t.Fatalf("the other writer's commit: %v", bErr)
			}
			switch {
			case tc.want == nil && err != nil:
				t.Fatalf("commit: %v, want success (it landed)", err)
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Fatalf("commit: %v, want %v", err, tc.want)
			}
			got, err := b.LoadTable(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if cur := got.Metadata.CurrentSnapshot(); cur == nil || cur.SnapshotID != tc.wantSnap {
				t.Errorf("table at snapshot %v, want %d", cur, tc.wantSnap)
			}
			if tc.landed {
				if _, ok := got.Metadata.SnapshotByID(7); !ok || next == nil {
					t.Errorf("the landed commit's snapshot is not in the table")
				}
			}
			if files := catalogtest.MetadataFiles(t, got); len(files) != tc.files {
				t.Errorf("metadata files %v, want %d", files, tc.files)
			}
		})
	}
}
