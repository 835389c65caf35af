package plan

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// ID identifies a plan: a hash of the table (uuid, name, metadata file),
// branch, base snapshot, options, groups (whose ids already hash their
// spec, partition and inputs) and the time it was made. Sharded runs
// record it with every staged result, in the names of the files they
// write and in the summary of every snapshot they commit, so it must tell
// apart two plans that would otherwise be equal: the same table registered
// twice (one location, one uuid) planned twice must never share output
// names, or one committer could take the other's files for its strays.
func (p *Plan) ID() string {
	h := sha256.New()
	put := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	put(p.Format)
	put(p.CreatedAt.UTC().Format(time.RFC3339Nano))
	put(p.TableRef.UUID)
	put(p.TableRef.Name)
	put(p.TableRef.MetadataLocation)
	put(p.Branch)
	if p.Base != nil {
		put(fmt.Sprintf("%d/%d", p.Base.SnapshotID, p.Base.SequenceNumber))
	}
	opts, _ := json.Marshal(p.Options) // a plain struct: cannot fail
	put(string(opts))
	put(fmt.Sprint(p.Sort))
	for _, g := range p.Groups {
		put(g.ID)
	}
	sum := h.Sum(nil)
	return hex.EncodeToString(sum[:8])
}

// Assign splits the groups into n shards so that each shard's input bytes
// are as even as a greedy split allows: groups in decreasing input bytes
// (ties in plan order) each go to the shard with the fewest bytes so far
// (ties to the lowest shard). It is a pure function of the groups' sizes
// and order, so every worker of a run computes the same assignment from
// the same plan without talking to the others. out[i] is the shard of
// groups[i], in 0..n-1.
func Assign(groups []Group, n int) []int {
	out := make([]int, len(groups))
	if n <= 1 {
		return out
	}
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(groups[b].InputBytes, groups[a].InputBytes) })
	load := make([]int64, n)
	for _, i := range order {
		best := 0
		for s := 1; s < n; s++ {
			if load[s] < load[best] {
				best = s
			}
		}
		out[i] = best
		load[best] += groups[i].InputBytes
	}
	return out
}
