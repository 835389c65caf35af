package testenv

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// SigV4Gate is an HTTP server in front of the REST catalog server that
// checks AWS Signature Version 4 on every request the way AWS's Iceberg
// REST endpoints (Glue, S3 Tables) do, refusing with 403 and AWS's error
// type and message what they would refuse, and forwards the rest to the
// real server.
//
// The check is written here from AWS's description of the algorithm
// (docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html):
// canonical request, string to sign, the HMAC-SHA256 key chain. It shares
// no code with the signer under test (the AWS SDK's, which check-imports
// keeps out of this package), so a request the gate accepts is one the
// algorithm accepts, not one the signer agrees with itself about.
//
// Beyond AWS's own checks the gate holds the client to what Java's
// RESTSigV4AuthSession sends: an X-Amz-Content-Sha256 header, signed and
// equal to the body's hash, and every X-Amz-* and Original-Authorization
// header signed.
type SigV4Gate struct {
	URL string // the gate's base URL, to use in place of the server's

	Region, Service string // what a request's credential scope must name
	// RequireContentSHA256 refuses a request without a signed
	// X-Amz-Content-Sha256 equal to its body's hash (on by default).
	RequireContentSHA256 bool

	srv   *httptest.Server
	proxy *httputil.ReverseProxy
	now   func() time.Time

	mu     sync.Mutex
	keys   map[string]SigV4Key // by access key id
	tamper func([]byte) []byte // applied to the next request with a body
	log    []SigV4Request
}

// SigV4Key is a credential the gate accepts. A key with a Token is a
// temporary (session) credential: its requests must carry that token in
// X-Amz-Security-Token.
type SigV4Key struct {
	ID, Secret, Token string
}

// SigV4Request is what the gate saw of one request.
type SigV4Request struct {
	Method, Path string
	KeyID        string
	Token        bool   // carried X-Amz-Security-Token
	SignedBody   bool   // X-Amz-Content-Sha256 was signed and matched the body
	Original     string // Original-Authorization, as forwarded
	Refusal      string // "" when forwarded, else the AWS error type it answered
}

// SigV4Skew is how far X-Amz-Date may be from the gate's clock, as AWS
// allows.
const SigV4Skew = 15 * time.Minute

// NewSigV4Gate starts a gate for service (the signing name: glue,
// s3tables) in region in front of the REST catalog server at upstream,
// accepting keys. It stops when the test ends.
func NewSigV4Gate(t testing.TB, upstream, region, service string, keys ...SigV4Key) *SigV4Gate {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatalf("REST catalog URI %q: %v", upstream, err)
	}
	g := &SigV4Gate{Region: region, Service: service, RequireContentSHA256: true, proxy: httputil.NewSingleHostReverseProxy(u), now: time.Now, keys: map[string]SigV4Key{}}
	for _, k := range keys {
		g.keys[k.ID] = k
	}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	g.URL = g.srv.URL
	t.Cleanup(g.srv.Close)
	return g
}

// SetKeys replaces the accepted credentials, as a rotation or an expiry
// does: requests signed with any other key are refused from now on.
func (g *SigV4Gate) SetKeys(keys ...SigV4Key) {
	g.mu.Lock()
	defer g.mu.Unlock()
	clear(g.keys)
	for _, k := range keys {
		g.keys[k.ID] = k
	}
}

// TamperNext makes the gate rewrite the body of the next request that has
// one with f before checking it, as a party on the path would, fixing
// X-Amz-Content-Sha256 to match: only the signature can then tell.
func (g *SigV4Gate) TamperNext(f func([]byte) []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.tamper = f
}

// Log returns what the gate saw, in order.
func (g *SigV4Gate) Log() []SigV4Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]SigV4Request(nil), g.log...)
}

// Forwarded returns the requests the gate let through.
func (g *SigV4Gate) Forwarded() []SigV4Request {
	var out []SigV4Request
	for _, r := range g.Log() {
		if r.Refusal == "" {
			out = append(out, r)
		}
	}
	return out
}

