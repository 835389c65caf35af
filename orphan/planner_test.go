package orphan

import (
	"strings"
	"testing"
	"time"
)

var (
	testNow    = time.Date(2025, 6, 10, 12, 0, 0, 0, time.UTC)
	testCutoff = testNow.Add(-DefaultOlderThan)
	old        = testCutoff.Add(-time.Hour)
)

func file(p string, mtime time.Time) File {
	return File{Key: pathKey(splitURI(p).path), Path: p, Size: 10, ModTime: mtime}
}

func ref(p string) Ref { return Ref{Key: pathKey(splitURI(p).path), Path: p} }

func TestDecide(t *testing.T) {
	p := &Planner{Root: "s3://b/wh/t/", TrashKey: "/wh/t/.trash/", MetadataKey: "/wh/t/metadata/", Cutoff: testCutoff, Match: NewMatcher(nil, nil)}
	for _, c := range []struct {
		name string
		f    File
		refs []Ref
		mode PrefixMode
		want Verdict
	}{
		{"unreferenced and old", file("s3://b/wh/t/data/x", old), nil, PrefixError, Orphan},
		{"referenced", file("s3://b/wh/t/data/x", old), []Ref{ref("s3://b/wh/t/data/x")}, PrefixError, Referenced},
		{"referenced as s3a", file("s3://b/wh/t/data/x", old), []Ref{ref("s3a://b/wh/t/data/x")}, PrefixError, Referenced},
		{"referenced with //", file("s3://b/wh/t/data/x", old), []Ref{ref("s3://b/wh/t//data/x")}, PrefixError, Referenced},
		{"listed with //", file("s3://b/wh/t//data/x", old), []Ref{ref("s3://b/wh/t/data/x")}, PrefixError, Referenced},
		{"one of several refs matches", file("s3://b/wh/t/data/x", old), []Ref{ref("s3://other/wh/t/data/x"), ref("s3://b/wh/t/data/x")}, PrefixError, Referenced},
		{"young", file("s3://b/wh/t/data/x", testCutoff), nil, PrefixError, Young},
		{"unknown age", file("s3://b/wh/t/data/x", time.Time{}), nil, PrefixError, Young},
		{"young mismatch", file("s3://b/wh/t/data/x", testNow), []Ref{ref("s3://other/wh/t/data/x")}, PrefixError, Young},
		{"authority mismatch", file("s3://b/wh/t/data/x", old), []Ref{ref("s3://other/wh/t/data/x")}, PrefixError, Conflict},
		{"scheme mismatch", file("s3://b/wh/t/data/x", old), []Ref{ref("gs://b/wh/t/data/x")}, PrefixError, Conflict},
		{"mismatch ignored", file("s3://b/wh/t/data/x", old), []Ref{ref("gs://b/wh/t/data/x")}, PrefixIgnore, Ignored},
		{"mismatch deleted", file("s3://b/wh/t/data/x", old), []Ref{ref("gs://b/wh/t/data/x")}, PrefixDelete, Orphan},
		{"hidden file", file("s3://b/wh/t/data/_SUCCESS", old), nil, PrefixError, Hidden},
		{"hidden dir", file("s3://b/wh/t/data/_temporary/0/x", old), nil, PrefixError, Hidden},
		{"crc", file("s3://b/wh/t/metadata/.v1.metadata.json.crc", old), nil, PrefixError, Hidden},
		{"partition dir with _", file("s3://b/wh/t/data/_c=1/x", old), nil, PrefixError, Orphan},
		{"hidden above the root is not hidden", file("s3://b/wh/t/data/x", old), nil, PrefixError, Orphan},
		{"trash", file("s3://b/wh/t/.trash/r/files/data/x", old), nil, PrefixError, InTrash},
		{"trash with //", file("s3://b/wh/t//.trash/r/x", old), nil, PrefixError, InTrash},
		{"directory marker", file("s3://b/wh/t/data/", old), nil, PrefixError, Marker},
		{"expiry journal", file("s3://b/wh/t/metadata/expire-0b1c.pending", old), nil, PrefixError, Journal},
		{"expiry journal with //", file("s3://b/wh/t//metadata/expire-0b1c.pending", old), nil, PrefixError, Journal},
		{"journal name outside the metadata dir", file("s3://b/wh/t/data/expire-0b1c.pending", old), nil, PrefixError, Orphan},
		{"journal name below the metadata dir", file("s3://b/wh/t/metadata/x/expire-0b1c.pending", old), nil, PrefixError, Orphan},
		{"not a journal name", file("s3://b/wh/t/metadata/expire-.pending", old), nil, PrefixError, Orphan},
	} {
		t.Run(c.name, func(t *testing.T) {
			p.Mode = c.mode
			d := p.Decide(c.f, c.refs)
			if d.Verdict != c.want {
				t.Fatalf("verdict %d (%+v), want %d", d.Verdict, d, c.want)
			}
			if d.Verdict == Orphan && d.Reason == "" {
				t.Error("orphan without a reason")
			}
			if c.mode == PrefixDelete && !strings.Contains(d.Reason, "gs://b/wh/t/data/x") {
				t.Errorf("reason %q does not name the reference", d.Reason)
			}
		})
	}
	// Hidden is judged below the root only: a table under a hidden
	// directory still has orphans.
	ph := &Planner{Root: "s3://b/_wh/.t/", Cutoff: testCutoff, Match: NewMatcher(nil, nil)}
	if d := ph.Decide(file("s3://b/_wh/.t/data/x", old), nil); d.Verdict != Orphan {
		t.Errorf("file under a hidden root: verdict %d, want orphan", d.Verdict)
	}
}

// seq turns a slice into a next function.
func seq[T any](xs []T) func() (T, bool) {
	return func() (T, bool) {
		var zero T
		if len(xs) == 0 {
			return zero, false
		}
		x := xs[0]
		xs = xs[1:]
		return x, true
	}
}

func TestJoin(t *testing.T) {
	files := []File{file("s3://b/t/a", old), file("s3://b/t//a", old), file("s3://b/t/b", old), file("s3://b/t/c", old), file("s3://b/t/e", old)}
	refs := []Ref{ref("s3://b/t/0"), ref("s3://b/t/a"), ref("s3://x/t/a"), ref("s3://b/t/c"), ref("s3://b/t/d"), ref("s3://b/t/z")}
	got := map[string]int{}
	err := Join(seq(files), seq(refs), func(f File, rs []Ref) error {
		got[f.Path] = len(rs)
		for _, r := range rs {
			if r.Key != f.Key {
				t.Errorf("%s joined with %s", f.Path, r.Path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"s3://b/t/a": 2, "s3://b/t//a": 2, "s3://b/t/b": 0, "s3://b/t/c": 1, "s3://b/t/e": 0}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d refs, want %d", k, got[k], v)
		}
	}

	// Out-of-order input is an error, never a silent miss.
	if err := Join(seq([]File{file("s3://b/t/b", old), file("s3://b/t/a", old)}), seq[Ref](nil), func(File, []Ref) error { return nil }); err == nil {
		t.Error("unsorted listing accepted")
	}
	if err := Join(seq([]File{file("s3://b/t/c", old)}), seq([]Ref{ref("s3://b/t/b"), ref("s3://b/t/a")}), func(File, []Ref) error { return nil }); err == nil {
		t.Error("unsorted references accepted")
	}
}
