package pyinterop

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/internal/testing/testenv"
)

// PyIceberg, configured as its documentation says, writes a table whose
// warehouse is on Google Cloud Storage (fake-gcs-server) or Azure
// (Azurite) through pyarrow; icectl, reading the same .pyiceberg.yaml,
// compacts, rewrites manifests, expires and removes orphans; PyIceberg
// reads the same rows after each.

func TestPyIcebergStoresGCS(t *testing.T) {
	props, base := testenv.GCS(t)
	// pyarrow wants the token's expiry with a static token.
	expires := time.Now().Add(time.Hour).UnixMilli()
	pyStoreWalk(t, base, fmt.Sprintf(`    gcs.project-id: icectl-test
    gcs.service.host: %s
    gcs.oauth2.token: test-token
    gcs.oauth2.token-expires-at: "%d"
`, props["gcs.service.host"], expires))
}

func TestPyIcebergStoresAzure(t *testing.T) {
	_, full := testenv.Azure(t)
	// PyIceberg's pyarrow names Azure locations abfs://CONTAINER/PATH, the
	// account coming from adls.account-name.
	ctrAt, rest, _ := strings.Cut(strings.TrimPrefix(full, "abfs://"), "/")
	ctr, _, _ := strings.Cut(ctrAt, "@")
	base := "abfs://" + ctr + "/" + rest
	endpoint := testenv.Need(t, testenv.AzureEndpoint, "Azure Blob server (Azurite)")
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	// PyIceberg tries fsspec (adlfs, not installed) first for abfs://;
	// py-io-impl chooses pyarrow's AzureFileSystem.
	pyStoreWalk(t, base, fmt.Sprintf(`    py-io-impl: pyiceberg.io.pyarrow.PyArrowFileIO
    adls.account-name: %s
    adls.account-key: %s
    adls.blob-storage-authority: %s
    adls.dfs-storage-authority: %s
    adls.blob-storage-scheme: http
    adls.dfs-storage-scheme: http
`, testenv.Need(t, testenv.AzureAccount, "Azure account"), testenv.Need(t, testenv.AzureKey, "Azure key"), u.Host, u.Host))
}

func pyStoreWalk(t *testing.T, warehouse, storeProps string) {
	e := newPyEnv(t)
	yaml := fmt.Sprintf("catalog:\n  py:\n    type: sql\n    uri: sqlite:///%s\n    warehouse: %s\n%s",
		filepath.Join(e.home, "catalog.db"), warehouse, storeProps)
	if err := os.WriteFile(filepath.Join(e.home, ".pyiceberg.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	const ident = "stores.walk"
	e.py(t, "write", ident, "2", "-")
	read := func() pyRead {
		t.Helper()
		var r pyRead
		if err := json.Unmarshal(e.py(t, "read", ident), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	want := read()
	if want.Rows == 0 {
		t.Fatal("PyIceberg reads no rows")
	}
	for _, verb := range [][]string{
		{"compact", ident, "--rewrite-all"},
		{"rewrite-manifests", ident},
		{"expire", ident, "--older-than", "0s", "--retain-last", "1"},
		{"orphan", ident, "--older-than", "1s", "--unsafe-allow-recent"},
	} {
		e.icectl(t, verb...)
		if got := read(); got.Rows != want.Rows || got.Checksum != want.Checksum {
			t.Fatalf("after icectl %s PyIceberg reads %d rows (%s), before %d (%s)",
				strings.Join(verb, " "), got.Rows, got.Checksum, want.Rows, want.Checksum)
		}
	}
}
