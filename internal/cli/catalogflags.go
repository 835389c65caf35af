package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogs"
	"github.com/icectl/icectl/catalog/caturi"
	"github.com/icectl/icectl/catalog/filecat"
	"github.com/icectl/icectl/catalog/rest"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/internal/cli/config"
)

const catalogFlagsHelp = `Catalog selection (flags win over environment, which wins over files):
  --catalog-uri URI   sqlite:////abs/path.db, sqlite:///relative/path.db,
                      file:/abs/path.db, path.db, postgresql://user@host/db,
                      http(s)://... (REST), file:///warehouse (file catalog);
                      the same grammar in every source: icectl help catalogs
  --catalog NAME      a catalog of ~/.icectl.yaml ($ICECTL_CONFIG) or of
                      PyIceberg's .pyiceberg.yaml ($PYICEBERG_HOME, ~, .);
                      default: default-catalog, else "default"
  Environment: PYICEBERG_CATALOG__<NAME>__<KEY> and ICECTL_CATALOG__<NAME>__<KEY>
  ("__" separates levels and becomes "." inside a key, "_" becomes "-").
  --catalog-uri alone names a complete catalog: configured properties
  (credentials included) are not merged into it.
  A table may also be given as a metadata file (path or s3:// URI ending in
  .metadata.json): that version opens read-only, without a catalog.`

// addCatalogFlags adds the flags choosing a catalog.
func addCatalogFlags(cmd *cobra.Command, o *config.Flags) {
	fs := cmd.Flags()
	fs.StringVar(&o.URI, "catalog-uri", "", "catalog URI (sqlite:////abs.db, sqlite:///rel.db, postgresql://, http(s)://, file:///warehouse; see icectl help catalogs)")
	fs.StringVar(&o.Catalog, "catalog", "", "name of a configured catalog")
	fs.StringVar(&o.CatalogName, "catalog-name", "", `catalog name (catalog_name of SQL catalogs; default the --catalog name, else "default")`)
	fs.StringVar(&o.Warehouse, "warehouse", "", "warehouse location (for new tables; alone, a file catalog)")
	fs.Var((*timeoutFlag)(&o.Timeout), "catalog-timeout", "bound on each request to a REST catalog, e.g. 30s or 2m (the property rest.client.socket-timeout-ms)")
}

// timeoutFlag is a duration flag in parseDuration's grammar (7d, 90s).
type timeoutFlag time.Duration

func (t *timeoutFlag) String() string {
	if *t == 0 {
		return ""
	}
	return formatDuration(time.Duration(*t))
}

func (t *timeoutFlag) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("want a duration like 30s or 2m")
	}
	*t = timeoutFlag(d)
	return nil
}

func (t *timeoutFlag) Type() string { return "duration" }

// openedCatalog is a catalog opened for a command, with the resolved
// configuration it came from (for redacting output).
type openedCatalog struct {
	cfg *config.Catalog
	cat catalog.Catalog
}

func (o *openedCatalog) Close() error { return o.cat.Close() }

// resolveCatalog works out which catalog the flags and the surroundings of
// f select. Environment variable names come from f.Environ (the process
// environment); their values are read through f.Getenv, so tests control
// them. A
// malformed catalog URI is a usage error.
func resolveCatalog(f *Factory, flags config.Flags) (*config.Catalog, error) {
	environ := os.Environ
	if f.Environ != nil {
		environ = f.Environ
	}
	var vars []string
	for _, kv := range environ() {
		k, _, _ := strings.Cut(kv, "=")
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "pyiceberg_") || strings.HasPrefix(lk, "icectl_") {
			vars = append(vars, k+"="+f.Getenv(k))
		}
	}
	cwd, _ := os.Getwd()
	src, err := config.LoadSources(config.Lookup{Getenv: f.Getenv, Environ: vars, Cwd: cwd})
	if err != nil {
		return nil, err
	}
	cfg, err := config.Resolve(flags, src)
	var bad *caturi.Error
	if errors.As(err, &bad) {
		return nil, &ExitError{Code: ExitUsage, Err: err}
	}
	return cfg, err
}

// openCatalog resolves and opens the existing catalog for a command,
// changing nothing in it: a SQLite database or a warehouse directory that
// does not exist is an error, never a new, empty catalog.
func openCatalog(ctx context.Context, f *Factory, flags config.Flags) (*openedCatalog, error) {
	return openOrCreateCatalog(ctx, f, flags, false)
}

