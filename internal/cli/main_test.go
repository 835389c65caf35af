package cli

import (
	"os"
	"testing"

	"github.com/icectl/icectl/internal/testing/testenv"
)

// TestMain ends the reader process the tests share (testenv.IcebergGo) and
// removes the icectl binary testenv.Icectl built, if it did.
func TestMain(m *testing.M) {
	code := testenv.Finish(m.Run())
	testenv.RemoveIcectl()
	os.Exit(code)
}
