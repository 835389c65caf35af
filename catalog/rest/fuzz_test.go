package rest

import (
	"testing"
	"time"
)

// FuzzResponses feeds arbitrary statuses and bodies to the response
// decoders: whatever a server sends, the client returns an error or a
// value, never panics.
func FuzzResponses(f *testing.F) {
	f.Add(200, []byte(loadResult("s3://b/t", `"config": {"a": "b"}, "storage-credentials": [{"prefix": "s3://b", "config": {}}]`)))
	f.Add(200, []byte(`{"metadata-location": "x", "metadata": `+tableJSON+`}`))
	f.Add(409, []byte(`{"error": {"message": "m", "type": "CommitFailedException", "code": 409}}`))
	f.Add(500, []byte(`{"error": null}`))
	f.Add(404, []byte(`{"error": {"type": 5}}`))
	f.Add(401, []byte(`{"namespaces": [["a"]], "next-page-token": "t"}`))
	f.Add(200, []byte(`null`))
	c := &Catalog{auth: &authenticator{now: time.Now, token: "tok-fuzz", secret: "secret-fuzz"}}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if err := c.responseError("op", opCommit, nil, status, body); err == nil {
			t.Fatal("responseError returned nil")
		}
		if res, md, err := decodeLoadResult(body); err == nil {
			if md == nil || res == nil {
				t.Fatal("decodeLoadResult: nil result without error")
			}
			longestPrefix(res.StorageCredentials, md.Location)
		}
		if loc, md, err := decodeCommitResponse(body); err == nil && (loc == "" || md == nil) {
			t.Fatal("decodeCommitResponse: empty result without error")
		}
	})
}
