package sparkinterop

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/icectl/icectl/internal/testing/testenv"
)

// parallel is how many of the package's tests run at a time unless
// -test.parallel says otherwise (its default is GOMAXPROCS, 2 on the
// project's machines). A test alternates between its Spark requests and
// icectl's processes: with two at a time, a Spark session waits while
// its test runs icectl; with four, both sessions (sparkSessions) have a
// request most of the time.
const parallel = "4"

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", parallel); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	code := m.Run()
	if err := spark.close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(testenv.Finish(code))
}
