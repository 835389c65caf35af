package orphan

import (
	"testing"
)

// memTable is a table on the in-memory store (paths are opaque strings,
// as S3 keys are) whose references use other forms of its paths: another
// authority, another scheme, doubled slashes.
func memTable(t *testing.T) (*fixture, string, map[string]string) {
	t.Helper()
	f := newFixture(t, "mem://bucket/wh")
	id := f.create(t, "t", "", nil)
	loc := f.load(t, id).Metadata.Location // mem://bucket/wh/ns/t
	tbl := f.appendFiles(t, id, true, loc+"/data/plain.parquet")
	paths := map[string]string{
		"authority": loc + "/data/auth.parquet",   // referenced as mem://elsewhere/...
		"scheme":    loc + "/data/scheme.parquet", // referenced as memx://bucket/...
		"slashes":   loc + "/data//dbl.parquet",   // referenced with //, also listed without
		"single":    loc + "/data/dbl.parquet",
		"orphan":    loc + "/data/orphan.parquet",
	}
	for _, p := range paths {
		f.put(t, tbl.IO, p)
	}
	f.appendFiles(t, id, false,
		"mem://elsewhere/wh/ns/t/data/auth.parquet",
		"memx://bucket/wh/ns/t/data/scheme.parquet",
		loc+"/data//dbl.parquet")
	return f, loc, paths
}

func TestPrefixMismatch(t *testing.T) {
	for _, c := range []struct {
		name      string
		o         func(*Options)
		err       error
		conflicts []string
		deleted   []string
	}{
		{"error", func(*Options) {}, ErrPrefixMismatch, []string{"authority", "scheme"}, nil},
		{"ignore", func(o *Options) { o.PrefixMismatch = PrefixIgnore }, nil, nil, []string{"orphan"}},
		{"delete", func(o *Options) { o.PrefixMismatch = PrefixDelete }, nil, nil, []string{"orphan", "authority", "scheme"}},
		{"equivalences", func(o *Options) {
			o.EqualSchemes = map[string]string{"memx": "mem"}
			o.EqualAuthorities = map[string]string{"elsewhere": "bucket"}
		}, nil, nil, []string{"orphan"}},
		{"equivalences, delete", func(o *Options) {
			o.EqualSchemes = map[string]string{"memx": "mem"}
			o.EqualAuthorities = map[string]string{"elsewhere": "bucket"}
			o.PrefixMismatch = PrefixDelete
		}, nil, nil, []string{"orphan"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, loc, paths := memTable(t)
			id := catalogIdent("t")
			tbl := f.load(t, id)
			before := files(t, tbl.IO, loc+"/")
			o := opts()
			c.o(&o)
			var s sink
			_, err := Run(f.Ctx, f.loader(id), o, &s)
			if !isErr(err, c.err) || (c.err == nil) != (err == nil) {
				t.Fatalf("error %v, want %v", err, c.err)
			}
			var wantConflicts, wantDeleted []string
			for _, k := range c.conflicts {
				wantConflicts = append(wantConflicts, paths[k])
			}
			for _, k := range c.deleted {
				wantDeleted = append(wantDeleted, paths[k])
			}
			var gotConflicts []string
			for _, cf := range s.conflicts {
				gotConflicts = append(gotConflicts, cf.Path)
				if cf.ReferencedAs == "" || cf.Mismatch == "" {
					t.Errorf("conflict %+v does not say why", cf)
				}
			}
			if !sameStrings(gotConflicts, wantConflicts) {
				t.Errorf("conflicts %v, want %v", gotConflicts, wantConflicts)
			}
			if got := s.byStatus()[StatusDeleted]; !sameStrings(got, wantDeleted) {
				t.Errorf("deleted %v, want %v", got, wantDeleted)
			}
			after := files(t, tbl.IO, loc+"/")
			if len(before)-len(after) != len(wantDeleted) {
				t.Errorf("%d files gone, want %d: %v", len(before)-len(after), len(wantDeleted), diff(before, after))
			}
			// "a//b" is referenced; "a/b", a different object here, is
			// kept too: the two cannot be told apart safely.
			for _, k := range []string{"slashes", "single"} {
				if _, ok := after[paths[k]]; !ok {
					t.Errorf("%s deleted", paths[k])
				}
			}
			checkReferencedExist(t, f.load(t, id))
		})
	}
}

// TestSiblingPrefix: a table at .../t never touches .../t2 or .../t.bak,
// even when they sit in the same store and look orphaned from t.
func TestSiblingPrefix(t *testing.T) {
	f := newFixture(t, "mem://bucket/wh")
	id := f.create(t, "t", "", nil)
	loc := f.load(t, id).Metadata.Location
	tbl := f.appendFiles(t, id, true, loc+"/data/a.parquet")
	others := []string{loc + "2/data/x.parquet", loc + ".bak/data/x.parquet", loc + "2/metadata/00000-x.metadata.json", loc}
	for _, p := range others {
		f.put(t, tbl.IO, p)
	}
	mine := loc + "/data/orphan.parquet"
	f.put(t, tbl.IO, mine)
	var s sink
	if _, err := Run(f.Ctx, f.loader(id), opts(), &s); err != nil {
		t.Fatal(err)
	}
	if got := s.byStatus(); !sameStrings(got[StatusDeleted], []string{mine}) || len(got) != 1 {
		t.Errorf("reports %v, want only %s", got, mine)
	}
	all := files(t, tbl.IO, "mem://bucket/")
	for _, p := range others {
		if _, ok := all[p]; !ok {
			t.Errorf("%s deleted", p)
		}
	}
	checkReferencedExist(t, f.load(t, id))
}

// TestTrailingSlashLocation: a table whose location ends in '/' (its
// writers then produce ".../t//data/..." paths).
func TestTrailingSlashLocation(t *testing.T) {
	f := newFixture(t, "mem://bucket/wh")
	id := f.create(t, "t", "mem://bucket/wh/ns/t/", nil)
	tbl := f.load(t, id)
	live := "mem://bucket/wh/ns/t//data/a.parquet"
	f.appendFiles(t, id, true, live)
	orphan := "mem://bucket/wh/ns/t//data/orphan.parquet"
	orphan2 := "mem://bucket/wh/ns/t/data/orphan2.parquet"
	sibling := "mem://bucket/wh/ns/t2/data/x.parquet"
	for _, p := range []string{orphan, orphan2, sibling} {
		f.put(t, tbl.IO, p)
	}
	var s sink
	if _, err := Run(f.Ctx, f.loader(id), opts(), &s); err != nil {
		t.Fatal(err)
	}
	if got := s.byStatus(); !sameStrings(got[StatusDeleted], []string{orphan, orphan2}) || len(got) != 1 {
		t.Errorf("reports %v", got)
	}
	all := files(t, tbl.IO, "mem://bucket/")
	for _, p := range []string{live, sibling} {
		if _, ok := all[p]; !ok {
			t.Errorf("%s deleted", p)
		}
	}
	checkReferencedExist(t, f.load(t, id))
}
