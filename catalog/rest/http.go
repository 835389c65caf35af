package rest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync/atomic"
)

// maxResponse bounds a response body; table metadata of tables with many
// snapshots runs to tens of megabytes.
const maxResponse = 512 << 20

// call is one REST request.
type call struct {
	method string
	path   string // escaped, relative to the catalog URI: "v1/config"
	query  url.Values
	body   []byte // JSON, nil for none
	header http.Header
}

// sendError is a request that got no response. sent says whether the
// request may have reached the server (its headers were written), which
// decides whether a commit's outcome is unknown.
type sendError struct {
	sent bool
	err  error
}

func (e *sendError) Error() string { return e.err.Error() }
func (e *sendError) Unwrap() error { return e.err }

// send runs the call with authentication, fetching a new token and sending
// once more when the server answers 401 and the client can get one. It
// returns the status and body of the response, or a *sendError.
func (c *Catalog) send(ctx context.Context, cl call) (int, []byte, error) {
	for attempt := 0; ; attempt++ {
		auth, err := c.auth.header(ctx)
		if err != nil {
			return 0, nil, &sendError{err: err}
		}
		status, body, err := c.roundTrip(ctx, cl, auth)
		if err != nil || attempt > 0 || (status != http.StatusUnauthorized && status != 419) {
			return status, body, err
		}
		// A 401 means the request was refused before it was processed, so
		// sending it again, even a commit, cannot apply it twice.
		retry, err := c.auth.rejected(ctx, auth)
		if err != nil {
			return 0, nil, &sendError{err: err}
		}
		if !retry {
			return status, body, nil
		}
	}
}

func (c *Catalog) roundTrip(ctx context.Context, cl call, auth string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var sent atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteHeaders: func() { sent.Store(true) },
	})
	u := c.uri + "/" + cl.path
	if len(cl.query) > 0 {
		u += "?" + cl.query.Encode()
	}
	var body io.Reader
	if cl.body != nil {
		body = bytes.NewReader(cl.body)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, u, body)
	if err != nil {
		return 0, nil, &sendError{err: fmt.Errorf("build request: %w", err)}
	}
	for k, vs := range cl.header {
		req.Header[k] = vs
	}
	if cl.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "icectl")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if c.signer != nil {
		// Signed last, over every header set above and the body.
		if err := c.signer.Sign(ctx, req, cl.body); err != nil {
			return 0, nil, &sendError{err: signError(err)}
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, &sendError{sent: sent.Load(), err: c.transportError(ctx, err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		// The server answered, so it did receive the request.
		return 0, nil, &sendError{sent: true, err: c.transportError(ctx, fmt.Errorf("read response: %w", err))}
	}
	if len(data) > maxResponse {
		return 0, nil, &sendError{sent: true, err: fmt.Errorf("response larger than %d bytes", maxResponse)}
	}
	return resp.StatusCode, data, nil
}

// transportError keeps err's chain (so errors.Is finds
// context.DeadlineExceeded or a net.Error) and strips secrets from its text.
func (c *Catalog) transportError(ctx context.Context, err error) error {
	msg := c.redact(err.Error())
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		msg = fmt.Sprintf("%s (request timeout %v)", msg, c.timeout)
	}
	return &redactedError{msg: msg, err: err}
}

// redactedError is an error whose text had secrets removed.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
