package sparkinterop

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
)

// Spark's reference results on the corpus: what Spark's own procedures
// make of a pristine corpus table (a publish with fast_forward and
// cherrypick_snapshot, a sorted rewrite_data_files) and Spark's reads of
// a pristine table at each snapshot, which a test compares with what
// icectl made of another checkout of the same table. The corpus is built
// once per version of iceberg_spark.py, Spark and Iceberg, and a pristine
// table never changes, so these results are the same in every run, as the
// corpus's own reads after Spark's writes (corpusTable.AfterWrite) are:
// they are kept beside the corpus (DIR/reference/NAME-HASH.json, HASH
// that of this package's sources), and Spark computes one again when it is
// missing or the sources changed (a test's steps or queries may have).
// Every run still has Spark read what icectl did. ICECTL_TEST_LONG=1
// recomputes them all.

var sourcesOnce struct {
	sync.Once
	hash string
	err  error
}

// sourcesHash is the hash of the package's sources (the test binary runs
// in the package's directory, as iceberg_spark.py's path assumes).
func sourcesHash(t *testing.T) string {
	t.Helper()
	s := &sourcesOnce
	s.Do(func() {
		var files []string
		for _, pattern := range []string{"*.go", "*.py"} {
			m, err := filepath.Glob(pattern)
			if err != nil {
				s.err = err
				return
			}
			files = append(files, m...)
		}
		slices.Sort(files)
		h := sha256.New()
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				s.err = err
				return
			}
			h.Write([]byte(f + "\x00"))
			h.Write(b)
		}
		s.hash = hex.EncodeToString(h.Sum(nil))
	})
	if s.err != nil || s.hash == "" {
		t.Fatalf("the package's sources: %v", s.err)
	}
	return s.hash
}

type referenceFile struct {
	Sources string          `json:"sources"`
	Value   json.RawMessage `json:"value"`
}

// reference is Spark's result name on the pristine corpus: kept from an
// earlier run of the same sources on the same corpus, else compute's
// (which has Spark do it), kept when the test has not failed.
func reference[T any](t *testing.T, idx corpusIndex, name string, compute func() T) T {
	t.Helper()
	sources := sourcesHash(t)
	// The hash in the name too: checkouts of other sources on the
	// machine (a branch, a CI run) keep theirs beside.
	path := filepath.Join(idx.Dir, "reference", name+"-"+sources[:16]+".json")
	var v T
	if os.Getenv(longEnv) == "" {
		var f referenceFile
		if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &f) == nil && f.Sources == sources &&
			json.Unmarshal(f.Value, &v) == nil {
			t.Logf("Spark's reference %s from an earlier run on this corpus (%s)", name, path)
			return v
		}
	}
	v = compute()
	if t.Failed() {
		return v
	}
	if reflect.ValueOf(&v).Elem().IsZero() {
		// A skipped computation (a subtest's) would leave nothing to
		// compare with: a test that cannot fail.
		t.Fatalf("Spark computed no reference %s", name)
	}
	b, err := json.Marshal(v)
	if err == nil {
		b, err = json.Marshal(referenceFile{Sources: sources, Value: b})
	}
	if err != nil {
		t.Fatal(err)
	}
	// Another test binary may write it too: each writes a file of its own
	// and renames it, so a reader sees one whole file.
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), name+".*.tmp")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		t.Fatal(err)
	}
	return v
}
