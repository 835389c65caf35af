package hive

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
)

// conn is one connection to the metastore: a socket, the buffered (or
// framed) transport and the binary protocol HMS serves by default. It is
// used by one goroutine at a time (the pool hands it out).
type conn struct {
	nc    net.Conn
	trans thrift.TTransport
	prot  thrift.TProtocol
	seq   int32
	// broken is set after a transport error: the stream may hold half a
	// reply, so the connection is never reused.
	broken bool
}

// options are the connection settings of a catalog.
type options struct {
	addrs          []string // host:port, tried in order
	connectTimeout time.Duration
	socketTimeout  time.Duration // bounds each call
	framed         bool
}

func dial(ctx context.Context, o *options) (*conn, error) {
	var errs []error
	for _, addr := range o.addrs {
		d := net.Dialer{Timeout: o.connectTimeout}
		nc, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cfg := &thrift.TConfiguration{}
		var trans thrift.TTransport = thrift.NewStreamTransport(nc, nc)
		if o.framed {
			trans = thrift.NewTFramedTransportConf(trans, cfg)
		}
		return &conn{nc: nc, trans: trans, prot: thrift.NewTBinaryProtocolConf(trans, cfg)}, nil
	}
	return nil, &transportError{err: errors.Join(errs...)}
}

func (c *conn) close() error { return c.nc.Close() }

// transportError is a failure of the connection rather than an answer of
// the metastore. sent says whether the request may have reached the server
// (it was flushed, or the error came while flushing).
type transportError struct {
	sent bool
	err  error
}

func (e *transportError) Error() string {
	if e.sent {
		return fmt.Sprintf("metastore connection failed after the request was sent: %v", e.err)
	}
	return fmt.Sprintf("cannot reach the metastore: %v", e.err)
}

func (e *transportError) Unwrap() error { return e.err }

// remoteError is an exception the metastore declared for the call
// (MetaException, NoSuchObjectException, ...).
type remoteError struct {
	Method  string
	Type    string
	Message string
}

func (e *remoteError) Error() string {
	return fmt.Sprintf("metastore %s: %s: %s", e.Method, e.Type, e.Message)
}

// exceptions names the declared exceptions of each call by result field id
// (1, 2, ...), in the order of hive_metastore.thrift.
var exceptions = map[string][]string{
	"get_database":                         {"NoSuchObjectException", "MetaException"},
	"get_all_databases":                    {"MetaException"},
	"create_database":                      {"AlreadyExistsException", "InvalidObjectException", "MetaException"},
	"drop_database":                        {"NoSuchObjectException", "InvalidOperationException", "MetaException"},
	"get_table_req":                        {"MetaException", "NoSuchObjectException"},
	"get_all_tables":                       {"MetaException"},
	"get_table_names_by_filter":            {"MetaException", "InvalidOperationException", "UnknownDBException"},
	"create_table":                         {"AlreadyExistsException", "InvalidObjectException", "MetaException", "NoSuchObjectException"},
	"alter_table_with_environment_context": {"InvalidOperationException", "MetaException"},
	"drop_table":                           {"NoSuchObjectException", "MetaException"},
	"lock":                                 {"NoSuchTxnException", "TxnAbortedException"},
	"check_lock":                           {"NoSuchTxnException", "TxnAbortedException", "NoSuchLockException"},
	"unlock":                               {"NoSuchLockException", "TxnOpenException"},
	"heartbeat":                            {"NoSuchLockException", "NoSuchTxnException", "TxnAbortedException"},
}