// RESTNeedsToken reports whether the REST catalog server at uri refuses
// a request without an OAuth2 token (weed mini does, the fixture does
// not). AWS's endpoints take SigV4 alone, so SigV4 tests send no token
// unless the server behind the gate needs one; then they sign OAuth2 too.
func RESTNeedsToken(tb testing.TB, uri string) bool {
	tb.Helper()
	resp, err := http.Get(strings.TrimRight(uri, "/") + "/v1/config")
	if err != nil {
		tb.Fatalf("REST catalog %s: %v", uri, err)
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden
}

// sigv4Refusal is an AWS error answer: its x-amzn-ErrorType and message.
type sigv4Refusal struct {
	typ, msg string
}

func (g *SigV4Gate) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	g.mu.Lock()
	if g.tamper != nil && len(body) > 0 {
		body = g.tamper(body)
		g.tamper = nil
		sum := sha256.Sum256(body)
		r.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	}
	g.mu.Unlock()
	rec := SigV4Request{Method: r.Method, Path: r.URL.Path, Token: r.Header.Get("X-Amz-Security-Token") != ""}
	ref := g.verify(r, body, &rec)
	g.mu.Lock()
	if ref != nil {
		rec.Refusal = ref.typ
	}
	g.log = append(g.log, rec)
	g.mu.Unlock()
	if ref != nil {
		// AWS's JSON protocol error: the type in a header, the message in
		// the body.
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-Errortype", ref.typ)
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"message":%q}`, ref.msg)
		return
	}
	// The server behind sees the request's own authorization, as it would
	// without the gate.
	r.Header.Del("Authorization")
	if orig := r.Header.Get("Original-Authorization"); orig != "" {
		r.Header.Set("Authorization", orig)
		r.Header.Del("Original-Authorization")
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	g.proxy.ServeHTTP(w, r)
}

const (
	sigv4Algorithm  = "AWS4-HMAC-SHA256"
	sigv4TimeFormat = "20060102T150405Z"
	sigv4Mismatch   = "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
)

// verify checks r's signature, nil when it holds.
func (g *SigV4Gate) verify(r *http.Request, body []byte, rec *SigV4Request) *sigv4Refusal {
	auth := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, sigv4Algorithm+" ")
	if !ok {
		return &sigv4Refusal{"MissingAuthenticationTokenException", "Missing Authentication Token"}
	}
	fields := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return &sigv4Refusal{"IncompleteSignatureException", "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header."}
		}
		fields[k] = v
	}
	cred, signedList, sig := fields["Credential"], fields["SignedHeaders"], fields["Signature"]
	scope := strings.Split(cred, "/")
	if len(scope) != 5 || signedList == "" || sig == "" || scope[4] != "aws4_request" {
		return &sigv4Refusal{"IncompleteSignatureException", "Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters."}
	}
	keyID, day, region, service := scope[0], scope[1], scope[2], scope[3]
	rec.KeyID = keyID
	g.mu.Lock()
	key, known := g.keys[keyID]
	g.mu.Unlock()
	if !known {
		return &sigv4Refusal{"UnrecognizedClientException", "The security token included in the request is invalid."}
	}
	if key.Token != "" && r.Header.Get("X-Amz-Security-Token") != key.Token {
		return &sigv4Refusal{"UnrecognizedClientException", "The security token included in the request is invalid."}
	}
	amzDate := r.Header.Get("X-Amz-Date")
	at, err := time.Parse(sigv4TimeFormat, amzDate)
	if err != nil {
		return &sigv4Refusal{"IncompleteSignatureException", "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header."}
	}
	now := g.now()
	if at.Before(now.Add(-SigV4Skew)) {
		return &sigv4Refusal{"InvalidSignatureException", fmt.Sprintf("Signature expired: %s is now earlier than %s (%s - 15 min.)",
			amzDate, now.Add(-SigV4Skew).UTC().Format(sigv4TimeFormat), now.UTC().Format(sigv4TimeFormat))}
	}
	if at.After(now.Add(SigV4Skew)) {
		return &sigv4Refusal{"InvalidSignatureException", fmt.Sprintf("Signature not yet current: %s is still later than %s (%s + 15 min.)",
			amzDate, now.Add(SigV4Skew).UTC().Format(sigv4TimeFormat), now.UTC().Format(sigv4TimeFormat))}
	}
	if day != amzDate[:8] {
		return &sigv4Refusal{"InvalidSignatureException", fmt.Sprintf("Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '%s' != '%s'", day, amzDate[:8])}
	}
	if region != g.Region {
		return &sigv4Refusal{"InvalidSignatureException", fmt.Sprintf("Credential should be scoped to a valid region. (got %s)", region)}
	}
	if service != g.Service {
		return &sigv4Refusal{"InvalidSignatureException", fmt.Sprintf("Credential should be scoped to correct service: '%s'.", g.Service)}
	}
	signed := strings.Split(signedList, ";")
	if !sort.StringsAreSorted(signed) {
		return &sigv4Refusal{"InvalidSignatureException", sigv4Mismatch}
	}
	isSigned := map[string]bool{}
	for _, h := range signed {
		isSigned[h] = true
	}
	for _, must := range []string{"host", "x-amz-date"} {
		if !isSigned[must] {
			return &sigv4Refusal{"InvalidSignatureException", fmt.Sprintf("'%s' must be a signed header", must)}
		}
	}
	for name := range r.Header {
		l := strings.ToLower(name)
		if (strings.HasPrefix(l, "x-amz-") || l == "original-authorization") && !isSigned[l] {
			return &sigv4Refusal{"InvalidSignatureException", fmt.Sprintf("header %s is not signed", l)}
		}
	}
	sum := sha256.Sum256(body)
	bodyHash := hex.EncodeToString(sum[:])
	if got := r.Header.Get("X-Amz-Content-Sha256"); got != bodyHash && (got != "" || g.RequireContentSHA256) {
		return &sigv4Refusal{"InvalidSignatureException", "The provided 'x-amz-content-sha256' header does not match what was computed."}
	}
	rec.SignedBody = isSigned["x-amz-content-sha256"]
	rec.Original = r.Header.Get("Original-Authorization")

	canonical := strings.Join([]string{
		r.Method,
		sigv4URI(r.URL.EscapedPath()),
		sigv4Query(r.URL.RawQuery),
		sigv4Headers(r, signed),
		signedList,
		bodyHash, // the hash of the body as received, not as claimed
	}, "\n")
	crSum := sha256.Sum256([]byte(canonical))
	toSign := strings.Join([]string{sigv4Algorithm, amzDate, strings.Join(scope[1:], "/"), hex.EncodeToString(crSum[:])}, "\n")
	k := sigv4HMAC([]byte("AWS4"+key.Secret), day)
	k = sigv4HMAC(k, region)
	k = sigv4HMAC(k, service)
	k = sigv4HMAC(k, "aws4_request")
	want := hex.EncodeToString(sigv4HMAC(k, toSign))
	if !hmac.Equal([]byte(want), []byte(sig)) {
		return &sigv4Refusal{"InvalidSignatureException", sigv4Mismatch}
	}
	return nil
}

func sigv4HMAC(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// sigv4Encode is AWS's UriEncode: every byte but the unreserved characters
// (A-Z a-z 0-9 - _ . ~) as %XX with upper-case hex; '/' kept when
// keepSlash.
func sigv4Encode(s string, keepSlash bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~':
			b.WriteByte(c)
		case c == '/' && keepSlash:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// sigv4URI is the canonical URI of a request path as sent: for services
// other than S3 the path, already URI-encoded, is encoded once more.
func sigv4URI(path string) string {
	if path == "" {
		return "/"
	}
	return sigv4Encode(path, true)
}

// sigv4Query is the canonical query string: each name and value decoded,
// then UriEncoded, the pairs sorted by name and then value.
func sigv4Query(raw string) string {
	if raw == "" {
		return ""
	}
	var pairs [][2]string
	for _, p := range strings.Split(raw, "&") {
		if p == "" {
			continue
		}
		k, v, _ := strings.Cut(p, "=")
		dk, err1 := url.QueryUnescape(k)
		dv, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			dk, dv = k, v
		}
		pairs = append(pairs, [2]string{sigv4Encode(dk, false), sigv4Encode(dv, false)})
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i][0] != pairs[j][0] {
			return pairs[i][0] < pairs[j][0]
		}
		return pairs[i][1] < pairs[j][1]
	})
	out := make([]string, len(pairs))
	for i, p := range pairs {
		out[i] = p[0] + "=" + p[1]
	}
	return strings.Join(out, "&")
}

// sigv4Headers is the canonical headers block: each signed header's
// lower-case name, a colon and its values (trimmed, inner runs of spaces
// made one, several values joined by commas), one per line.
func sigv4Headers(r *http.Request, signed []string) string {
	var b strings.Builder
	for _, name := range signed {
		var values []string
		switch name {
		case "host":
			values = []string{r.Host}
		case "content-length":
			values = []string{strconv.FormatInt(r.ContentLength, 10)}
		default:
			values = r.Header.Values(name)
		}
		for i, v := range values {
			values[i] = strings.Join(strings.Fields(v), " ")
		}
		b.WriteString(name + ":" + strings.Join(values, ",") + "\n")
	}
	return b.String()
}
