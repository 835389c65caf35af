package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// Reads a deletion vector over s3:// from the test S3 server, configured the
// way an operator would: flags for the endpoint, AWS variables for the keys.
func TestInspectOverS3(t *testing.T) {
	endpoint := testenv.Need(t, testenv.S3Endpoint, "S3 server")
	bucket := testenv.Need(t, testenv.S3Bucket, "S3 bucket")
	env := map[string]string{
		"AWS_ACCESS_KEY_ID":     testenv.Need(t, testenv.S3AccessKey, "S3 access key"),
		"AWS_SECRET_ACCESS_KEY": testenv.Need(t, testenv.S3SecretKey, "S3 secret key"),
	}
	blob, err := os.ReadFile(vector(t, "puffin/single-blob-dv.puffin"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	uri := fmt.Sprintf("s3://%s/icectl-cli-test/%d/dv.puffin", bucket, time.Now().UnixNano())
	props := fileIOProps(S3Options{Endpoint: endpoint, PathStyle: true}, func(k string) string { return env[k] })
	fio, err := fileio.Load(ctx, uri, props)
	if err != nil {
		t.Fatal(err)
	}
	if err := fileio.WriteFile(ctx, fio, uri, blob); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fio.Remove(context.Background(), uri) })

	r := runCLI(t, env, "-o", "json", "inspect", "puffin", uri, "--s3-endpoint", endpoint, "--s3-path-style").mustSucceed(t)
	m := r.decodeJSON(t)
	if got := fmt.Sprint(at(t, m, "blobs", 0, "deletion_vector", "positions")); got != "[1 3 5 7 9]" {
		t.Errorf("positions over S3 = %s", got)
	}
	if strings.Contains(r.stdout+r.stderr, env["AWS_SECRET_ACCESS_KEY"]) {
		t.Error("output contains the secret key")
	}

	// Wrong credentials: a clear error, exit 1, and still no secret printed.
	bad := map[string]string{"AWS_ACCESS_KEY_ID": "nobody", "AWS_SECRET_ACCESS_KEY": "wrong-secret-value"}
	r = runCLI(t, bad, "inspect", "dv", uri, "--s3-endpoint", endpoint, "--s3-path-style")
	if r.code != ExitFailure || strings.Contains(r.stderr, "wrong-secret-value") {
		t.Errorf("bad credentials: exit %d, stderr %q", r.code, r.stderr)
	}
}
