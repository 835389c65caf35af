package theta

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"
)

// goldenValues are the inputs of testdata/golden.py's cases, as bytes.
func goldenValues(name string) [][]byte {
	le64 := func(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }
	var out [][]byte
	switch name {
	case "empty":
	case "one-long":
		out = append(out, le64(42))
	case "ints-100":
		for i := range 100 {
			out = append(out, binary.LittleEndian.AppendUint32(nil, uint32(i)))
		}
	case "strings":
		for _, s := range []string{"a", "b", "", "a", "héllo", "b"} {
			out = append(out, []byte(s))
		}
	case "doubles":
		// Python's and Java's NaN: 0x7ff8000000000000 (Go's math.NaN is not).
		for _, d := range []float64{0, math.Copysign(0, -1), 1.5, math.Float64frombits(0x7ff8000000000000), math.Inf(1)} {
			out = append(out, binary.LittleEndian.AppendUint64(nil, math.Float64bits(d)))
		}
	case "longs-5000":
		for i := range int64(5000) {
			out = append(out, le64(i))
		}
	case "longs-20000":
		for i := range int64(20000) {
			out = append(out, le64(i*7919))
		}
	default:
		return nil
	}
	return out
}

type goldenSketch struct {
	Len      int     `json:"len"`
	Estimate float64 `json:"estimate"`
	Hex      string  `json:"hex"`
	Head     string  `json:"head"`
	SHA256   string  `json:"sha256"`
}

// check compares got with Java's serialization and estimate.
func (g goldenSketch) check(t *testing.T, what string, got *Compact) {
	t.Helper()
	b := got.Bytes()
	if got.Estimate() != g.Estimate {
		t.Errorf("%s: estimate %v, Java's %v", what, got.Estimate(), g.Estimate)
	}
	if len(b) != g.Len {
		t.Errorf("%s: %d bytes, Java's %d", what, len(b), g.Len)
	}
	if g.Hex != "" {
		if h := hex.EncodeToString(b); h != g.Hex {
			t.Errorf("%s:\n got %s\nJava %s", what, h, g.Hex)
		}
	} else {
		if h := hex.EncodeToString(b[:min(32, len(b))]); h != g.Head {
			t.Errorf("%s: first bytes\n got %s\nJava %s", what, h, g.Head)
		}
		if s := sha256.Sum256(b); hex.EncodeToString(s[:]) != g.SHA256 {
			t.Errorf("%s: bytes differ from Java's (SHA-256)", what)
		}
	}
	// What we wrote reads back as itself.
	back, err := Parse(b, DefaultSeed)
	if err != nil {
		t.Fatalf("%s: parse: %v", what, err)
	}
	if back.Theta != got.Theta || back.Empty != got.Empty || !slices.Equal(back.Entries, got.Entries) {
		t.Errorf("%s: parsed back as another sketch", what)
	}
}

// TestGolden checks sketches against Java's library's for the same values
// (testdata/golden.py): Java's UpdateSketch.compact() and the Union of it,
// byte for byte, and their estimates.
func TestGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name    string       `json:"name"`
		Compact goldenSketch `json:"compact"`
		Union   goldenSketch `json:"union"`
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 7 {
		t.Fatalf("%d golden cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			vals := goldenValues(c.Name)
			if vals == nil && c.Name != "empty" {
				t.Fatalf("no values for case %q", c.Name)
			}
			s := NewDefault()
			for _, v := range vals {
				s.Update(v)
			}
			c.Compact.check(t, "compact", s.Compact())
			c.Union.check(t, "union", s.Result())
		})
	}
}

func TestSeedHash(t *testing.T) {
	if got := SeedHash(DefaultSeed); got != 0x93cc {
		t.Fatalf("seed hash of 9001: %#x, want 0x93cc", got)
	}
}

// TestUnionOfParts checks that the union of sketches of parts of the
// values is the sketch of all of them, in and past estimation mode, in
// any order: the incremental computation relies on it.
func TestUnionOfParts(t *testing.T) {
	for _, n := range []int{10, 3000, 30000} {
		all := NewDefault()
		parts := []*Sketch{NewDefault(), NewDefault(), NewDefault()}
		for i := range n {
			v := binary.LittleEndian.AppendUint64(nil, uint64(i))
			all.Update(v)
			parts[i%3].Update(v)
			if i%5 == 0 { // overlaps
				parts[(i+1)%3].Update(v)
			}
		}
		want := all.Result().Bytes()
		for _, order := range [][]int{{0, 1, 2}, {2, 0, 1}} {
			u := NewUnion(DefaultLgK, DefaultSeed)
			for _, i := range order {
				if err := u.Add(parts[i].Result()); err != nil {
					t.Fatal(err)
				}
			}
			if got := u.Result().Bytes(); !slices.Equal(got, want) {
				t.Fatalf("n=%d order %v: union of parts differs from the sketch of all", n, order)
			}
		}
	}
}

func TestParseRejects(t *testing.T) {
	s := NewDefault()
	for i := range 10 {
		s.Update([]byte{byte(i)})
	}
	good := s.Result().Bytes()
	other := New(DefaultLgK, 1)
	other.Update([]byte("x"))
	other.Update([]byte("y"))
	for name, b := range map[string][]byte{
		"short":      good[:5],
		"truncated":  good[:len(good)-8],
		"serVer":     append([]byte{good[0], 2}, good[2:]...),
		"family":     append([]byte{good[0], good[1], 2}, good[3:]...),
		"other seed": other.Compact().Bytes(),
	} {
		if _, err := Parse(b, DefaultSeed); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}
