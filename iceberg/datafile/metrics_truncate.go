package datafile

import (
	"unicode/utf8"

	"github.com/icectl/icectl/iceberg/spec"
)

// TruncateLowerBound cuts a serialized lower bound of type t to n units:
// the first n Unicode code points of a string, the first n bytes of binary
// or fixed (Java truncates fixed bounds as it does binary). A prefix never
// sorts after the value, so it stays a valid lower bound. Other types, and
// n <= 0, return b unchanged. The result never aliases b.
func TruncateLowerBound(t spec.Type, b []byte, n int) []byte {
	if n > 0 {
		switch t.(type) {
		case spec.StringType:
			b = b[:metricsUTF8PrefixLen(b, n)]
		case spec.BinaryType, spec.FixedType:
			if len(b) > n {
				b = b[:n]
			}
		}
	}
	return append([]byte(nil), b...)
}

// TruncateUpperBound cuts a serialized upper bound of type t to at most n
// units and, when anything was cut, increments the last unit so the result
// still sorts after every value with that prefix. A string's last code
// point is incremented (skipping the surrogate range); when it is U+10FFFF
// the increment carries to the code point before it, dropping what
// follows. Binary and fixed bytes carry the same way past 0xFF. ok is false
// when no upper bound of at most n units exists (all code points U+10FFFF,
// all bytes 0xFF): then no upper bound may be written. Other types, and
// n <= 0, return b unchanged. The result never aliases b.
func TruncateUpperBound(t spec.Type, b []byte, n int) (ub []byte, ok bool) {
	if n > 0 {
		switch t.(type) {
		case spec.StringType:
			return metricsTruncateStringMax(b, n)
		case spec.BinaryType, spec.FixedType:
			return metricsTruncateBinaryMax(b, n)
		}
	}
	return append([]byte(nil), b...), true
}

// metricsUTF8PrefixLen returns the byte length of the first n code points of b.
// A byte that does not start valid UTF-8 counts as one unit, so the result
// is always a byte prefix of b.
func metricsUTF8PrefixLen(b []byte, n int) int {
	i := 0
	for ; n > 0 && i < len(b); n-- {
		_, size := utf8.DecodeRune(b[i:])
		i += size
	}
	return i
}

func metricsTruncateStringMax(b []byte, n int) ([]byte, bool) {
	cut := metricsUTF8PrefixLen(b, n)
	if cut == len(b) {
		return append([]byte(nil), b...), true
	}
	prefix := b[:cut]
	for len(prefix) > 0 {
		r, size := utf8.DecodeLastRune(prefix)
		start := len(prefix) - size
		// An invalid byte is not a code point and cannot be incremented as
		// one; carry past it like U+10FFFF.
		valid := r != utf8.RuneError || size > 1
		if valid && r < utf8.MaxRune {
			next := r + 1
			if next >= 0xD800 && next <= 0xDFFF {
				next = 0xE000
			}
			out := make([]byte, start, start+utf8.UTFMax)
			copy(out, prefix[:start])
			return utf8.AppendRune(out, next), true
		}
		prefix = prefix[:start]
	}
	return nil, false
}

func metricsTruncateBinaryMax(b []byte, n int) ([]byte, bool) {
	if len(b) <= n {
		return append([]byte(nil), b...), true
	}
	for i := n - 1; i >= 0; i-- {
		if b[i] != 0xFF {
			out := append([]byte(nil), b[:i+1]...)
			out[i]++
			return out, true
		}
	}
	return nil, false
}
