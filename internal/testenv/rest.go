package testenv

// Environment variables for the REST catalog server (weed mini), set by
// scripts/test beside RESTCatalog.
const (
	// RESTWarehouse is the warehouse to ask the REST catalog for
	// (s3://warehouse for weed mini started with -tableBucket=warehouse).
	RESTWarehouse = "ICECTL_TEST_REST_WAREHOUSE"
	// RESTCredential is the OAuth2 client credential "id:secret" the REST
	// catalog accepts. weed mini takes the S3 access key and secret it was
	// started with (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), so the same
	// pair also signs S3 requests to RESTS3Endpoint.
	RESTCredential = "ICECTL_TEST_REST_CREDENTIAL"
	// RESTS3Endpoint is the S3 endpoint of the REST catalog's storage
	// (http://127.0.0.1:8333 for weed mini).
	RESTS3Endpoint = "ICECTL_TEST_REST_S3_ENDPOINT"
)
