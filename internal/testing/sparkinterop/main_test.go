package sparkinterop

import (
	"fmt"
	"os"
	"testing"

	"github.com/icectl/icectl/internal/testing/testenv"
)

// parallel is how many of the package's tests Go runs at a time unless
// -test.parallel says otherwise: all of them, since work (sched_test.go)
// decides which of them work.
const parallel = 1000

func TestMain(m *testing.M) {
	testenv.DefaultParallel(parallel)
	code := m.Run()
	if err := spark.close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(testenv.Finish(code))
}
