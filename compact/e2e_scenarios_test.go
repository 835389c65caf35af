package compact_test

import (
	"testing"
)

// scenario builds one of the tables compaction must leave unchanged.
type scenario struct {
	name string
	// lineage says the table is v3 after the build, so every surviving
	// row must keep _row_id and _last_updated_sequence_number.
	lineage bool
	// lineageBefore is false when the rows have no lineage before the
	// compaction (it is the table's first v3 commit).
	lineageBefore bool
	build         func(tb testing.TB, seed uint64) *fixture
}

func scenarios() []scenario {
	return []scenario{
		{name: "v2-position-and-equality-deletes", build: buildV2Deletes},
		{name: "v3-dvs", lineage: true, lineageBefore: true, build: buildV3DVs},
		{name: "v2-upgraded-to-v3", lineage: true, lineageBefore: true, build: buildUpgraded},
		{name: "v2-upgraded-compaction-first-v3-commit", lineage: true, build: buildUpgradedNoCommit},
		{name: "two-partition-specs", build: buildTwoSpecs},
	}
}

// smallFiles are the properties that make every fixture file "too small",
// so the default planner picks them all.
var smallFiles = map[string]string{"write.target-file-size-bytes": "1048576"}

// v2History commits appends with every kind of v2 delete between them:
// partition-scoped position deletes covering several data files, file-scoped
// position deletes and equality deletes, then an append the equality deletes
// must not reach.
func v2History(f *fixture) { v2HistoryWith(f, true) }

// v2HistoryWith is v2History, without the equality deletes unless
// equality.
func v2HistoryWith(f *fixture, equality bool) {
	parts := f.partitions(3)
	f.must(f.appendFiles(parts, 6, 40))
	f.must(f.appendFiles(parts, 6, 40))
	f.must(f.deleteIDs(delPartitionPos, f.pickLive(18)))
	f.must(f.deleteIDs(delFilePos, f.pickLive(4)))
	f.must(f.appendFiles(parts, 6, 30))
	if equality {
		f.must(f.deleteIDs(delEquality, f.pickLive(9)))
	}
	f.must(f.appendFiles(parts, 3, 25))
	f.must(f.deleteIDs(delPartitionPos, f.pickLive(10)))
}

func buildV2Deletes(tb testing.TB, seed uint64) *fixture {
	f := newFixture(tb, 2, seed, smallFiles)
	v2History(f)
	return f
}

func buildV3DVs(tb testing.TB, seed uint64) *fixture { return buildV3With(tb, seed, true) }

// buildV3With is buildV3DVs, without the equality deletes unless
// equality.
func buildV3With(tb testing.TB, seed uint64, equality bool) *fixture {
	f := newFixture(tb, 3, seed, smallFiles)
	parts := f.partitions(3)
	f.must(f.appendFiles(parts, 6, 40))
	f.must(f.appendFiles(parts, 6, 40))
	f.must(f.deleteIDs(delDV, f.pickLive(15)))
	// Some of these land in files that already have a DV: merged.
	f.must(f.deleteIDs(delDV, f.pickLive(15)))
	if equality {
		f.must(f.deleteIDs(delEquality, f.pickLive(6)))
	}
	f.must(f.appendFiles(parts, 3, 30))
	f.must(f.deleteIDs(delDV, f.pickLive(5)))
	return f
}

// buildUpgraded is a v2 table with position and equality deletes, upgraded
// to v3, then appended to and given DVs (which fold in the v2 position
// deletes of the files they touch).
func buildUpgraded(tb testing.TB, seed uint64) *fixture {
	f := newFixture(tb, 2, seed, smallFiles)
	v2History(f)
	f.upgradeToV3()
	f.must(f.appendFiles(f.partitions(3), 3, 30))
	f.must(f.deleteIDs(delDV, f.pickLive(12)))
	return f
}

// buildUpgradedNoCommit is upgraded to v3 with nothing committed since:
// compaction is the first v3 commit, and the pre-upgrade rows have no
// lineage yet.
func buildUpgradedNoCommit(tb testing.TB, seed uint64) *fixture {
	f := newFixture(tb, 2, seed, smallFiles)
	v2History(f)
	f.upgradeToV3()
	return f
}

// buildTwoSpecs has files and deletes under spec 0 (cat) and spec 1 (cat,
// day(ts)).
func buildTwoSpecs(tb testing.TB, seed uint64) *fixture {
	f := newFixture(tb, 2, seed, smallFiles)
	f.must(f.appendFiles(f.partitions(3), 6, 40))
	f.must(f.deleteIDs(delPartitionPos, f.pickLive(10)))
	f.addDaySpec()
	parts := f.partitions(6)
	f.must(f.appendFiles(parts, 12, 30))
	f.must(f.deleteIDs(delPartitionPos, f.pickLive(12)))
	f.must(f.deleteIDs(delEquality, f.pickLive(6)))
	f.must(f.appendFiles(parts, 6, 20))
	return f
}
