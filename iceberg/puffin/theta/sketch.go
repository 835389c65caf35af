package theta

import (
	"math"
	"slices"
)

// Defaults of the Java library's UpdateSketch builder, which Iceberg uses.
const (
	// DefaultLgK is log2 of the nominal entries (4096).
	DefaultLgK = 12
	// DefaultSeed is the hash seed.
	DefaultSeed uint64 = 9001
)

// maxTheta is theta 1.0: Java's Long.MAX_VALUE.
const maxTheta = math.MaxInt64

// Sketch is an update sketch: it takes values and keeps what a compact
// sketch of them needs. The zero value is not usable; use New.
type Sketch struct {
	lgK   int
	seed  uint64
	theta uint64
	empty bool
	// slots is an open-addressing set of the retained hashes (0 is free),
	// larger than Java's table so that probing stays short; only the
	// rebuild threshold, which decides which hashes survive, is Java's.
	slots []uint64
	count int
}

// New returns an empty sketch with nominal entries 2^lgK and seed.
func New(lgK int, seed uint64) *Sketch {
	return &Sketch{lgK: lgK, seed: seed, theta: maxTheta, empty: true, slots: make([]uint64, 64)}
}

// NewDefault returns an empty sketch as Java's UpdateSketch.builder().build().
func NewDefault() *Sketch { return New(DefaultLgK, DefaultSeed) }

// Update adds the value whose bytes are b, as Java's update(byte[]) or
// update(ByteBuffer) does: an empty b is ignored and leaves the sketch
// empty.
func (s *Sketch) Update(b []byte) {
	if len(b) == 0 {
		return
	}
	s.UpdateHash(murmur3(b, s.seed) >> 1)
}

// UpdateHash adds a hash as computed by Update.
func (s *Sketch) UpdateHash(h uint64) {
	s.empty = false
	if h == 0 || h >= s.theta {
		return
	}
	if !s.insert(h) {
		return
	}
	s.count++
	// Java rebuilds when its table, at its full 2^(lgK+1) slots, holds
	// more than 15/16 of them.
	if s.count > (15<<(s.lgK+1))/16 {
		s.rebuild()
	} else if 2*s.count > len(s.slots) {
		s.grow()
	}
}

// insert adds h to the set and reports whether it was new.
func (s *Sketch) insert(h uint64) bool {
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case 0:
			s.slots[i] = h
			return true
		case h:
			return false
		}
	}
}

func (s *Sketch) grow() {
	old := s.slots
	s.slots = make([]uint64, 2*len(old))
	for _, h := range old {
		if h != 0 {
			s.insert(h)
		}
	}
}

// rebuild keeps the 2^lgK smallest hashes, theta the next one, as Java's
// quickSelectAndRebuild does.
func (s *Sketch) rebuild() {
	hs := s.hashes()
	slices.Sort(hs)
	k := 1 << s.lgK
	s.theta = hs[k]
	clear(s.slots)
	for _, h := range hs[:k] {
		s.insert(h)
	}
	s.count = k
}

// hashes returns the retained hashes, unordered.
func (s *Sketch) hashes() []uint64 {
	out := make([]uint64, 0, s.count)
	for _, h := range s.slots {
		if h != 0 {
			out = append(out, h)
		}
	}
	return out
}

// Compact returns the ordered compact sketch of s, as Java's compact().
func (s *Sketch) Compact() *Compact {
	hs := s.hashes()
	slices.Sort(hs)
	c := &Compact{Theta: s.theta, Entries: hs, Empty: s.empty, SeedHash: SeedHash(s.seed)}
	if c.Empty {
		c.Theta, c.Entries = maxTheta, nil
	}
	return c
}

// Result is what Iceberg's Spark aggregate stores for the values of s: the
// union of s alone, at most 2^lgK entries.
func (s *Sketch) Result() *Compact {
	u := NewUnion(s.lgK, s.seed)
	u.Add(s.Compact())
	return u.Result()
}
