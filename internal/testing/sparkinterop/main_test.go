package sparkinterop

import (
	"fmt"
	"os"
	"testing"

	"github.com/icectl/icectl/internal/testing/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := spark.close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(testenv.Finish(code))
}
