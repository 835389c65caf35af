// Package commit runs the optimistic commit loop every table change goes
// through: build the change against the current table, send it to the
// catalog, and on a conflict reload, rebuild and retry with backoff.
//
// It must never delete a file that committed metadata may reference: files
// are removed only after a definite failure (a conflict, or a build that
// gave up), and never after a commit whose outcome is unknown.
package commit
