package e2e

import (
	"os"
	"testing"

	"github.com/icectl/icectl/internal/testing/testenv"
)

// parallel is how many of the package's tests Go runs at a time unless
// -test.parallel says otherwise. Its tests each have a catalog and
// warehouse of their own and spend much of their time waiting on a
// server (the REST fixture, S3, GCS and Azure emulators, PostgreSQL, the
// iceberg-go reader), so four keep two cores busy where Go's default
// (GOMAXPROCS) would leave them waiting.
const parallel = 4

// TestMain sets the default parallelism and ends the reader process the
// tests share (testenv.IcebergGo).
func TestMain(m *testing.M) {
	testenv.DefaultParallel(parallel)
	os.Exit(testenv.Finish(m.Run()))
}
