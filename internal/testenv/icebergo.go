package testenv

// IcebergGoReader names the iceberg-read binary (interop/cmd/iceberg-read,
// built from iceberg-go by scripts/build-iceberg-go-reader) that tests exec
// to read icectl's files with an independent implementation.
const IcebergGoReader = "ICECTL_TEST_ICEBERG_GO_READER"
