package testenv

import (
	"strings"
	"testing"
)

// Environment variables for the REST catalog server, set by scripts/test
// beside RESTCatalog.
//
// The default server is Iceberg's REST fixture (the runnable jar of
// org.apache.iceberg:iceberg-open-api from Maven Central, run with Java):
// its JDBC catalog keeps the tables in a SQLite file and their files on the
// suite's S3 server (versitygw), under s3://<S3Bucket>/rest. It starts in
// seconds and needs no build. It hands a token to any OAuth2 client
// credential and accepts any bearer token, so tests of refused credentials
// go through a RESTAuthGate in front of it.
//
// SeaweedFS weed mini, whose first build takes about 24 minutes, is the
// optional second server: with ICECTL_TEST_WEED=1 scripts/test builds and
// starts it and runs the REST tests again with these variables naming it
// (warehouse s3://warehouse, its own S3). Those are the tests, in the
// packages that read RESTCatalog, whose names contain REST, and
// catalog/rest's TestServer*; a new test that uses the REST server is
// named so, and holds only to what both servers do.
const (
	// RESTWarehouse is the warehouse to ask the REST catalog for: the
	// fixture's own (s3://<S3Bucket>/rest), or s3://warehouse for weed
	// mini started with -tableBucket=warehouse.
	RESTWarehouse = "ICECTL_TEST_REST_WAREHOUSE"
	// RESTCredential is an OAuth2 client credential "id:secret" the REST
	// catalog accepts, and also the S3 access key and secret of
	// RESTS3Endpoint: weed mini takes the pair it was started with for
	// both, and for the fixture, which takes any credential, scripts/test
	// gives versitygw's pair.
	RESTCredential = "ICECTL_TEST_REST_CREDENTIAL"
	// RESTS3Endpoint is the S3 endpoint of the REST catalog's storage:
	// versitygw's (S3Endpoint) for the fixture, weed mini's own for weed.
	RESTS3Endpoint = "ICECTL_TEST_REST_S3_ENDPOINT"
)

// REST is the suite's REST catalog server as a test opens it.
type REST struct {
	URI, Warehouse string
	// Props are the catalog properties that open it with its S3 storage:
	// the OAuth2 credential, the S3 endpoint, keys, path-style access and
	// region (keys as catalog/rest and iceberg/fileio name them).
	Props map[string]string
}

// NeedREST returns the REST catalog server, skipping (or, under CI,
// failing) tb when scripts/test has not provided it.
func NeedREST(tb testing.TB) REST {
	tb.Helper()
	uri := Need(tb, RESTCatalog, "REST catalog server")
	wh := Need(tb, RESTWarehouse, "REST catalog warehouse")
	cred := Need(tb, RESTCredential, "REST catalog OAuth2 credential")
	s3 := Need(tb, RESTS3Endpoint, "S3 endpoint of the REST catalog")
	key, secret, _ := strings.Cut(cred, ":")
	return REST{URI: uri, Warehouse: wh, Props: map[string]string{
		"credential":           cred,
		"s3.endpoint":          s3,
		"s3.access-key-id":     key,
		"s3.secret-access-key": secret,
		"s3.path-style-access": "true",
		"client.region":        "us-east-1",
	}}
}
