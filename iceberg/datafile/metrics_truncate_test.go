package datafile

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/icectl/icectl/iceberg/spec"
)

func TestTruncateStringBounds(t *testing.T) {
	max := "\U0010ffff"
	tests := []struct {
		name    string
		in      string
		n       int
		lower   string
		upper   string
		noUpper bool
	}{
		{"shorter than n", "abc", 5, "abc", "abc", false},
		{"exactly n", "abc", 3, "abc", "abc", false},
		{"n=1", "abc", 1, "a", "b", false},
		{"ascii", "abcdef", 3, "abc", "abd", false},
		{"two-byte", "éééé", 2, "éé", "éê", false},
		{"three-byte", "中文字", 2, "中文", "中斈", false},
		{"emoji counted as one code point", "😀😀😀", 2, "😀😀", "😀😁", false},
		{"emoji n=1", "😀x", 1, "😀", "😁", false},
		{"max code point carries", "a" + max + "b", 2, "a" + max, "b", false},
		{"run of max code points carries", "a" + max + max + max, 3, "a" + max + max, "b", false},
		{"all max code points", max + max + max, 2, max + max, "", true},
		{"skip surrogates", "\ud7ffx", 1, "\ud7ff", "\ue000", false},
		{"ascii 0x7f to two-byte", "\x7fa", 1, "\x7f", "\u0080", false},
		{"U+FFFF to U+10000", "\uffffa", 1, "\uffff", "\U00010000", false},
		{"empty", "", 4, "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lo := TruncateLowerBound(spec.StringType{}, []byte(tc.in), tc.n)
			if string(lo) != tc.lower {
				t.Errorf("lower = %q, want %q", lo, tc.lower)
			}
			up, ok := TruncateUpperBound(spec.StringType{}, []byte(tc.in), tc.n)
			if ok == tc.noUpper {
				t.Fatalf("upper ok = %v, want %v", ok, !tc.noUpper)
			}
			if ok && string(up) != tc.upper {
				t.Errorf("upper = %q, want %q", up, tc.upper)
			}
			if ok && (bytes.Compare(up, []byte(tc.in)) < 0 || !utf8.Valid(up) || utf8.RuneCount(up) > tc.n) {
				t.Errorf("upper %q is not a valid bound of %q with at most %d code points", up, tc.in, tc.n)
			}
		})
	}
}

func TestTruncateBinaryBounds(t *testing.T) {
	tests := []struct {
		name    string
		typ     spec.Type
		in      []byte
		n       int
		lower   []byte
		upper   []byte
		noUpper bool
	}{
		{"shorter", spec.BinaryType{}, []byte{1, 2}, 4, []byte{1, 2}, []byte{1, 2}, false},
		{"n=1", spec.BinaryType{}, []byte{1, 2, 3}, 1, []byte{1}, []byte{2}, false},
		{"increment last", spec.BinaryType{}, []byte{1, 2, 3}, 2, []byte{1, 2}, []byte{1, 3}, false},
		{"carry past ff", spec.BinaryType{}, []byte{1, 0xff, 0xff, 0}, 3, []byte{1, 0xff, 0xff}, []byte{2}, false},
		{"all ff", spec.BinaryType{}, []byte{0xff, 0xff, 0}, 2, []byte{0xff, 0xff}, nil, true},
		{"all ff but short enough", spec.BinaryType{}, []byte{0xff, 0xff}, 2, []byte{0xff, 0xff}, []byte{0xff, 0xff}, false},
		{"fixed truncates like binary", spec.FixedType{Length: 4}, []byte{5, 6, 7, 8}, 2, []byte{5, 6}, []byte{5, 7}, false},
		{"uuid never truncated", spec.UUIDType{}, bytes.Repeat([]byte{0xff}, 16), 2, bytes.Repeat([]byte{0xff}, 16), bytes.Repeat([]byte{0xff}, 16), false},
		{"long never truncated", spec.LongType{}, []byte{1, 2, 3, 4, 5, 6, 7, 8}, 1, []byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{1, 2, 3, 4, 5, 6, 7, 8}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := bytes.Clone(tc.in)
			lo := TruncateLowerBound(tc.typ, in, tc.n)
			if !bytes.Equal(lo, tc.lower) {
				t.Errorf("lower = %x, want %x", lo, tc.lower)
			}
			up, ok := TruncateUpperBound(tc.typ, in, tc.n)
			if ok == tc.noUpper {
				t.Fatalf("upper ok = %v, want %v", ok, !tc.noUpper)
			}
			if ok && !bytes.Equal(up, tc.upper) {
				t.Errorf("upper = %x, want %x", up, tc.upper)
			}
			if len(lo) > 0 {
				lo[0] ^= 1
			}
			if len(up) > 0 {
				up[0] ^= 1
			}
			if !bytes.Equal(in, tc.in) {
				t.Errorf("results alias the input")
			}
		})
	}
}

// FuzzTruncateBounds checks the bound invariants on arbitrary bytes,
// including invalid UTF-8 in strings.
func FuzzTruncateBounds(f *testing.F) {
	for _, s := range []string{"abc", "😀😀", "\U0010ffff\U0010ffffa", "\xff\xfe", "é\xffx", ""} {
		f.Add([]byte(s), 1, true)
		f.Add([]byte(s), 3, false)
	}
	f.Fuzz(func(t *testing.T, in []byte, n int, str bool) {
		if n < 1 || n > 64 {
			return
		}
		var typ spec.Type = spec.BinaryType{}
		if str {
			typ = spec.StringType{}
		}
		lo := TruncateLowerBound(typ, in, n)
		if !bytes.HasPrefix(in, lo) {
			t.Fatalf("lower %x is not a prefix of %x", lo, in)
		}
		up, ok := TruncateUpperBound(typ, in, n)
		if !ok {
			// Only allowed when the kept prefix cannot be incremented.
			if !str && !bytes.Equal(lo, bytes.Repeat([]byte{0xff}, len(lo))) {
				t.Fatalf("no binary upper bound for %x", in)
			}
			return
		}
		if bytes.Compare(up, in) < 0 {
			t.Fatalf("upper %x < value %x", up, in)
		}
		// up must also bound every value sharing the kept prefix.
		longer := append(bytes.Clone(lo), bytes.Repeat([]byte{0xff}, 8)...)
		if len(lo) < len(in) && bytes.Compare(up, longer) < 0 {
			t.Fatalf("upper %x < %x which shares the prefix %x", up, longer, lo)
		}
		if !str && len(up) > n {
			t.Fatalf("upper %x longer than %d", up, n)
		}
		if str && utf8.Valid(in) && (!utf8.Valid(up) || utf8.RuneCount(up) > n) {
			t.Fatalf("upper %q invalid or longer than %d code points", up, n)
		}
	})
}
