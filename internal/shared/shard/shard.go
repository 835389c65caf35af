// Package shard is what the sharded runs of the verbs share: a worker's
// share (index of count), the deterministic split of a plan's units of
// work by bytes, and the reading of --shard. It must never do IO: the
// split is a pure function, so every worker computes the same one.
package shard

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Shard is a worker's share of a sharded run: shard Index of Count.
type Shard struct {
	Index, Count int
}

// Env are the environment variables a worker's index is read from when
// --shard names only the count, in this order: Kubernetes Indexed Jobs,
// AWS Batch array jobs.
var Env = []string{"JOB_COMPLETION_INDEX", "AWS_BATCH_JOB_ARRAY_INDEX"}

// Assign splits units of the given sizes into n shards so that each
// shard's bytes are as even as a greedy split allows: units in decreasing
// size (ties in order) each go to the shard with the fewest bytes so far
// (ties to the lowest shard). It is a pure function of the sizes and
// their order. out[i] is the shard of sizes[i], in 0..n-1.
func Assign(sizes []int64, n int) []int {
	out := make([]int, len(sizes))
	if n <= 1 {
		return out
	}
	order := make([]int, len(sizes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(sizes[b], sizes[a]) })
	load := make([]int64, n)
	for _, i := range order {
		best := 0
		for s := 1; s < n; s++ {
			if load[s] < load[best] {
				best = s
			}
		}
		out[i] = best
		load[best] += sizes[i]
	}
	return out
}

// Parse reads a --shard value: "I/N", or "N" with I from the first of Env
// that getenv has. Its errors are usage errors: the caller says so.
func Parse(s string, getenv func(string) string) (Shard, error) {
	var sh Shard
	idx, count, hasIdx := strings.Cut(strings.TrimSpace(s), "/")
	if !hasIdx {
		idx, count = "", idx
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 {
		return sh, fmt.Errorf("invalid --shard %q: want I/N (0 <= I < N) or N with the index in $%s", s, strings.Join(Env, " or $"))
	}
	from := "--shard"
	if !hasIdx {
		for _, name := range Env {
			if v := getenv(name); v != "" {
				idx, from = v, "$"+name
				break
			}
		}
		if idx == "" {
			return sh, fmt.Errorf("--shard %d names only the count: give --shard I/%d or set $%s", n, n, strings.Join(Env, " or $"))
		}
	}
	i, err := strconv.Atoi(strings.TrimSpace(idx))
	if err != nil || i < 0 || i >= n {
		return sh, fmt.Errorf("shard index %q (from %s) is out of range: want 0 to %d for %d shards", idx, from, n-1, n)
	}
	return Shard{Index: i, Count: n}, nil
}
