package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/internal/cli/config"
)

// NewCmdTable returns `icectl table`, the commands that list and describe
// the tables of a catalog.
func NewCmdTable(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "table <command>",
		Short: "List and describe the tables of a catalog",
		Long:  "List and describe the tables of a catalog.\n\n" + catalogFlagsHelp,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(NewCmdTableList(f, nil), NewCmdTableShow(f, nil))
	return cmd
}

// TableListOptions are the inputs of `icectl table list`.
type TableListOptions struct {
	f         *Factory
	Catalog   config.Flags
	Namespace string // "" = every namespace
}

// NewCmdTableList returns `icectl table list`. runF replaces the run
// function in tests; nil runs the command.
func NewCmdTableList(f *Factory, runF func(*TableListOptions) error) *cobra.Command {
	opts := &TableListOptions{f: f}
	cmd := &cobra.Command{
		Use:   "list [NAMESPACE]",
		Short: "List the tables of a namespace, or of every namespace",
		Long:  "List the tables of a namespace (dotted: a.b), or of every namespace.\n\n" + catalogFlagsHelp,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Namespace = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return runTableList(cmd.Context(), opts)
		},
	}
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

type tableListView struct {
	Catalog   catalogView `json:"catalog"`
	Namespace *string     `json:"namespace"`
	Tables    []string    `json:"tables"`
}

// catalogView is the redacted description of a catalog in JSON output.
type catalogView struct {
	Name string `json:"name"`
	URI  string `json:"uri"`
}

func newCatalogView(c *config.Catalog) catalogView {
	r := c.Redacted()
	return catalogView{Name: r.Name, URI: r.URI}
}

func runTableList(ctx context.Context, opts *TableListOptions) error {
	var ns []string
	if opts.Namespace != "" {
		ns = strings.Split(opts.Namespace, ".")
		if err := catalog.ValidateNamespace(ns); err != nil {
			return usageErrorf("namespace %q: %v", opts.Namespace, err)
		}
	}
	oc, err := openCatalog(ctx, opts.f, opts.Catalog)
	if err != nil {
		return err
	}
	defer oc.Close()
	ids, err := listTables(ctx, oc.cat, ns)
	if err != nil {
		if errors.Is(err, catalog.ErrNoSuchNamespace) {
			err = fmt.Errorf("%w%s", err, otherCatalogsHint(ctx, oc.cat))
		}
		return scrub(oc.cfg, err)
	}
	v := tableListView{Catalog: newCatalogView(oc.cfg), Tables: []string{}}
	if opts.Namespace != "" {
		v.Namespace = &opts.Namespace
	}
	for _, id := range ids {
		v.Tables = append(v.Tables, id.String())
	}
	slices.Sort(v.Tables)
	if opts.f.Output == outputJSON {
		return writeJSON(opts.f.Out, v)
	}
	if len(v.Tables) == 0 {
		// A note, not a result: stdout stays empty for $(icectl table list).
		where := "the catalog"
		if name := oc.cat.Name(); name != "" {
			where = fmt.Sprintf("catalog %q", name)
		}
		if opts.Namespace != "" {
			where = "namespace " + opts.Namespace
		}
		_, err := printf(opts.f.ErrOut, "no tables in %s%s\n", where, otherCatalogsHint(ctx, oc.cat))
		return err
	}
	for _, t := range v.Tables {
		if _, err := fmt.Fprintln(opts.f.Out, escapeText(t)); err != nil {
			return err
		}
	}
	return nil
}

// otherCatalogsHint is "; this database holds catalog "x": add
// --catalog-name x" when cat's database holds tables under other catalog
// names only (as a missing table's error says), else "".
func otherCatalogsHint(ctx context.Context, cat catalog.Catalog) string {
	l, ok := cat.(catalog.OtherCatalogsLister)
	if !ok {
		return ""
	}
	others := l.OtherCatalogs(ctx)
	switch len(others) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("; this database holds catalog %q: add --catalog-name %s", others[0], others[0])
	}
	quoted := make([]string, len(others))
	for i, n := range others {
		quoted[i] = strconv.Quote(n)
	}
	return fmt.Sprintf("; this database holds catalogs %s: add --catalog-name with one of them", strings.Join(quoted, ", "))
}

