package commit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
)

// faultCatalog wraps a real SQLite catalog to inject commit outcomes.
type faultCatalog struct {
	catalog.Catalog
	calls  atomic.Int32
	before func(n int) error
	after  func(n int, res *catalog.Table, err error) (*catalog.Table, error)
}

func (f *faultCatalog) CommitTable(ctx context.Context, t *catalog.Table, reqs []spec.Requirement, ups []spec.Update) (*catalog.Table, error) {
	n := int(f.calls.Add(1))
	if f.before != nil {
		if err := f.before(n); err != nil {
			return nil, err
		}
	}
	res, err := f.Catalog.CommitTable(ctx, t, reqs, ups)
	if f.after != nil {
		return f.after(n, res, err)
	}
	return res, err
}

func conflict(n int) error {
	return fmt.Errorf("injected conflict %d: %w", n, catalog.ErrCommitConflict)
}

func newTable(t *testing.T) (*faultCatalog, *catalog.Table) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	cat, err := sqlcat.Create(ctx, catalog.Config{Name: "test", URI: "sqlite:///" + filepath.Join(dir, "catalog.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	if err := cat.CreateNamespace(ctx, []string{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	schema := spec.Schema{Fields: []spec.NestedField{{ID: 1, Name: "id", Type: spec.LongType{}, Required: true}}}
	md, err := spec.NewTableMetadata(schema, spec.PartitionSpec{}, spec.SortOrder{}, filepath.Join(dir, "t"), nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, catalog.Ident{Namespace: []string{"ns"}, Name: "t"}, md)
	if err != nil {
		t.Fatal(err)
	}
	return &faultCatalog{Catalog: cat}, tbl
}

// fileBuilder is a BuildFunc that writes one file per attempt plus, once,
// a shared file every later attempt reuses, and sets a table property.
type fileBuilder struct {
	written []string
	shared  string
	bases   []*catalog.Table
	failAt  int // attempt whose build fails; -1 never
}

func (b *fileBuilder) build(ctx context.Context, base *catalog.Table, attempt int) (*Attempt, error) {
	b.bases = append(b.bases, base)
	if attempt == b.failAt {
		return nil, errors.New("build refused")
	}
	dir := base.Metadata.Location + "/metadata"
	a := &Attempt{
		Requirements: []spec.Requirement{spec.AssertTableUUID{UUID: base.Metadata.TableUUID}},
		Updates:      []spec.Update{spec.SetProperties{Updates: map[string]string{"attempt": fmt.Sprint(attempt)}}},
	}
	if b.shared == "" {
		b.shared = dir + "/shared.avro"
		if err := fileio.WriteFile(ctx, base.IO, b.shared, []byte("x")); err != nil {
			return nil, err
		}
		a.Written = append(a.Written, b.shared)
	} else {
		a.Reused = append(a.Reused, b.shared)
	}
	own := fmt.Sprintf("%s/attempt-%d.avro", dir, attempt)
	if err := fileio.WriteFile(ctx, base.IO, own, []byte("x")); err != nil {
		return nil, err
	}
	b.written = append(b.written, own)
	a.Written = append(a.Written, own)
	return a, nil
}

func fileExists(t *testing.T, fio fileio.FileIO, p string) bool {
	t.Helper()
	f, err := fio.Open(context.Background(), p)
	if errors.Is(err, fileio.ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	return true
}

func recordSleeps(o *Options) *[]time.Duration {
	var waits []time.Duration
	o.Sleep = func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}
	return &waits
}

func TestRunRetriesConflictThenSucceeds(t *testing.T) {
	cat, tbl := newTable(t)
	cat.before = func(n int) error {
		if n <= 2 {
			return conflict(n)
		}
		return nil
	}
	opts := Options{NumRetries: 4, MinWait: 100 * time.Millisecond, MaxWait: 150 * time.Millisecond}
	waits := recordSleeps(&opts)
	b := &fileBuilder{failAt: -1}
	res, err := Run(context.Background(), cat, tbl, b.build, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Metadata.Properties["attempt"] != "2" {
		t.Errorf("committed attempt %q, want 2", res.Metadata.Properties["attempt"])
	}
	if len(b.bases) != 3 || b.bases[0] != tbl || b.bases[1] == tbl {
		t.Errorf("builds: %d, first on the caller's table %v, later on reloaded ones %v", len(b.bases), b.bases[0] == tbl, len(b.bases) > 1 && b.bases[1] != tbl)
	}
	for i, p := range b.written {
		if want := i == 2; fileExists(t, tbl.IO, p) != want {
			t.Errorf("%s exists = %v, want %v", p, !want, want)
		}
	}
	if !fileExists(t, tbl.IO, b.shared) {
		t.Errorf("reused file %s was removed", b.shared)
	}
	if len(*waits) != 2 {
		t.Fatalf("waits %v, want 2", *waits)
	}
	for i, w := range *waits {
		lo := opts.MinWait << i
		if lo > opts.MaxWait {
			lo = opts.MaxWait
		}
		if w < lo || w > opts.MaxWait {
			t.Errorf("wait %d = %s, want within [%s, %s]", i+1, w, lo, opts.MaxWait)
		}
	}
}

func TestRunGivesUpAfterRetries(t *testing.T) {
	cat, tbl := newTable(t)
	cat.before = conflict
	opts := Options{NumRetries: 2, MinWait: time.Millisecond, MaxWait: time.Millisecond}
	waits := recordSleeps(&opts)
	b := &fileBuilder{failAt: -1}
	_, err := Run(context.Background(), cat, tbl, b.build, opts)
	if !errors.Is(err, catalog.ErrCommitConflict) {
		t.Fatalf("err = %v, want ErrCommitConflict", err)
	}
	if cat.calls.Load() != 3 || len(*waits) != 2 {
		t.Errorf("%d attempts, %d waits; want 3 and 2", cat.calls.Load(), len(*waits))
	}
	for _, p := range append(b.written, b.shared) {
		if fileExists(t, tbl.IO, p) {
			t.Errorf("%s left behind after giving up", p)
		}
	}
}

func TestRunStopsOnUnknownStateAndKeepsFiles(t *testing.T) {
	cat, tbl := newTable(t)
	cat.before = func(n int) error {
		if n == 1 {
			return conflict(n)
		}
		return nil
	}
	// The commit lands, but the answer is lost.
	cat.after = func(n int, res *catalog.Table, err error) (*catalog.Table, error) {
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("connection reset: %w", catalog.ErrCommitStateUnknown)
	}
	opts := DefaultOptions()
	recordSleeps(&opts)
	b := &fileBuilder{failAt: -1}
	_, err := Run(context.Background(), cat, tbl, b.build, opts)
	if !errors.Is(err, catalog.ErrCommitStateUnknown) {
		t.Fatalf("err = %v, want ErrCommitStateUnknown", err)
	}
	if cat.calls.Load() != 2 {
		t.Errorf("%d commit calls, want 2 (no retry after unknown)", cat.calls.Load())
	}
	if !strings.Contains(err.Error(), "kept") {
		t.Errorf("error does not say files were kept: %v", err)
	}
	for _, p := range []string{b.shared, b.written[1]} {
		if !fileExists(t, tbl.IO, p) {
			t.Errorf("%s removed after an unknown outcome", p)
		}
	}
	cur, lerr := cat.LoadTable(context.Background(), tbl.Ident)
	if lerr != nil {
		t.Fatal(lerr)
	}
	if cur.Metadata.Properties["attempt"] != "1" {
		t.Errorf("the commit should have landed: attempt = %q", cur.Metadata.Properties["attempt"])
	}
}

func TestRunBuildErrorRemovesEarlierAttempts(t *testing.T) {
	cat, tbl := newTable(t)
	cat.before = conflict
	opts := DefaultOptions()
	recordSleeps(&opts)
	b := &fileBuilder{failAt: 1}
	_, err := Run(context.Background(), cat, tbl, b.build, opts)
	if err == nil || !strings.Contains(err.Error(), "build refused") {
		t.Fatalf("err = %v", err)
	}
	if fileExists(t, tbl.IO, b.written[0]) || fileExists(t, tbl.IO, b.shared) {
		t.Errorf("files of the conflicting attempt left behind")
	}
}

func TestRunOtherErrorKeepsFiles(t *testing.T) {
	cat, tbl := newTable(t)
	cat.before = func(int) error { return errors.New("bad request") }
	b := &fileBuilder{failAt: -1}
	_, err := Run(context.Background(), cat, tbl, b.build, DefaultOptions())
	if err == nil || cat.calls.Load() != 1 {
		t.Fatalf("err = %v after %d calls", err, cat.calls.Load())
	}
	if !fileExists(t, tbl.IO, b.written[0]) {
		t.Errorf("file removed after an error of unknown meaning")
	}
}

// A commit whose metadata file cannot be written (here its directory is
// blocked by a regular file; in production, a full disk) definitely did not
// happen: the files the attempt wrote are removed, not kept.
func TestRunDefiniteFailureRemovesFiles(t *testing.T) {
	cat, tbl := newTable(t)
	blocker := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := &fileBuilder{failAt: -1}
	build := func(ctx context.Context, base *catalog.Table, attempt int) (*Attempt, error) {
		a, err := b.build(ctx, base, attempt)
		if err == nil {
			a.Updates = append(a.Updates, spec.SetProperties{Updates: map[string]string{spec.PropMetadataPath: blocker + "/meta"}})
		}
		return a, err
	}
	_, err := Run(context.Background(), cat, tbl, build, DefaultOptions())
	if !errors.Is(err, catalog.ErrCommitFailed) {
		t.Fatalf("err = %v, want ErrCommitFailed", err)
	}
	if cat.calls.Load() != 1 {
		t.Errorf("%d commit calls, want 1 (a definite failure is not retried)", cat.calls.Load())
	}
	if !strings.Contains(err.Error(), "removed the 2 files") {
		t.Errorf("error does not say the files were removed: %v", err)
	}
	// The catalog's error names the commit and the table; the loop adds
	// the attempt, not them again, and the metadata file is named once.
	if n := strings.Count(err.Error(), "commit "+tbl.Ident.String()+":"); n != 1 {
		t.Errorf("error names the commit %d times: %v", n, err)
	}
	if n := strings.Count(err.Error(), ".metadata.json"); n != 1 {
		t.Errorf("error names the metadata file %d times: %v", n, err)
	}
	for _, p := range []string{b.shared, b.written[0]} {
		if fileExists(t, tbl.IO, p) {
			t.Errorf("%s kept after a definite failure", p)
		}
	}
	cur, err := cat.LoadTable(context.Background(), tbl.Ident)
	if err != nil {
		t.Fatal(err)
	}
	if cur.MetadataLocation != tbl.MetadataLocation {
		t.Errorf("the table moved to %s", cur.MetadataLocation)
	}
}

func TestRunTotalTimeout(t *testing.T) {
	cat, tbl := newTable(t)
	cat.before = conflict
	now := time.Unix(1000, 0)
	opts := Options{NumRetries: 100, MinWait: time.Second, MaxWait: time.Second, TotalTimeout: 5 * time.Second,
		Now: func() time.Time { return now }}
	opts.Sleep = func(_ context.Context, d time.Duration) error { now = now.Add(d); return nil }
	b := &fileBuilder{failAt: -1}
	_, err := Run(context.Background(), cat, tbl, b.build, opts)
	if !errors.Is(err, catalog.ErrCommitConflict) || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("err = %v", err)
	}
	if n := cat.calls.Load(); n != 6 { // at 0s, 1s, ... 5s
		t.Errorf("%d attempts in a 5s budget with 1s waits, want 6", n)
	}
}

func TestBackoffBounds(t *testing.T) {
	o := Options{MinWait: 100 * time.Millisecond, MaxWait: time.Second}
	for retry := 1; retry <= 12; retry++ {
		base := o.MinWait << (retry - 1)
		if base > o.MaxWait || retry > 10 {
			base = o.MaxWait
		}
		for range 50 {
			d := o.backoff(retry)
			if d < base || d > o.MaxWait || d > base+base/10 {
				t.Fatalf("retry %d: wait %s outside [%s, min(%s, +10%%)]", retry, d, base, o.MaxWait)
			}
		}
	}
}

func TestOptionsFromProperties(t *testing.T) {
	o := OptionsFromProperties(map[string]string{
		PropNumRetries: "7", PropMinWaitMS: "5", PropMaxWaitMS: "bad", PropTotalTimeout: "-1",
	})
	if o.NumRetries != 7 || o.MinWait != 5*time.Millisecond || o.MaxWait != DefaultMaxWait || o.TotalTimeout != DefaultTotalTimeout {
		t.Errorf("options %+v", o)
	}
	if d := OptionsFromProperties(nil); d.NumRetries != 4 || d.MinWait != 100*time.Millisecond || d.MaxWait != time.Minute || d.TotalTimeout != 30*time.Minute {
		t.Errorf("defaults %+v", d)
	}
}
