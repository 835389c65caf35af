package flinkinterop

import (
	"os"
	"testing"

	"github.com/icectl/icectl/internal/testing/testenv"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Finish(m.Run()))
}
