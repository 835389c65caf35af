package table

import (
	"os"
	"testing"

	"github.com/icectl/icectl/internal/testing/testenv"
)

// TestMain ends the reader process the tests share (testenv.IcebergGo).
func TestMain(m *testing.M) { os.Exit(testenv.Finish(m.Run())) }
