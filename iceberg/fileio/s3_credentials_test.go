package fileio_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/icectl/icectl/iceberg/fileio"
)

// isolateAWS empties the environment the SDK's default chain reads, so
// tests see only what they set up.
func isolateAWS(t *testing.T) string {
	dir := t.TempDir()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_DEFAULT_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_EC2_METADATA_SERVICE_ENDPOINT", "AWS_EC2_METADATA_DISABLED"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("HOME", dir)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	return dir
}

// keyServer answers every request with 404 and records the access key id
// each was signed with.
func keyServer(t *testing.T) (string, func() []string) {
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if _, rest, ok := strings.Cut(auth, "Credential="); ok {
			mu.Lock()
			keys = append(keys, strings.SplitN(rest, "/", 2)[0])
			mu.Unlock()
		}
		w.WriteHeader(http.StatusNotFound)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), keys...)
	}
}

// s3.profile-name (and client.profile-name) select a profile of the
// shared credentials file.
func TestS3ProfileSelectsCredentials(t *testing.T) {
	dir := isolateAWS(t)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	creds := "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = s1\n\n" +
		"[ops]\naws_access_key_id = AKIDOPS\naws_secret_access_key = s2\n\n" +
		"[client]\naws_access_key_id = AKIDCLIENT\naws_secret_access_key = s3\n"
	if err := os.WriteFile(filepath.Join(dir, "credentials"), []byte(creds), 0o600); err != nil {
		t.Fatal(err)
	}
	url, keys := keyServer(t)
	ctx := context.Background()
	for _, c := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{}, "AKIDDEFAULT"},
		{map[string]string{fileio.S3ProfileName: "ops"}, "AKIDOPS"},
		{map[string]string{fileio.ClientProfileName: "client"}, "AKIDCLIENT"},
		{map[string]string{fileio.S3ProfileName: "ops", fileio.ClientProfileName: "client"}, "AKIDOPS"},
	} {
		c.props[fileio.S3Endpoint] = url
		c.props[fileio.S3PathStyleAccess] = "true"
		c.props[fileio.S3RetryNumRetries] = "0"
		s, err := fileio.NewS3(ctx, c.props)
		if err != nil {
			t.Fatal(err)
		}
		n := len(keys())
		_, _ = s.Open(ctx, "s3://bucket/key")
		got := keys()
		if len(got) == n || got[len(got)-1] != c.want {
			t.Errorf("props %v: requests signed with %v, want %s", c.props, got[n:], c.want)
		}
	}
	if _, err := fileio.NewS3(ctx, map[string]string{fileio.S3ProfileName: "missing", fileio.ClientRegion: "us-east-1"}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("an unknown profile: %v", err)
	}
}

// Off EC2, with no credentials anywhere, the instance metadata probe makes
// one attempt per request and gives up on its own, printing nothing; with
// AWS_EC2_METADATA_DISABLED=true it is not made at all.
func TestS3MetadataProbeGivesUpQuietly(t *testing.T) {
	isolateAWS(t)
	var probes atomic.Int32
	// A metadata service that refuses IMDSv2 tokens, which makes the SDK
	// fall back to IMDSv1 (and warn about it), and then never answers.
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probes.Add(1)
		if r.Method == http.MethodPut {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		<-r.Context().Done()
	}))
	t.Cleanup(hang.Close)
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", hang.URL)
	url, _ := keyServer(t)
	props := map[string]string{fileio.S3Endpoint: url, fileio.S3PathStyleAccess: "true", fileio.S3RetryNumRetries: "0"}

	stderr := captureStderr(t, func() {
		s, err := fileio.NewS3(context.Background(), props)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Open(context.Background(), "s3://bucket/key"); err == nil {
			t.Error("open without credentials succeeded")
		}
	})
	if n := probes.Load(); n == 0 || n > 2 {
		t.Errorf("%d requests to the metadata service, want one attempt (token, then at most the IMDSv1 fallback)", n)
	}
	if stderr != "" {
		t.Errorf("the SDK wrote to stderr: %q", stderr)
	}

	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	probes.Store(0)
	s, err := fileio.NewS3(context.Background(), props)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(context.Background(), "s3://bucket/key"); err == nil {
		t.Error("open without credentials succeeded")
	}
	if n := probes.Load(); n != 0 {
		t.Errorf("AWS_EC2_METADATA_DISABLED=true: %d requests to the metadata service", n)
	}
}

// captureStderr returns what fn writes to os.Stderr.
func captureStderr(t *testing.T, fn func()) string {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	done := make(chan string)
	go func() {
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		done <- b.String()
	}()
	defer func() { os.Stderr = old }()
	fn()
	os.Stderr = old
	w.Close()
	return <-done
}