func openOrCreateCatalog(ctx context.Context, f *Factory, flags config.Flags, create bool) (*openedCatalog, error) {
	cfg, err := resolveCatalog(f, flags)
	if err != nil {
		return nil, err
	}
	cc := cfg.Config()
	if flags.Timeout > 0 {
		cc.Props[rest.PropSocketTimeoutMS] = strconv.FormatInt(flags.Timeout.Milliseconds(), 10)
	}
	// Storage credentials the configuration leaves unset come from the
	// standard AWS variables, as for `icectl inspect`; a profile the
	// configuration names takes the place of the AWS_* keys.
	var s3 S3Options
	if p := cmp.Or(cc.Props[fileio.S3ProfileName], cc.Props[fileio.ClientProfileName]); p != "" {
		s3.Profile = p
	}
	env := fileIOProps(s3, f.Getenv)
	if cc.Props[fileio.S3AccessKeyID] != "" || cc.Props[fileio.ClientAccessKeyID] != "" {
		// Keys are taken whole from one place: AWS_SESSION_TOKEN (from
		// an AWS session, say, that signs a Glue catalog) must not join
		// the configuration's keys of another store.
		delete(env, fileio.S3AccessKeyID)
		delete(env, fileio.S3SecretAccessKey)
		delete(env, fileio.S3SessionToken)
	}
	for k, v := range env {
		if _, ok := cc.Props[k]; !ok {
			cc.Props[k] = v
		}
	}
	open := catalogs.Open
	if create {
		open = catalogs.Create
	}
	cat, err := open(ctx, cc)
	if err != nil {
		var bad *caturi.Error
		if errors.As(err, &bad) {
			return nil, &ExitError{Code: ExitUsage, Err: scrub(cfg, err)}
		}
		return nil, scrub(cfg, fmt.Errorf("open catalog %s: %w", cfg.Redacted().URI, err))
	}
	return &openedCatalog{cfg: cfg, cat: cat}, nil
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// parseTableArg parses a table name argument; a bad one is a usage error.
func parseTableArg(s string) (catalog.Ident, error) {
	id, err := catalog.ParseIdent(s)
	if err != nil {
		return id, usageErrorf("%v", err)
	}
	return id, nil
}

// isMetadataFile reports whether a table argument names a metadata file
// (local path or URI) rather than a table of a catalog.
func isMetadataFile(arg string) bool {
	return strings.HasSuffix(arg, ".metadata.json") || strings.HasSuffix(arg, ".metadata.json.gz")
}

// refuseMetadataFile is the error of a command that would change the table
// arg names when arg is a metadata file, which icectl opens read-only;
// doing says what naming the table in its catalog lets the command do
// ("compact it"), dryRun whether the command has a dry run that works on
// such a file.
func refuseMetadataFile(arg, doing string, dryRun bool) error {
	only := " for inspection"
	if dryRun {
		only = ": only --dry-run works on it"
	}
	return fmt.Errorf("%s is a metadata file, which icectl opens read-only%s; name the table in its catalog to %s: %w", arg, only, doing, catalog.ErrReadOnly)
}

// loadTable opens the catalog and loads the table named by arg. An arg
// that is a metadata file opens that table version read-only, without a
// catalog, for inspection: every commit through it is refused. The caller
// closes the returned catalog.
func loadTable(ctx context.Context, f *Factory, flags config.Flags, arg string) (*openedCatalog, *catalog.Table, error) {
	if isMetadataFile(arg) {
		t, err := filecat.OpenMetadataFile(ctx, arg, fileIOProps(S3Options{}, f.Getenv))
		if err != nil {
			return nil, nil, err
		}
		t.Ident = catalog.Ident{Name: arg}
		return &openedCatalog{cat: filecat.Static{Table: t}}, t, nil
	}
	id, err := parseTableArg(arg)
	if err != nil {
		return nil, nil, err
	}
	oc, err := openCatalog(ctx, f, flags)
	if err != nil {
		return nil, nil, err
	}
	t, err := oc.cat.LoadTable(ctx, id)
	if err != nil {
		oc.Close()
		return nil, nil, loadTableError(oc.cfg, err)
	}
	return oc, t, nil
}

// loadTableError is the error of a failed LoadTable, scrubbed, with the
// flag to add when the database holds the table under one other catalog
// name.
func loadTableError(cfg *config.Catalog, err error) error {
	var other *catalog.OtherCatalogsError
	if errors.As(err, &other) && len(other.Others) == 1 {
		err = fmt.Errorf("%w: add --catalog-name %s", err, other.Others[0])
	}
	return scrub(cfg, err)
}

// redactProps hides secret-looking table properties in output.
func redactProps(props map[string]string) map[string]string {
	out := make(map[string]string, len(props))
	for k, v := range props {
		if caturi.IsSecret(k) {
			v = caturi.Redacted
		}
		out[k] = v
	}
	return out
}
