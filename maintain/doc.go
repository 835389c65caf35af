// Package maintain keeps a whole catalog healthy in one run: icectl
// maintain. It reads each table's state (the debt health measures, under
// the table's policy), plans the fleet (NewPlan: pure, deterministic; a
// table a writer streams to is due by the streaming policy, DecideStream),
// and runs the due verbs table by table (Run): dv merge (v3, equality
// deletes too), rewrite-equality-deletes (v2), compact,
// rewrite-position-deletes (v2), rewrite-manifests, expire and, when the
// policy enables it, orphan removal, within a time and a byte budget, each
// table under its claim.
//
// It is the one package that drives the verbs: it imports compact,
// dvmerge, expire, orphan, rewritemanifests, rewriteposdeletes and health,
// and none of them imports it. It must never grow a second copy of their planning or
// commit machinery (what it needs from them moves down into them), never
// upgrade a table's format (an operator's decision), and never change what
// readers see (resurrected rows are reported, not repaired).
package maintain
