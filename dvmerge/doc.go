// Package dvmerge settles the delete debt of a format v3 table: for every
// live data file with position-delete files (file- or partition-scoped),
// more than one deletion vector or, with Equality, equality deletes, it
// writes one deletion vector holding the union of the deleted positions,
// packs the vectors into Puffin files per partition, and commits them
// while removing the old vectors and every delete file they now fully
// replace (and dangling deletes). It is `icectl dv merge`.
//
// A run holds one partition's files at a time: the live files are
// spilled to a temporary file sorted by partition and read back a
// partition at a time to plan, to merge and to write a plan out (see
// spilled), so its memory follows the largest partition, not the table.
// Only a concurrent commit by another writer makes it load the table's
// files whole, to validate a batch on it.
//
// It must never change the rows readers see, except where asked to
// (RepairResurrected folds into a DV the positions an older delete file
// deleted but the DV lost, and the report lists each such row). So a
// position-delete file is removed only when every live data file it
// names positions of has a DV holding them all; one whose positions a DV
// lacks stays as the evidence of the loss. It never deletes table files
// other than the Puffin files it wrote and did not commit, and never
// commits a DV without the deletes a concurrent commit added for the same
// data file: the commit's validation rebuilds the partition on the fresh
// table instead.
//
// A run may also be sharded (shard.go, commitstaged.go): workers merge
// the partitions a saved plan assigns them and stage the results, one
// committer commits them through the same executor, validated the same
// way.
package dvmerge
