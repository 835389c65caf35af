package plan

// packLookback1 is Java's BinPacking.ListPacker with lookback 1 and
// largestBinFirst false: items are taken in order into one open bin; an
// item that does not fit (by weight or count) closes the bin and opens a
// new one. An item heavier than maxWeight gets a bin of its own.
func packLookback1[T any](items []T, weight func(T) int64, maxWeight, maxItems int64) [][]T {
	var bins [][]T
	var cur []T
	var curWeight int64
	for _, it := range items {
		w := weight(it)
		if len(cur) > 0 && (curWeight+w > maxWeight || curWeight+w < curWeight || int64(len(cur)) >= maxItems) {
			bins = append(bins, cur)
			cur, curWeight = nil, 0
		}
		cur = append(cur, it)
		curWeight += w
	}
	if len(cur) > 0 {
		bins = append(bins, cur)
	}
	return bins
}
