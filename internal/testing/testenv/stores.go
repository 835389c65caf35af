package testenv

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// GCS returns the FileIO properties of the test GCS server
// (fake-gcs-server) and a fresh base location in its bucket,
// gs://BUCKET/PREFIX, no trailing slash.
func GCS(t testing.TB) (map[string]string, string) {
	t.Helper()
	endpoint := Need(t, GCSEndpoint, "GCS server (fake-gcs-server)")
	bucket := Need(t, GCSBucket, "GCS bucket")
	props := map[string]string{
		"gcs.service.host": endpoint,
		"gcs.no-auth":      "true",
		"gcs.project-id":   "icectl-test",
	}
	return props, fmt.Sprintf("gs://%s/%s", bucket, basePrefix(t))
}

// Azure returns the FileIO properties of the test Azure server (Azurite's
// Blob service), as PyIceberg's adls.connection-string, and a fresh base
// location abfs://CONTAINER@ACCOUNT.dfs.core.windows.net/PREFIX.
func Azure(t testing.TB) (map[string]string, string) {
	t.Helper()
	endpoint := Need(t, AzureEndpoint, "Azure Blob server (Azurite)")
	account := Need(t, AzureAccount, "Azure account")
	key := Need(t, AzureKey, "Azure account key")
	ctr := Need(t, AzureContainer, "Azure container")
	props := map[string]string{
		"adls.connection-string": fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;BlobEndpoint=%s;", account, key, endpoint),
		"adls.account-name":      account,
	}
	return props, fmt.Sprintf("abfs://%s@%s.dfs.core.windows.net/%s", ctr, account, basePrefix(t))
}

// basePrefix is a key prefix no other test run uses.
func basePrefix(t testing.TB) string {
	name := strings.NewReplacer("/", "_", " ", "_", "#", "_").Replace(t.Name())
	return fmt.Sprintf("icectl-test-%d/%s", time.Now().UnixNano(), name)
}
