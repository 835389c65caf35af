// Package claim keeps two icectl processes from maintaining one table at the
// same time: a lease taken through the catalog itself, so it works on every
// catalog icectl commits to (SQL, REST, file) and between hosts.
//
// A claim is three things committed together in one metadata commit:
//
//   - the tag RefName ("icectl-claim"), whose absence a taker asserts
//     (assert-ref-snapshot-id with a null id): only one of many concurrent
//     takers can create it, because every catalog checks requirements
//     against its current metadata and swaps atomically;
//   - a second tag, RefName + "-" + a random token, naming this one claim:
//     renewal, release and takeover assert it, so a stale view of an old
//     claim can never release or take over a newer one that happens to
//     point at the same snapshot;
//   - the property Property ("icectl.claim"), a JSON object saying who holds
//     it (owner, verb, since, until, last renewed, and its Process) for
//     people, error messages and HolderGone.
//
// Table properties cannot be asserted by an iceberg commit (REST has no such
// requirement), so a property alone would be last-writer-wins; refs can.
// Both tags point at main's head and carry max-ref-age-ms set so that the
// ref's age limit (measured, as Java's expire_snapshots does, from its
// snapshot's timestamp) ends exactly when the lease does: the claim's expiry
// is the tag's, and any engine's snapshot expiry drops a stale claim.
//
// A claim that outlived its lease is taken over by the next taker in one
// commit that asserts the old claim's token tag. So is, at once, a claim
// whose holder ran on the taker's host and no longer runs (HolderGone:
// its pid gone or reused, or the host rebooted since), as restic does with
// its locks: a process killed while it holds a claim blocks a run on its
// own host not at all, and one on another host until the lease ends,
// never longer. Expiry is judged by the taker's clock against the
// holder's: hosts need clocks closer than the lease (minutes, not
// seconds).
//
// A table without snapshots cannot carry a tag; nothing is claimed there
// (Claim.Held is false), since nothing can be compacted, merged, rewritten
// or expired on it, and orphan removal checks each file against the table
// again before it deletes it.
//
// The package changes only the claim's refs and property, never a snapshot,
// schema or other property, and never deletes a file.
package claim
