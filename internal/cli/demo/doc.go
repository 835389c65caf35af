// Package demo builds the demo table of `icectl demo`: a realistic,
// maintenance-worthy Iceberg table (hundreds of small files, every kind of
// v2 delete, dozens of snapshots, a tag, a branch and the debris of a failed
// job) in a local SQLite catalog, deterministically from a seed.
//
// The row content depends only on the seed, so the reported row count and
// checksum are reproducible; snapshot ids and file names of the commits
// are random, as they are in any Iceberg writer.
//
// It must never write outside the directory it is given, and never
// overwrite a non-empty directory unless told to.
package demo
