// Package commits holds end-to-end tests of icectl's commit safety: many
// icectl processes committing to one table at once, commits whose outcome
// the catalog leaves unknown, and bad input that must change nothing.
//
// The tests run the real icectl binary (built once in TestMain) against
// real catalogs: SQLite, PostgreSQL and a REST catalog server with its S3.
// It has no product code and must never be imported.
package commits
