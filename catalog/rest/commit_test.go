package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/spec"
)

const commitRoute = "POST /v1/namespaces/db/tables/t"

func commitArgs() (*catalog.Table, []spec.Requirement, []spec.Update) {
	tbl := &catalog.Table{Ident: dbT}
	reqs := []spec.Requirement{spec.AssertTableUUID{UUID: "9c12d441-03fe-4693-9a96-a0705ddf69c1"}, spec.AssertRefSnapshotID{Ref: "main"}}
	ups := []spec.Update{spec.SetProperties{Updates: map[string]string{"k": "v"}}}
	return tbl, reqs, ups
}

func TestCommitSuccess(t *testing.T) {
	f := newFakeServer(t)
	c := f.open(t, nil)
	f.handle(commitRoute, reply(200, `{"metadata-location": "mem://wh/db/t/metadata/00001-b.metadata.json", "metadata": `+tableJSON+`}`))
	tbl, reqs, ups := commitArgs()
	got, err := c.CommitTable(context.Background(), tbl, reqs, ups)
	if err != nil {
		t.Fatal(err)
	}
	if got.MetadataLocation != "mem://wh/db/t/metadata/00001-b.metadata.json" || got.Metadata.FormatVersion != 2 || got.Ident.String() != "db.t" {
		t.Errorf("committed table %+v", got)
	}
	var body struct {
		Identifier   identJSON        `json:"identifier"`
		Requirements []map[string]any `json:"requirements"`
		Updates      []map[string]any `json:"updates"`
	}
	r := f.requests()[0]
	if err := json.Unmarshal([]byte(r.Body), &body); err != nil {
		t.Fatalf("commit body %s: %v", r.Body, err)
	}
	if body.Identifier.Name != "t" || len(body.Identifier.Namespace) != 1 || body.Identifier.Namespace[0] != "db" {
		t.Errorf("identifier %+v", body.Identifier)
	}
	if len(body.Requirements) != 2 || body.Requirements[0]["type"] != "assert-table-uuid" ||
		body.Requirements[1]["type"] != "assert-ref-snapshot-id" || body.Requirements[1]["snapshot-id"] != nil {
		t.Errorf("requirements %v", body.Requirements)
	}
	if _, ok := body.Requirements[1]["snapshot-id"]; !ok {
		t.Error("assert-ref-snapshot-id without snapshot-id: null means the ref must not exist and must be sent")
	}
	if len(body.Updates) != 1 || body.Updates[0]["action"] != "set-properties" {
		t.Errorf("updates %v", body.Updates)
	}
	if r.Header.Get("Idempotency-Key") != "" {
		t.Error("Idempotency-Key sent to a server that does not advertise it")
	}

	// Empty lists are sent as [], which the spec requires.
	if _, err := c.CommitTable(context.Background(), tbl, nil, nil); err != nil {
		t.Fatal(err)
	}
	if b := f.requests()[1].Body; !strings.Contains(b, `"requirements":[]`) || !strings.Contains(b, `"updates":[]`) {
		t.Errorf("empty commit body %s", b)
	}
	var nilUpdate *spec.SetProperties
	if _, err := c.CommitTable(context.Background(), tbl, nil, []spec.Update{nilUpdate}); err == nil {
		t.Error("commit with a nil update succeeded")
	}
}

func TestCommitStatusMapping(t *testing.T) {
	cases := []struct {
		status int
		typ    string
		want   error
	}{
		{409, "CommitFailedException", catalog.ErrCommitConflict},
		{500, "InternalServerError", catalog.ErrCommitStateUnknown},
		{502, "", catalog.ErrCommitStateUnknown},
		{503, "ServiceUnavailableException", catalog.ErrCommitStateUnknown},
		{504, "", catalog.ErrCommitStateUnknown},
		{404, "NoSuchTableException", catalog.ErrNoSuchTable},
		{404, "", catalog.ErrNoSuchTable},
		{400, "BadRequestException", ErrBadRequest},
		{401, "NotAuthorizedException", ErrNotAuthorized},
		{403, "ForbiddenException", ErrForbidden},
		{501, "NotImplementedException", ErrServer},
	}
	f := newFakeServer(t)
	c := f.open(t, nil)
	tbl, reqs, ups := commitArgs()
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.status, tc.typ), func(t *testing.T) {
			body := "<html>bad gateway</html>"
			if tc.typ != "" {
				body = fmt.Sprintf(`{"error": {"message": "msg %d", "type": %q, "code": %d}}`, tc.status, tc.typ, tc.status)
			}
			f.handle(commitRoute, reply(tc.status, body))
			_, err := c.CommitTable(context.Background(), tbl, reqs, ups)
			if !errors.Is(err, tc.want) {
				t.Fatalf("status %d: %v, want %v", tc.status, err, tc.want)
			}
			for _, other := range []error{catalog.ErrCommitConflict, catalog.ErrCommitStateUnknown} {
				if other != tc.want && errors.Is(err, other) {
					t.Errorf("status %d: %v is also %v", tc.status, err, other)
				}
			}
			if conflict := tc.status == 409; errors.Is(err, spec.ErrRequirementFailed) != conflict {
				t.Errorf("status %d: %v: wraps ErrRequirementFailed = %v, want %v", tc.status, err, !conflict, conflict)
			}
			var re *Error
			if !errors.As(err, &re) || re.Status != tc.status {
				t.Errorf("status %d: %v is not an *Error with that status", tc.status, err)
			}
			if !strings.Contains(err.Error(), "db.t") {
				t.Errorf("error %q does not name the table", err)
			}
		})
	}
}

