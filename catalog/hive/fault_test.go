package hive

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogtest"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// cutProxy forwards connections to the metastore and, once a request
// naming cutAfter has gone through, drops the connection before the
// metastore's reply comes back: the metastore gets the request, the
// client never hears the outcome. With refuseAfterCut, later connections
// are refused too (the metastore unreachable from then on).
type cutProxy struct {
	ln             net.Listener
	upstream       string
	cutAfter       []byte
	refuseAfterCut bool
	cut            atomic.Bool
	wg             sync.WaitGroup
}

func newCutProxy(t *testing.T, upstream, cutAfter string, refuse bool) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, upstream: upstream, cutAfter: []byte(cutAfter), refuseAfterCut: refuse}
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
					if bytes.Contains(buf[:n], p.cutAfter) && !p.cut.Load() {
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

// TestConnectionLostAfterAlter: the connection drops after the alter was
// sent. When the metastore answers a second look, the commit is known to
// have landed; when it is unreachable by then, the outcome is unknown and
// no file is deleted. The table is valid either way.
func TestConnectionLostAfterAlter(t *testing.T) {
	uri := testenv.Need(t, testenv.HiveMetastore, "a Hive Metastore (scripts/install-hms)")
	addrs, err := Addrs(uri)
	if err != nil {
		t.Fatal(err)
	}
	for _, refuse := range []bool{false, true} {
		ctx := context.Background()
		setup := openHMS(t, nil)
		id := catalog.Ident{Namespace: []string{prefix(t) + "cut"}, Name: "t"}
		first := catalogtest.NewTable(t, setup, id, nil)
		p := newCutProxy(t, addrs[0], "alter_table_with_environment_context", refuse)
		c, err := Open(ctx, catalog.Config{Name: "hms", URI: p.uri(), Warehouse: "file://" + t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		_, ups := catalogtest.AppendSnapshot(first.Metadata, 7)
		next, err := c.CommitTable(ctx, first, nil, ups)
		c.Close()
		got, lerr := setup.LoadTable(ctx, id)
		if lerr != nil {
			t.Fatalf("table after the cut: %v", lerr)
		}
		if got.Metadata.CurrentSnapshot() == nil || got.Metadata.CurrentSnapshot().SnapshotID != 7 {
			t.Fatalf("refuse=%v: the alter reached the metastore, but the table is at %s", refuse, got.MetadataLocation)
		}
		if !refuse {
			if err != nil || next.MetadataLocation != got.MetadataLocation {
				t.Errorf("second look possible: commit %v, want success at %s", err, got.MetadataLocation)
			}
			continue
		}
		if !errors.Is(err, catalog.ErrCommitStateUnknown) {
			t.Errorf("metastore unreachable after the alter: %v, want ErrCommitStateUnknown", err)
		}
		if _, err := fileio.ReadFile(ctx, got.IO, got.MetadataLocation); err != nil {
			t.Errorf("the current metadata file is gone: %v", err)
		}
		if files := catalogtest.MetadataFiles(t, got); len(files) != 2 {
			t.Errorf("metadata files %v, want both kept", files)
		}
	}
}
