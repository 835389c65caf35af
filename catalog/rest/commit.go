package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"

	"github.com/google/uuid"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/spec"
)

type idempotencyKey struct{}

// WithIdempotencyKey returns a context whose commits carry key as their
// Idempotency-Key (when the server advertises support). A caller retrying
// one logical commit after ErrCommitStateUnknown passes the same key, so
// a server that applied the first attempt replays its answer instead of
// applying the commit twice.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyKey{}, key)
}

// NewIdempotencyKey returns a fresh key, a UUIDv7 as the REST spec asks.
func NewIdempotencyKey() (string, error) {
	u, err := uuid.NewV7()
	if err != nil {
		return "", fmt.Errorf("new idempotency key: %w", err)
	}
	return u.String(), nil
}

func idempotencyKeyFrom(ctx context.Context) string {
	k, _ := ctx.Value(idempotencyKey{}).(string)
	return k
}

// commitResponse is the REST CommitTableResponse.
type commitResponse struct {
	MetadataLocation string          `json:"metadata-location"`
	Metadata         json.RawMessage `json:"metadata"`
}

// CommitTable sends one commit: the server checks reqs against its current
// metadata and applies ups. It returns the new version with t's FileIO.
// A 409 wraps catalog.ErrCommitConflict; a server error, a timeout or a
// connection lost after the request went out wraps
// catalog.ErrCommitStateUnknown.
func (c *Catalog) CommitTable(ctx context.Context, t *catalog.Table, reqs []spec.Requirement, ups []spec.Update) (*catalog.Table, error) {
	if t == nil {
		return nil, errors.New("rest catalog: commit: nil table")
	}
	op := "rest catalog: commit table " + t.Ident.String()
	p, err := c.tablePath(t.Ident)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	body, err := commitBody(t.Ident, reqs, ups)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	cl := call{method: http.MethodPost, path: p, body: body}
	if c.idempotency {
		key := idempotencyKeyFrom(ctx)
		if key == "" {
			if key, err = NewIdempotencyKey(); err != nil {
				return nil, fmt.Errorf("%s: %w", op, err)
			}
		}
		cl.header = http.Header{"Idempotency-Key": {key}}
	}
	status, resp, err := c.send(ctx, cl)
	if err != nil {
		var se *sendError
		if errors.As(err, &se) && se.sent {
			return nil, fmt.Errorf("%s: %w: %w", op, catalog.ErrCommitStateUnknown, err)
		}
		return nil, fmt.Errorf("%s: not sent: %w", op, err)
	}
	if status != http.StatusOK {
		return nil, c.responseError(op, opCommit, catalog.ErrNoSuchTable, status, resp)
	}
	loc, md, err := decodeCommitResponse(resp)
	if err != nil {
		// The server says the commit happened, but its answer is unusable.
		return nil, fmt.Errorf("%s: %w: %w", op, catalog.ErrCommitStateUnknown, err)
	}
	return &catalog.Table{Ident: t.Ident, MetadataLocation: loc, Metadata: md, IO: t.IO}, nil
}

// decodeCommitResponse decodes a CommitTableResponse.
func decodeCommitResponse(body []byte) (string, *spec.TableMetadata, error) {
	var cr commitResponse
	if err := json.Unmarshal(body, &cr); err != nil {
		return "", nil, fmt.Errorf("malformed response: %w", err)
	}
	if cr.MetadataLocation == "" {
		return "", nil, fmt.Errorf("response has no metadata-location: %w", ErrUnexpected)
	}
	if len(cr.Metadata) == 0 || string(cr.Metadata) == "null" {
		return "", nil, fmt.Errorf("response has no metadata: %w", ErrUnexpected)
	}
	md, err := spec.ParseMetadata(cr.Metadata)
	if err != nil {
		return "", nil, fmt.Errorf("response metadata: %w", err)
	}
	return cr.MetadataLocation, md, nil
}

// isNil reports whether v is nil or a nil pointer, which would encode as
// JSON null and make the server reject the whole request.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// commitBody encodes a CommitTableRequest. Each update and requirement
// marshals itself to its REST object.
func commitBody(id catalog.Ident, reqs []spec.Requirement, ups []spec.Update) ([]byte, error) {
	if reqs == nil {
		reqs = []spec.Requirement{}
	}
	if ups == nil {
		ups = []spec.Update{}
	}
	for i, r := range reqs {
		if isNil(r) {
			return nil, fmt.Errorf("requirement %d is nil", i)
		}
	}
	for i, u := range ups {
		if isNil(u) {
			return nil, fmt.Errorf("update %d is nil", i)
		}
	}
	data, err := json.Marshal(struct {
		Identifier   identJSON          `json:"identifier"`
		Requirements []spec.Requirement `json:"requirements"`
		Updates      []spec.Update      `json:"updates"`
	}{toIdentJSON(id), reqs, ups})
	if err != nil {
		return nil, fmt.Errorf("encode commit request: %w", err)
	}
	return data, nil
}
