package testenv

import (
	"os"
	"testing"
)

func TestConformanceDirFound(t *testing.T) {
	d := ConformanceDir(t)
	if _, err := os.Stat(ConformanceFile(t, "README.md")); err != nil {
		t.Fatalf("conformance dir %s has no README.md: %v", d, err)
	}
}
