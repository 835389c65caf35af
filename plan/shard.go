package plan

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/icectl/icectl/internal/shared/shard"
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

// Assign splits the groups into n shards by input bytes (shard.Assign):
// every worker of a run computes the same assignment from the same plan
// without talking to the others. out[i] is the shard of groups[i].
func Assign(groups []Group, n int) []int {
	sizes := make([]int64, len(groups))
	for i := range groups {
		sizes[i] = groups[i].InputBytes
	}
	return shard.Assign(sizes, n)
}
