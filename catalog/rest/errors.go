package rest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/spec"
)

// Errors for HTTP statuses that have no catalog-level meaning. An *Error
// wraps one of them or one of the catalog errors.
var (
	ErrBadRequest    = errors.New("bad request")       // 400
	ErrNotAuthorized = errors.New("not authorized")    // 401, 419
	ErrForbidden     = errors.New("forbidden")         // 403
	ErrServer        = errors.New("rest server error") // 5xx
	ErrUnexpected    = errors.New("unexpected response")
)

// Error is an error response from the REST server.
type Error struct {
	Op      string // what the client was doing, e.g. "load table db.t"
	Status  int
	Type    string // the server's error type, e.g. "CommitFailedException"
	Message string // the server's message, with known secrets removed
	// Hint says what to check, for a refusal of a SigV4-signed request.
	Hint string
	kind error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d %s", e.Op, e.Status, http.StatusText(e.Status))
	if e.Type != "" {
		fmt.Fprintf(&b, ": %s", e.Type)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.kind != nil && !strings.Contains(b.String(), e.kind.Error()) {
		fmt.Fprintf(&b, " (%v)", e.kind)
	}
	if e.Hint != "" {
		fmt.Fprintf(&b, "; %s", e.Hint)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.kind }

// errorResponse is the REST ErrorModel envelope.
type errorResponse struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    int    `json:"code"`
	} `json:"error"`
}

// opKind says how an operation reads the statuses whose meaning depends on
// what was asked.
type opKind int

const (
	opRead opKind = iota
	opCreate
	opCommit
)

// responseError turns a non-success response into an *Error. notFound is the
// catalog error a 404 means when the server does not say which object is
// missing.
func (c *Catalog) responseError(op string, kind opKind, notFound error, status int, body []byte) error {
	e := &Error{Op: op, Status: status}
	var resp errorResponse
	if json.Unmarshal(body, &resp) == nil && (resp.Error.Type != "" || resp.Error.Message != "") {
		e.Type = resp.Error.Type
		e.Message = resp.Error.Message
	} else if m := awsMessage(body); m != "" {
		e.Message = m
	} else if len(body) > 0 {
		e.Message = truncate(strings.TrimSpace(string(body)), 300)
	}
	e.Type = c.redact(e.Type)
	e.Message = c.redact(e.Message)
	e.kind = statusKind(kind, notFound, status, e.Type)
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		e.Hint = c.sigv4Hint()
	}
	if errors.Is(e.kind, catalog.ErrCommitConflict) {
		// A 409 is the server's CommitFailedException: a requirement
		// failed against its current metadata, as spec.Requirement
		// failures wrap ErrRequirementFailed in metastore catalogs.
		return fmt.Errorf("%w: %w", e, spec.ErrRequirementFailed)
	}
	return e
}

func statusKind(kind opKind, notFound error, status int, typ string) error {
	switch {
	case status == http.StatusNotFound:
		switch typ {
		case "NoSuchNamespaceException":
			return catalog.ErrNoSuchNamespace
		case "NoSuchTableException":
			return catalog.ErrNoSuchTable
		}
		return notFound
	case status == http.StatusConflict && typ == "NamespaceNotEmptyException":
		return catalog.ErrNamespaceNotEmpty
	case status == http.StatusConflict && kind == opCommit:
		return catalog.ErrCommitConflict
	case status == http.StatusConflict && kind == opCreate:
		return catalog.ErrAlreadyExists
	case kind == opCommit && status >= 500 && status != http.StatusNotImplemented && status != http.StatusHTTPVersionNotSupported:
		// The server may have applied the commit before failing (Java's
		// CommitErrorHandler: 500, 502, 503, 504). Any other 5xx but
		// "not implemented" is treated the same: guessing "failed" could
		// let a caller delete files of a commit that landed.
		return catalog.ErrCommitStateUnknown
	case status == http.StatusBadRequest:
		return ErrBadRequest
	case status == http.StatusUnauthorized || status == 419:
		return ErrNotAuthorized
	case status == http.StatusForbidden:
		return ErrForbidden
	case status >= 500:
		return ErrServer
	}
	return ErrUnexpected
}

// awsMessage returns the message of an AWS JSON error body ({"message":
// ...}, or "Message" as some services write it), "" for any other body.
func awsMessage(body []byte) string {
	var m struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	return truncate(strings.TrimSpace(m.Message), 300)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
