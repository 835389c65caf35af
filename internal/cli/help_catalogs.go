package cli

import "github.com/spf13/cobra"

// catalogsHelp is the one place the catalog URI grammar is documented for
// users (`icectl help catalogs`); package caturi implements it.
const catalogsHelp = `A catalog URI means the same wherever it is written: the --catalog-uri
flag, ICECTL_CATALOG__<NAME>__URI, PYICEBERG_CATALOG__<NAME>__URI,
~/.icectl.yaml and .pyiceberg.yaml. The grammar is SQLAlchemy's, as
PyIceberg users write it, plus iceberg-go's file: DSN and bare paths:

  sqlite:////var/lake/catalog.db      SQLite, absolute path (four slashes)
  sqlite:///lake/catalog.db           SQLite, relative to the working directory
  file:/var/lake/catalog.db           SQLite, iceberg-go's DSN (file:///... too;
  file:lake/catalog.db                  relative without a slash)
  /var/lake/catalog.db, lake/c.db     SQLite, a path ending in .db, .sqlite, .sqlite3
  postgresql://ice:PW@db:5432/iceberg PostgreSQL; also postgres:// and
  postgresql+psycopg2://...             SQLAlchemy's +driver forms
  https://rest.example.com/api        REST catalog (http:// too)
  file:///var/lake/wh                 file catalog (Hadoop layout); a file: path
                                        ending in .db is a SQLite database
  thrift://metastore:9083             Hive Metastore (port 9083 by default;
                                        several comma-separated are tried in order)

Percent escapes are decoded (sqlite:////data/my%20lake/c.db). A SQLite URI
takes no query parameters: icectl opens the database read-write without
creating it and never changes its journal mode. Anything else (sqlite:,
sqlite://host/x.db, an unknown scheme, a bad percent escape) is a usage
error (exit 2).

No command creates a catalog except "icectl catalog init" and "icectl
demo": a SQLite database or a warehouse that does not exist is an error
naming the absolute path it resolved, and reading a catalog changes no
byte of it.

Passwords and secret parameters (password=, token=, ...) are replaced by
**** wherever a URI is printed, also when the URI does not parse.

Examples:
  icectl table list --catalog-uri sqlite:////var/lake/catalog.db
  PYICEBERG_CATALOG__DEFAULT__URI=sqlite:///catalog.db icectl table list
  icectl health shop.orders --catalog-uri postgresql://ice@db/iceberg --catalog-name prod
  icectl catalog init --catalog-uri sqlite:////var/lake/catalog.db --warehouse file:///var/lake/wh`

// newHelpTopicCatalogs returns the `icectl help catalogs` topic: a command
// without a run function, which cobra lists under "Additional help topics".
func newHelpTopicCatalogs() *cobra.Command {
	return &cobra.Command{
		Use:   "catalogs",
		Short: "Catalog URIs: the forms every source accepts, with examples",
		Long:  catalogsHelp,
	}
}
