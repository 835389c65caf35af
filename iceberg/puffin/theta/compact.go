package theta

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Compact is a compact sketch: theta and the hashes below it.
type Compact struct {
	// Theta is the sampling threshold as Java's thetaLong: math.MaxInt64
	// is 1.0 (every distinct value seen is in Entries).
	Theta uint64
	// Entries are the retained hashes, ascending.
	Entries []uint64
	// Empty is a sketch that was given no value.
	Empty    bool
	SeedHash uint16
}

// Serialization layout (Java's PreambleUtil, serial version 3).
const (
	serVer        = 3
	familyCompact = 3

	flagReadOnly   = 1 << 1
	flagEmpty      = 1 << 2
	flagCompact    = 1 << 3
	flagOrdered    = 1 << 4
	flagSingleItem = 1 << 5
)

// Estimate is the estimated number of distinct values, computed as Java's
// getEstimate.
func (c *Compact) Estimate() float64 {
	return float64(len(c.Entries)) * (float64(math.MaxInt64) / float64(c.Theta))
}

// NDV is the estimate as Iceberg records it in a blob's ndv property:
// Java's (long) cast of the estimate.
func (c *Compact) NDV() int64 { return int64(c.Estimate()) }

// Bytes is the ordered compact serialization, byte-identical to Java's
// CompactSketch.toByteArray().
func (c *Compact) Bytes() []byte {
	if c.Empty {
		// Java writes an empty sketch without its seed hash.
		return []byte{1, serVer, familyCompact, 0, 0, flagReadOnly | flagEmpty | flagCompact | flagOrdered, 0, 0}
	}
	flags := byte(flagReadOnly | flagCompact | flagOrdered)
	pre := 2
	switch {
	case c.Theta < maxTheta:
		pre = 3
	case len(c.Entries) == 1:
		pre = 1
		flags |= flagSingleItem
	}
	b := make([]byte, 8*(pre+len(c.Entries)))
	b[0], b[1], b[2], b[5] = byte(pre), serVer, familyCompact, flags
	binary.LittleEndian.PutUint16(b[6:], c.SeedHash)
	if pre > 1 {
		binary.LittleEndian.PutUint32(b[8:], uint32(len(c.Entries)))
		binary.LittleEndian.PutUint32(b[12:], math.Float32bits(1)) // p
	}
	if pre > 2 {
		binary.LittleEndian.PutUint64(b[16:], c.Theta)
	}
	for i, h := range c.Entries {
		binary.LittleEndian.PutUint64(b[8*(pre+i):], h)
	}
	return b
}

// Parse reads a compact sketch of serial version 3 (ordered or not) as
// Java's CompactSketch.wrap does, checking its seed hash against seed.
func Parse(b []byte, seed uint64) (*Compact, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("theta sketch of %d bytes: too short", len(b))
	}
	pre, ver, fam, flags := int(b[0]&0x3f), b[1], b[2], b[5]
	switch {
	case ver != serVer:
		return nil, fmt.Errorf("theta sketch: serial version %d, want %d", ver, serVer)
	case fam != familyCompact:
		return nil, fmt.Errorf("theta sketch: family %d is not compact (%d)", fam, familyCompact)
	case flags&flagCompact == 0 || flags&flagReadOnly == 0:
		return nil, fmt.Errorf("theta sketch: flags %#x are not a compact sketch's", flags)
	case pre < 1 || pre > 3:
		return nil, fmt.Errorf("theta sketch: %d preamble longs", pre)
	}
	c := &Compact{Theta: maxTheta, SeedHash: binary.LittleEndian.Uint16(b[6:])}
	if flags&flagEmpty != 0 {
		c.Empty = true
		return c, nil
	}
	if want := SeedHash(seed); c.SeedHash != want {
		return nil, fmt.Errorf("theta sketch: seed hash %#04x, want %#04x: %w", c.SeedHash, want, ErrSeed)
	}
	n := 0
	switch {
	case pre == 1 && flags&flagSingleItem != 0:
		n = 1
	case pre == 1:
		return c, nil // not empty, no entries
	default:
		if len(b) < 8*pre {
			return nil, fmt.Errorf("theta sketch of %d bytes: too short for %d preamble longs", len(b), pre)
		}
		n = int(binary.LittleEndian.Uint32(b[8:]))
		if pre == 3 {
			c.Theta = binary.LittleEndian.Uint64(b[16:])
		}
	}
	if n < 0 || len(b) != 8*(pre+n) {
		return nil, fmt.Errorf("theta sketch of %d bytes: want %d for %d entries", len(b), 8*(pre+n), n)
	}
	c.Entries = make([]uint64, n)
	for i := range c.Entries {
		h := binary.LittleEndian.Uint64(b[8*(pre+i):])
		if h == 0 || h >= c.Theta {
			return nil, errors.New("theta sketch: an entry is not below theta")
		}
		c.Entries[i] = h
	}
	if flags&flagOrdered == 0 {
		slices.Sort(c.Entries)
	}
	return c, nil
}
