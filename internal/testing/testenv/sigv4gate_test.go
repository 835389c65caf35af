package testenv

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The gate's check reproduces AWS's published SigV4 test-suite vectors
// (get-vanilla, get-vanilla-query-order-key-case, post-vanilla): it is the
// algorithm, not an echo of some signer.
func TestSigV4GateAWSVectors(t *testing.T) {
	const (
		id     = "AKIDEXAMPLE"
		secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
		scope  = "Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature="
	)
	g := &SigV4Gate{Region: "us-east-1", Service: "service", keys: map[string]SigV4Key{id: {ID: id, Secret: secret}},
		now: func() time.Time { return time.Date(2015, 8, 30, 12, 36, 0, 0, time.UTC) }}
	for _, c := range []struct {
		name, method, target, sig string
	}{
		{"get-vanilla", "GET", "/", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"},
		{"get-vanilla-query-order-key-case", "GET", "/?Param2=value2&Param1=value1", "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"},
		{"post-vanilla", "POST", "/", "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, sig := range []string{c.sig, strings.Replace(c.sig, c.sig[:1], "0", 1)} {
				r := httptest.NewRequest(c.method, c.target, nil)
				r.Host = "example.amazonaws.com"
				r.Header.Set("X-Amz-Date", "20150830T123600Z")
				r.Header.Set("Authorization", "AWS4-HMAC-SHA256 "+scope+sig)
				ref := g.verify(r, nil, &SigV4Request{})
				if ok := sig == c.sig; ok != (ref == nil) {
					t.Errorf("signature %s: refusal %v, want accepted %v", sig, ref, ok)
				}
			}
		})
	}
	// Strict mode: the vectors carry no X-Amz-Content-Sha256.
	g.RequireContentSHA256 = true
	r := httptest.NewRequest("GET", "/", nil)
	r.Host = "example.amazonaws.com"
	r.Header.Set("X-Amz-Date", "20150830T123600Z")
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 "+scope+"5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
	if ref := g.verify(r, nil, &SigV4Request{}); ref == nil || !strings.Contains(ref.msg, "x-amz-content-sha256") {
		t.Errorf("no X-Amz-Content-Sha256 in strict mode: refusal %v", ref)
	}
	// Fifteen minutes and a second later the same request has expired.
	g.RequireContentSHA256 = false
	g.now = func() time.Time { return time.Date(2015, 8, 30, 12, 51, 1, 0, time.UTC) }
	if ref := g.verify(r, nil, &SigV4Request{}); ref == nil || !strings.HasPrefix(ref.msg, "Signature expired") {
		t.Errorf("a stale request: refusal %v, want Signature expired", ref)
	}
}