// listTables lists the tables of ns, or, when ns is empty, of every
// namespace, walking nested namespaces.
func listTables(ctx context.Context, cat catalog.Catalog, ns []string) ([]catalog.Ident, error) {
	if len(ns) > 0 {
		ids, err := cat.ListTables(ctx, ns)
		if err != nil {
			return nil, fmt.Errorf("list tables of %s: %w", strings.Join(ns, "."), err)
		}
		return ids, nil
	}
	var out []catalog.Ident
	var walk func(parent []string) error
	walk = func(parent []string) error {
		children, err := cat.ListNamespaces(ctx, parent)
		if err != nil {
			return fmt.Errorf("list namespaces: %w", err)
		}
		for _, child := range children {
			// Some catalogs answer with the full path, others with the
			// last level only.
			if len(child) <= len(parent) || !slices.Equal(child[:len(parent)], parent) {
				child = append(slices.Clone(parent), child...)
			}
			ids, err := cat.ListTables(ctx, child)
			if err != nil {
				return fmt.Errorf("list tables of %s: %w", strings.Join(child, "."), err)
			}
			out = append(out, ids...)
			if len(child) < 16 { // a catalog that lists a namespace as its own child must not loop
				if err := walk(child); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return out, walk(nil)
}

// TableShowOptions are the inputs of `icectl table show`.
type TableShowOptions struct {
	f       *Factory
	Catalog config.Flags
	Table   string
}

// NewCmdTableShow returns `icectl table show`. runF replaces the run
// function in tests; nil runs the command.
func NewCmdTableShow(f *Factory, runF func(*TableShowOptions) error) *cobra.Command {
	opts := &TableShowOptions{f: f}
	cmd := &cobra.Command{
		Use:   "show TABLE",
		Short: "Describe a table: schema, partitioning, sort orders, refs, properties, current snapshot",
		Long:  "Describe a table (namespace.name): its current schema, partition specs, sort orders,\nrefs, properties and current snapshot with its summary.\n\n" + catalogFlagsHelp,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runTableShow(cmd.Context(), opts)
		},
	}
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

type tableShowView struct {
	Table              string             `json:"table"`
	MetadataLocation   string             `json:"metadata_location"`
	FormatVersion      int                `json:"format_version"`
	TableUUID          string             `json:"table_uuid"`
	Location           string             `json:"location"`
	LastUpdatedMS      int64              `json:"last_updated_ms"`
	LastUpdated        string             `json:"last_updated"`
	Schema             schemaView         `json:"schema"`
	DefaultSpecID      int                `json:"default_spec_id"`
	PartitionSpecs     []specView         `json:"partition_specs"`
	DefaultSortOrderID int                `json:"default_sort_order_id"`
	SortOrders         []sortOrderView    `json:"sort_orders"`
	Refs               map[string]refView `json:"refs"`
	Properties         map[string]string  `json:"properties"`
	CurrentSnapshot    *snapshotView      `json:"current_snapshot"`
	Snapshots          int                `json:"snapshots"`
}

func newTableShowView(t *catalog.Table) tableShowView {
	m := newMetadataView(t.MetadataLocation, t.Metadata)
	v := tableShowView{
		Table:              t.Ident.String(),
		MetadataLocation:   t.MetadataLocation,
		FormatVersion:      m.FormatVersion,
		TableUUID:          m.TableUUID,
		Location:           m.Location,
		LastUpdatedMS:      m.LastUpdatedMS,
		LastUpdated:        m.LastUpdated,
		Schema:             schemaView{SchemaID: m.CurrentSchemaID, IdentifierFieldIDs: []int{}, Fields: []fieldView{}},
		DefaultSpecID:      m.DefaultSpecID,
		PartitionSpecs:     m.PartitionSpecs,
		DefaultSortOrderID: m.DefaultSortOrderID,
		SortOrders:         m.SortOrders,
		Refs:               m.Refs,
		Properties:         redactProps(m.Properties),
		Snapshots:          len(m.Snapshots),
	}
	for _, s := range m.Schemas {
		if s.SchemaID == m.CurrentSchemaID {
			v.Schema = s
		}
	}
	for i, s := range m.Snapshots {
		if m.CurrentSnapshotID != nil && s.SnapshotID == *m.CurrentSnapshotID {
			v.CurrentSnapshot = &m.Snapshots[i]
		}
	}
	return v
}

func runTableShow(ctx context.Context, opts *TableShowOptions) error {
	oc, t, err := loadTable(ctx, opts.f, opts.Catalog, opts.Table)
	if err != nil {
		return err
	}
	defer oc.Close()
	v := newTableShowView(t)
	if opts.f.Output == outputJSON {
		return writeJSON(opts.f.Out, v)
	}
	return writeTableShowText(opts.f.Out, v)
}

func writeTableShowText(w io.Writer, v tableShowView) error {
	t := newTable(w)
	t.row("table", v.Table)
	t.row("metadata", v.MetadataLocation)
	t.row("format version", v.FormatVersion)
	t.row("table uuid", v.TableUUID)
	t.row("location", v.Location)
	t.row("last updated", millisText(v.LastUpdatedMS))
	t.row("snapshots", v.Snapshots)
	if err := t.flush(); err != nil {
		return err
	}

	ids := ""
	if len(v.Schema.IdentifierFieldIDs) > 0 {
		ids = fmt.Sprintf(", identifier fields %v", v.Schema.IdentifierFieldIDs)
	}
	printf(w, "\nschema %d%s\n", v.Schema.SchemaID, ids)
	t = newTable(w)
	t.row("  id", "name", "type", "required")
	for _, fld := range v.Schema.Fields {
		name := strings.Repeat("  ", fld.depth) + fld.Path[strings.LastIndex(fld.Path, ".")+1:]
		req := "optional"
		if fld.Required {
			req = "required"
		}
		t.row(fmt.Sprintf("  %d", fld.ID), name, fld.Type, req)
	}
	if err := t.flush(); err != nil {
		return err
	}

	for _, s := range v.PartitionSpecs {
		def := ""
		if s.SpecID == v.DefaultSpecID {
			def = " (default)"
		}
		fmt.Fprintf(w, "\npartition spec %d%s\n", s.SpecID, def)
		if len(s.Fields) == 0 {
			fmt.Fprintln(w, "  unpartitioned")
			continue
		}
		t := newTable(w)
		for _, pf := range s.Fields {
			t.row(fmt.Sprintf("  %d", pf.FieldID), pf.Name, fmt.Sprintf("%s(%d)", pf.Transform, pf.SourceID))
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	if err := writeSortOrdersText(w, v.SortOrders, v.DefaultSortOrderID); err != nil {
		return err
	}

	fmt.Fprintln(w, "\nrefs")
	t = newTable(w)
	if len(v.Refs) == 0 {
		t.row("  none")
	}
	for _, name := range sortedKeys(v.Refs) {
		r := v.Refs[name]
		t.row("  "+name, r.Type, r.SnapshotID)
	}
	if err := t.flush(); err != nil {
		return err
	}

	fmt.Fprintln(w, "\nproperties")
	t = newTable(w)
	if len(v.Properties) == 0 {
		t.row("  none")
	}
	for _, k := range sortedKeys(v.Properties) {
		t.row("  "+k, v.Properties[k])
	}
	if err := t.flush(); err != nil {
		return err
	}

	s := v.CurrentSnapshot
	if s == nil {
		_, err := fmt.Fprintln(w, "\nno current snapshot")
		return err
	}
	printf(w, "\ncurrent snapshot %d %s\n", s.SnapshotID, s.Operation)
	t = newTable(w)
	t.row("  parent", optInt64(s.ParentSnapshotID))
	t.row("  sequence number", s.SequenceNumber)
	t.row("  timestamp", millisText(s.TimestampMS))
	t.row("  manifest list", s.ManifestList)
	for _, k := range sortedKeys(s.Summary) {
		t.row("  "+k, s.Summary[k])
	}
	return t.flush()
}
