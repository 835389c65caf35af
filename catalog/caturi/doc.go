// Package caturi is the one grammar of catalog URIs and the one way to print
// a URI that may hold a secret.
//
// Every place a catalog URI comes from (the --catalog-uri flag, the
// ICECTL_CATALOG__… and PYICEBERG_CATALOG__… variables, ~/.icectl.yaml,
// .pyiceberg.yaml) goes through Parse, so a URI means the same thing
// wherever it is written. The grammar is SQLAlchemy's, which PyIceberg
// users already have, plus the forms iceberg-go and SQLite accept:
//
//	sqlite:////abs/path.db        SQLite, absolute path (four slashes)
//	sqlite:///rel/path.db         SQLite, path relative to the working directory
//	file:/abs/path.db             SQLite, iceberg-go's DSN (file:///abs/path.db too)
//	file:rel/path.db              SQLite, relative DSN
//	path.db, /abs/path.db         SQLite, a bare path ending in .db, .sqlite or .sqlite3
//	postgresql://user@host/db     PostgreSQL (also postgres:// and
//	                              postgresql+psycopg2:// or any +driver)
//	http(s)://host[:port][/path]  REST catalog
//	file:///warehouse             file catalog (Hadoop layout); a file: URI
//	                              whose path ends in .db is a SQLite database
//	thrift://host[:port]          Hive Metastore (port 9083 by default; several
//	                              comma-separated are tried in order)
//
// Percent escapes are decoded in paths. SQLite URIs take no query
// parameters: icectl chooses how it opens the database.
//
// Redact hides secrets in a URI's text without parsing it, so that a URI
// Go cannot parse still loses its password. The package does no IO except
// resolving a relative path against the working directory.
package caturi
