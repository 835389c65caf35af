// Package table reads the files of a table's snapshots (manifest lists,
// manifests, with inheritance applied), decides which delete files apply to
// which data files, and produces new snapshots that add and remove files,
// committed through package commit.
//
// Everything a maintenance command changes goes through CommitChange, so
// this package must never drop a live file it was not asked to remove,
// never carry a removed one into a new snapshot, and never commit a change
// whose premises (the files it removes) no longer hold.
package table