func TestCommitTimeoutIsStateUnknown(t *testing.T) {
	f := newFakeServer(t)
	c := f.open(t, map[string]string{PropSocketTimeoutMS: "300"})
	release := make(chan struct{})
	defer close(release)
	accepted := make(chan struct{}, 1)
	f.handle(commitRoute, func(w http.ResponseWriter, r *http.Request) {
		accepted <- struct{}{} // the server has the commit and applies it, slowly
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
	})
	tbl, reqs, ups := commitArgs()
	start := time.Now()
	_, err := c.CommitTable(context.Background(), tbl, reqs, ups)
	if !errors.Is(err, catalog.ErrCommitStateUnknown) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hung commit: %v, want ErrCommitStateUnknown and DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("commit returned after %v, timeout was 300ms", d)
	}
	select {
	case <-accepted:
	default:
		t.Error("the server never saw the commit")
	}
}

func TestCommitConnectionResetIsStateUnknown(t *testing.T) {
	f := newFakeServer(t)
	c := f.open(t, nil)
	f.handle(commitRoute, func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetLinger(0) // RST instead of FIN
		}
		conn.Close()
	})
	tbl, reqs, ups := commitArgs()
	_, err := c.CommitTable(context.Background(), tbl, reqs, ups)
	if !errors.Is(err, catalog.ErrCommitStateUnknown) {
		t.Fatalf("reset after sending: %v, want ErrCommitStateUnknown", err)
	}
}

func TestCommitNotSentIsNotStateUnknown(t *testing.T) {
	f := newFakeServer(t)
	c := f.open(t, nil)
	// Nothing listens and no idle connection is left: the request cannot
	// reach a server. (A request written to a kept-alive connection the
	// server closes meanwhile is a different case: the client cannot tell
	// it from a server that failed after reading it, so it is unknown.)
	c.Close()
	f.srv.Close()
	tbl, reqs, ups := commitArgs()
	_, err := c.CommitTable(context.Background(), tbl, reqs, ups)
	if err == nil || errors.Is(err, catalog.ErrCommitStateUnknown) || errors.Is(err, catalog.ErrCommitConflict) {
		t.Fatalf("unreachable server: %v, want a plain error", err)
	}
}

func TestCommitContextCancelled(t *testing.T) {
	f := newFakeServer(t)
	c := f.open(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	f.handle(commitRoute, func(w http.ResponseWriter, r *http.Request) {
		cancel()
		<-r.Context().Done()
	})
	tbl, reqs, ups := commitArgs()
	_, err := c.CommitTable(ctx, tbl, reqs, ups)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, catalog.ErrCommitStateUnknown) {
		t.Fatalf("cancelled after sending: %v, want Canceled and ErrCommitStateUnknown", err)
	}
	// Cancelled before anything is sent: nothing can have happened.
	_, err = c.CommitTable(ctx, tbl, reqs, ups)
	if !errors.Is(err, context.Canceled) || errors.Is(err, catalog.ErrCommitStateUnknown) {
		t.Fatalf("cancelled before sending: %v, want Canceled only", err)
	}
}

var uuidV7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestCommitIdempotencyKey(t *testing.T) {
	f := newFakeServer(t)
	f.config = `{"defaults": {}, "overrides": {}, "idempotency-key-lifetime": "PT30M"}`
	c := f.open(t, nil)
	f.handle(commitRoute, reply(200, `{"metadata-location": "m", "metadata": `+tableJSON+`}`))
	tbl, reqs, ups := commitArgs()

	for i := 0; i < 2; i++ {
		if _, err := c.CommitTable(context.Background(), tbl, reqs, ups); err != nil {
			t.Fatal(err)
		}
	}
	k1, k2 := f.requests()[0].Header.Get("Idempotency-Key"), f.requests()[1].Header.Get("Idempotency-Key")
	if !uuidV7.MatchString(k1) || !uuidV7.MatchString(k2) || k1 == k2 {
		t.Errorf("generated keys %q, %q: want two distinct UUIDv7", k1, k2)
	}

	// A caller retrying one logical commit passes its key each time.
	key, err := NewIdempotencyKey()
	if err != nil {
		t.Fatal(err)
	}
	ctx := WithIdempotencyKey(context.Background(), key)
	f.handle(commitRoute, reply(503, `{"error": {"message": "busy", "type": "ServiceUnavailableException", "code": 503}}`))
	if _, err := c.CommitTable(ctx, tbl, reqs, ups); !errors.Is(err, catalog.ErrCommitStateUnknown) {
		t.Fatalf("503: %v", err)
	}
	f.handle(commitRoute, reply(200, `{"metadata-location": "m", "metadata": `+tableJSON+`}`))
	if _, err := c.CommitTable(ctx, tbl, reqs, ups); err != nil {
		t.Fatal(err)
	}
	reqsSeen := f.requests()
	for _, r := range reqsSeen[2:] {
		if got := r.Header.Get("Idempotency-Key"); got != key {
			t.Errorf("retry sent key %q, want %q", got, key)
		}
	}
}
