// Package testenv gives tests the external components they run against (S3
// server, PostgreSQL, REST catalog, independent readers) and the shared
// conformance vectors.
//
// A component is named by an environment variable that scripts/test sets
// after starting it. Outside CI a test whose component is absent is skipped
// with the command to provide it; under CI (CI set) it fails, so a test can
// never be silently skipped where it matters.
package testenv

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Environment variables set by scripts/test.
const (
	S3Endpoint  = "ICECTL_TEST_S3_ENDPOINT"   // http://127.0.0.1:7070 (versitygw)
	S3AccessKey = "ICECTL_TEST_S3_ACCESS_KEY" // access key for S3Endpoint
	S3SecretKey = "ICECTL_TEST_S3_SECRET_KEY" // secret key for S3Endpoint
	S3Bucket    = "ICECTL_TEST_S3_BUCKET"     // an existing bucket tests may write under
	PythonAvro  = "ICECTL_TEST_PYTHON_AVRO"   // a python3 that can `import avro` (Debian python3-avro)
	DuckDBNode  = "ICECTL_TEST_DUCKDB_DIR"    // a directory whose node_modules holds @duckdb/node-api
	PostgresURL = "ICECTL_TEST_PG_URL"        // postgres://... of a database tests may use
	RESTCatalog = "ICECTL_TEST_REST_URI"      // http://127.0.0.1:PORT (Iceberg's REST fixture; rest.go)
	PyIceberg   = "ICECTL_TEST_PYICEBERG"     // a python that can import pyiceberg (scripts/install-pyiceberg)
	Spark       = "ICECTL_TEST_SPARK"         // PySpark + Iceberg's Spark runtime (scripts/install-spark)
	Flink       = "ICECTL_TEST_FLINK"         // PyFlink + Iceberg's Flink runtime (scripts/install-flink)
	Chromium    = "ICECTL_TEST_CHROMIUM"      // a chromium binary that runs --headless (Debian's chromium)
	Conformance = "ICECTL_CONFORMANCE_DIR"    // overrides the repository's testdata/conformance

	GCSEndpoint    = "ICECTL_TEST_GCS_ENDPOINT"    // http://127.0.0.1:PORT (fake-gcs-server, no authentication)
	GCSBucket      = "ICECTL_TEST_GCS_BUCKET"      // an existing bucket tests may write under
	AzureEndpoint  = "ICECTL_TEST_AZURE_ENDPOINT"  // http://127.0.0.1:PORT/ACCOUNT (Azurite's Blob service)
	AzureAccount   = "ICECTL_TEST_AZURE_ACCOUNT"   // the account of AzureEndpoint
	AzureKey       = "ICECTL_TEST_AZURE_KEY"       // its shared key
	AzureContainer = "ICECTL_TEST_AZURE_CONTAINER" // an existing container tests may write under
	// RESTStoresURI is a second REST fixture, whose Java FileIO
	// (ResolvingFileIO) writes to the GCS and Azure servers above: its
	// warehouse is gs://<GCSBucket>/rest, and a namespace created with an
	// abfs:// location keeps its tables on Azurite.
	RESTStoresURI = "ICECTL_TEST_REST_STORES_URI"

	// HiveMetastore is thrift://127.0.0.1:PORT of Hive's standalone
	// metastore (scripts/install-hms), shared by the test packages.
	HiveMetastore = "ICECTL_TEST_HMS_URI"
)

// Need returns the value of the environment variable env. When it is unset
// the test is skipped, or failed under CI.
func Need(t testing.TB, env, what string) string {
	t.Helper()
	v := os.Getenv(env)
	if v != "" {
		return v
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not set: %s is required under CI (scripts/test provides it)", env, what)
	}
	t.Skipf("%s not set: %s not available; run scripts/test to provide it", env, what)
	return ""
}

// ConformanceDir returns the directory of the conformance vectors:
// $ICECTL_CONFORMANCE_DIR, or testdata/conformance of the repository the
// test runs in (found from the working directory upwards, by go.mod). It
// never looks outside the repository: a clone must pass its tests alone.
func ConformanceDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv(Conformance); d != "" {
		return d
	}
	return filepath.Join(RepoRoot(t), "testdata", "conformance")
}

// RepoRoot returns the root of the repository the test runs in: the
// nearest directory upwards from the working directory whose go.mod
// declares the main module (the interop module's tests run one level
// below it).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; {
		if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && bytes.HasPrefix(data, []byte("module github.com/icectl/icectl\n")) {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	t.Fatalf("no repository root (go.mod of github.com/icectl/icectl) above %s", dir)
	return ""
}

// ConformanceFile returns the path of a file under the conformance directory.
func ConformanceFile(t testing.TB, rel string) string {
	t.Helper()
	return filepath.Join(ConformanceDir(t), filepath.FromSlash(rel))
}

// Finish ends what a test binary's tests share (the reader process of
// IcebergGo, the binary Icectl built) and returns the exit code: code, or 1
// when the reader ended badly. A TestMain ends with
// os.Exit(testenv.Finish(m.Run())).
func Finish(code int) int {
	RemoveIcectl()
	if err := CloseIcebergGo(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// UniqueName returns prefix followed by 12 random hex digits, for names
// (namespaces, catalog names) that tests sharing a server must not reuse.
func UniqueName(t testing.TB, prefix string) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b)
}

// DefaultParallel parses the command line and sets -test.parallel to n
// unless it gives one: for a TestMain whose tests mostly wait (on a
// server, a JVM), where Go's default, GOMAXPROCS, leaves the cores idle.
func DefaultParallel(n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if set {
		return
	}
	if err := flag.Set("test.parallel", strconv.Itoa(n)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