// call makes one request and returns the result struct's success field
// (nil for a void call). A declared exception is a *remoteError, a
// failure of the connection a *transportError, an undeclared failure
// (unknown method, internal error) a thrift.TApplicationException.
func (c *conn) call(ctx context.Context, method string, args *tstruct, timeout time.Duration) (value, error) {
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := c.nc.SetDeadline(deadline); err != nil {
		c.broken = true
		return nil, &transportError{err: err}
	}
	// Cancelling ctx aborts a blocked read or write.
	stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	c.seq++
	sent := false
	fail := func(err error) (value, error) {
		c.broken = true
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = fmt.Errorf("%w (%v)", ctxErr, err)
		}
		return nil, &transportError{sent: sent, err: err}
	}
	if err := c.prot.WriteMessageBegin(ctx, method, thrift.CALL, c.seq); err != nil {
		return fail(err)
	}
	if err := writeStruct(ctx, c.prot, args); err != nil {
		return fail(err)
	}
	if err := c.prot.WriteMessageEnd(ctx); err != nil {
		return fail(err)
	}
	sent = true
	if err := c.prot.Flush(ctx); err != nil {
		return fail(err)
	}
	name, typ, seq, err := c.prot.ReadMessageBegin(ctx)
	if err != nil {
		return fail(err)
	}
	if typ == thrift.EXCEPTION {
		exc := thrift.NewTApplicationException(thrift.UNKNOWN_APPLICATION_EXCEPTION, "")
		if err := exc.Read(ctx, c.prot); err != nil {
			return fail(err)
		}
		if err := c.prot.ReadMessageEnd(ctx); err != nil {
			return fail(err)
		}
		return nil, exc
	}
	if typ != thrift.REPLY || name != method || seq != c.seq {
		return fail(fmt.Errorf("unexpected reply %q (type %d, seq %d) to %s: is this a Hive Metastore's Thrift port?", name, typ, seq, method))
	}
	res, err := readStruct(ctx, c.prot, 0)
	if err != nil {
		return fail(err)
	}
	if err := c.prot.ReadMessageEnd(ctx); err != nil {
		return fail(err)
	}
	for _, f := range res.fields {
		if f.id == 0 {
			continue
		}
		exc, _ := f.val.(*tstruct)
		if exc == nil {
			continue
		}
		typName := fmt.Sprintf("exception %d", f.id)
		if names := exceptions[method]; int(f.id) <= len(names) && f.id > 0 {
			typName = names[f.id-1]
		}
		return nil, &remoteError{Method: method, Type: typName, Message: exc.getString(1)}
	}
	v, _ := res.get(0)
	return v, nil
}

// pool hands out connections; idle ones are kept for reuse. Thrift
// connections carry one call at a time, and commits run a heartbeat beside
// their calls, so the catalog needs more than one.
type pool struct {
	opts *options
	mu   sync.Mutex
	idle []*conn
}

const maxIdle = 4

// do runs one call on a pooled connection, dialling when none is idle. A
// read (readOnly) that fails on a reused connection, which the server may
// have closed meanwhile, is tried once more on a new one; a write never
// is, since it may have happened.
func (p *pool) do(ctx context.Context, method string, args *tstruct, readOnly bool) (value, error) {
	c, reused, err := p.get(ctx)
	if err != nil {
		return nil, err
	}
	v, err := c.call(ctx, method, args, p.opts.socketTimeout)
	p.put(c)
	var te *transportError
	if reused && readOnly && errors.As(err, &te) && ctx.Err() == nil {
		if c, err = dial(ctx, p.opts); err != nil {
			return nil, err
		}
		v, err = c.call(ctx, method, args, p.opts.socketTimeout)
		p.put(c)
	}
	return v, err
}

func (p *pool) get(ctx context.Context) (c *conn, reused bool, err error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, true, nil
	}
	p.mu.Unlock()
	c, err = dial(ctx, p.opts)
	return c, false, err
}

func (p *pool) put(c *conn) {
	if c.broken {
		c.close()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle) >= maxIdle {
		c.close()
		return
	}
	p.idle = append(p.idle, c)
}

func (p *pool) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for _, c := range p.idle {
		errs = append(errs, c.close())
	}
	p.idle = nil
	return errors.Join(errs...)
}
