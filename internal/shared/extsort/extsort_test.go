package extsort

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

func collect(t *testing.T, it *Iter) [][]byte {
	t.Helper()
	var out [][]byte
	for rec, ok := it.Next(); ok; rec, ok = it.Next() {
		out = append(out, bytes.Clone(rec))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSortsInMemoryAndSpilled(t *testing.T) {
	for _, budget := range []int{1 << 30, 1000, 1} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(budget)))
			dir := t.TempDir()
			s := New(dir, budget)
			defer s.Close()
			var want [][]byte
			for i := range 5000 {
				rec := fmt.Appendf(nil, "s3://b/t/data/%06d/%x", r.IntN(3000), i%7)
				if i%500 == 0 {
					rec = nil // empty records sort first
				}
				want = append(want, rec)
				if err := s.Add(rec); err != nil {
					t.Fatal(err)
				}
			}
			slices.SortFunc(want, bytes.Compare)
			if s.Len() != int64(len(want)) {
				t.Errorf("Len %d, want %d", s.Len(), len(want))
			}
			if spilled := budget < 1<<30; s.Spilled() != spilled {
				t.Errorf("Spilled() = %v, want %v", s.Spilled(), spilled)
			}
			// Two iterators, one after the other, see the same records.
			for range 2 {
				got := collect(t, s.Iter())
				if len(got) != len(want) {
					t.Fatalf("got %d records, want %d", len(got), len(want))
				}
				for i := range got {
					if !bytes.Equal(got[i], want[i]) {
						t.Fatalf("record %d = %q, want %q", i, got[i], want[i])
					}
				}
			}
			if err := s.Add([]byte("late")); err == nil {
				t.Error("Add after Iter succeeded")
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			// The spill file was unlinked: nothing is left in dir.
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("left behind %v", ents)
			}
		})
	}
}

func TestUnique(t *testing.T) {
	for _, budget := range []int{1 << 30, 100} {
		s := New(t.TempDir(), budget)
		s.Unique = true
		for i := range 1000 {
			s.Add(fmt.Appendf(nil, "%03d", i%37))
		}
		got := collect(t, s.Iter())
		if len(got) != 37 {
			t.Errorf("budget %d: %d records, want 37 distinct", budget, len(got))
		}
		for i := 1; i < len(got); i++ {
			if bytes.Compare(got[i-1], got[i]) >= 0 {
				t.Errorf("budget %d: %q then %q", budget, got[i-1], got[i])
			}
		}
		s.Close()
	}
}

func TestEmpty(t *testing.T) {
	s := New(t.TempDir(), 1)
	defer s.Close()
	if got := collect(t, s.Iter()); len(got) != 0 {
		t.Errorf("empty sorter gave %q", got)
	}
}
