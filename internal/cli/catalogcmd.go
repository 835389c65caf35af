package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog/caturi"
	"github.com/icectl/icectl/internal/cli/config"
)

// NewCmdCatalog returns `icectl catalog`, the commands on a catalog itself.
func NewCmdCatalog(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "catalog <command>",
		Short: "Create a catalog",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(NewCmdCatalogInit(f, nil))
	return cmd
}

// CatalogInitOptions are the inputs of `icectl catalog init`.
type CatalogInitOptions struct {
	f       *Factory
	Catalog config.Flags
}

// NewCmdCatalogInit returns `icectl catalog init`. runF replaces the run
// function in tests; nil runs the command.
func NewCmdCatalogInit(f *Factory, runF func(*CatalogInitOptions) error) *cobra.Command {
	opts := &CatalogInitOptions{f: f}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create an empty catalog (SQLite database, SQL tables or file warehouse)",
		Long: `Create an empty catalog where the catalog flags point: a SQLite database
file (its directory must exist) with the catalog tables of the Java JDBC
catalog, the same tables in a PostgreSQL database, or the warehouse
directory of a file catalog. A catalog that exists already is left as it
is. A REST catalog is created on its server, not here.

No other command creates a catalog: they fail on a missing one instead.

` + catalogFlagsHelp,
		Example: `  icectl catalog init --catalog-uri sqlite:////var/lake/catalog.db --warehouse file:///var/lake/wh
  icectl catalog init --catalog-uri postgresql://ice@db:5432/iceberg
  icectl catalog init --catalog-uri file:///var/lake/wh`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runCatalogInit(cmd.Context(), opts)
		},
	}
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

type catalogInitView struct {
	Catalog catalogView `json:"catalog"`
	Created bool        `json:"created"`
}

func runCatalogInit(ctx context.Context, opts *CatalogInitOptions) error {
	cfg, err := resolveCatalog(opts.f, opts.Catalog)
	if err != nil {
		return err
	}
	if cfg.Kind == caturi.REST {
		return fmt.Errorf("catalog %s is a REST catalog: it is created on its server, not by icectl", cfg.Redacted().URI)
	}
	v := catalogInitView{Catalog: newCatalogView(cfg)}
	if oc, err := openCatalog(ctx, opts.f, opts.Catalog); err == nil {
		oc.Close()
	} else {
		oc, err := openOrCreateCatalog(ctx, opts.f, opts.Catalog, true)
		if err != nil {
			return err
		}
		oc.Close()
		v.Created = true
	}
	if opts.f.Output == outputJSON {
		return writeJSON(opts.f.Out, v)
	}
	what := "exists already; nothing changed"
	if v.Created {
		what = "created"
	}
	_, err = printf(opts.f.Out, "catalog %q at %s: %s\n", v.Catalog.Name, v.Catalog.URI, what)
	return err
}
