package theta

import (
	"errors"
	"slices"
)

// ErrSeed is wrapped by the error for a sketch of another seed.
var ErrSeed = errors.New("sketch of another seed")

// Union combines compact sketches as Java's Union does: its result holds
// the 2^lgK smallest hashes of its inputs below the smallest of their
// thetas, and theta the next hash (or that smallest theta, if lower).
type Union struct {
	lgK      int
	seedHash uint16
	theta    uint64
	empty    bool
	hashes   []uint64 // sorted, distinct, all below theta after compact
}

// NewUnion returns an empty union of nominal entries 2^lgK and seed.
func NewUnion(lgK int, seed uint64) *Union {
	return &Union{lgK: lgK, seedHash: SeedHash(seed), theta: maxTheta, empty: true}
}

// Add adds c to the union. A sketch of another seed is an error wrapping
// ErrSeed; an empty sketch (which carries no seed hash) is always taken.
func (u *Union) Add(c *Compact) error {
	if c.Empty {
		return nil
	}
	if c.SeedHash != u.seedHash {
		return ErrSeed
	}
	u.empty = false
	u.theta = min(u.theta, c.Theta)
	for _, h := range c.Entries {
		if h < u.theta {
			u.hashes = append(u.hashes, h)
		}
	}
	// Keep memory near 2k: what is past the k+1 smallest can never be
	// in the result.
	if len(u.hashes) > 4<<u.lgK {
		u.compact()
	}
	return nil
}

// compact sorts and dedupes the hashes and drops all but the k smallest,
// lowering theta to the next one.
func (u *Union) compact() {
	slices.Sort(u.hashes)
	u.hashes = slices.Compact(u.hashes)
	n := 0
	for n < len(u.hashes) && u.hashes[n] < u.theta {
		n++
	}
	u.hashes = u.hashes[:n]
	if k := 1 << u.lgK; len(u.hashes) > k {
		u.theta = u.hashes[k]
		u.hashes = u.hashes[:k]
	}
}

// Result returns the union's compact sketch.
func (u *Union) Result() *Compact {
	if u.empty {
		return &Compact{Theta: maxTheta, Empty: true, SeedHash: u.seedHash}
	}
	u.compact()
	return &Compact{Theta: u.theta, Entries: slices.Clone(u.hashes), SeedHash: u.seedHash}
}
