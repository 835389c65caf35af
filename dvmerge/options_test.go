package dvmerge

import (
	"errors"
	"testing"

	"github.com/icectl/icectl/iceberg/commit"
)

// A caller that sets only Warn on the commit options gets the default
// retries and keeps Warn (the normalisation used to keep only Sleep).
func TestOptionsKeepCommitWarn(t *testing.T) {
	var got error
	o, err := Options{Commit: commit.Options{Warn: func(err error) { got = err }}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if o.Commit.NumRetries != commit.DefaultNumRetries || o.Commit.Warn == nil {
		t.Fatalf("commit options %+v: want the default retries and the caller's Warn", o.Commit)
	}
	want := errors.New("old metadata file not deleted")
	o.Commit.Warn(want)
	if got != want {
		t.Errorf("Warn was replaced: the caller's got %v", got)
	}
	if _, err := (Options{MaxCommits: -1}).withDefaults(); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("max commits -1: %v, want ErrInvalidOptions", err)
	}
	if _, err := (Options{Concurrency: -1}).withDefaults(); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("concurrency -1: %v, want ErrInvalidOptions", err)
	}
}
