package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/internal/cli/config"
)

// NewCmdNamespace returns `icectl namespace`, the commands on a catalog's
// namespaces.
func NewCmdNamespace(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "namespace <command>",
		Short: "Create, list and drop the namespaces of a catalog",
		Long:  "Create, list and drop the namespaces of a catalog.\n\n" + catalogFlagsHelp,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(NewCmdNamespaceCreate(f, nil), NewCmdNamespaceList(f, nil), NewCmdNamespaceDrop(f, nil))
	return cmd
}

// NamespaceOptions are the inputs of `icectl namespace create|list|drop`.
type NamespaceOptions struct {
	f         *Factory
	Catalog   config.Flags
	Namespace string            // dotted; "" lists the top level
	Props     map[string]string // create only
}

// parseNamespaceArg checks a dotted namespace argument.
func parseNamespaceArg(s string) ([]string, error) {
	ns := strings.Split(s, ".")
	if err := catalog.ValidateNamespace(ns); err != nil {
		return nil, usageErrorf("namespace %q: %v", s, err)
	}
	return ns, nil
}

// NewCmdNamespaceCreate returns `icectl namespace create`. runF replaces
// the run function in tests; nil runs the command.
func NewCmdNamespaceCreate(f *Factory, runF func(*NamespaceOptions) error) *cobra.Command {
	opts := &NamespaceOptions{f: f}
	cmd := &cobra.Command{
		Use:   "create NAMESPACE [KEY=VALUE...]",
		Short: "Create a namespace, with properties",
		Long: `Create NAMESPACE (dotted: a.b) with the properties given as KEY=VALUE, as
Spark's CREATE NAMESPACE ... WITH DBPROPERTIES does. A nested namespace's
parents need not exist first. A namespace that exists already is an error.
The file catalog stores no namespace properties (as Java's Hadoop catalog):
properties are refused there.

` + catalogFlagsHelp,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Namespace = args[0]
			if _, err := parseNamespaceArg(opts.Namespace); err != nil {
				return err
			}
			props, err := parseNamespaceProps(args[1:])
			if err != nil {
				return err
			}
			opts.Props = props
			if runF != nil {
				return runF(opts)
			}
			return runNamespaceCreate(cmd.Context(), opts)
		},
	}
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

// parseNamespaceProps parses KEY=VALUE arguments: values may be empty and
// hold "="; a key given twice with different values is ambiguous.
func parseNamespaceProps(args []string) (map[string]string, error) {
	props := make(map[string]string, len(args))
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return nil, usageErrorf("property %q: want KEY=VALUE", a)
		}
		if strings.TrimSpace(k) == "" {
			return nil, usageErrorf("property %q: empty key", a)
		}
		if old, dup := props[k]; dup && old != v {
			return nil, usageErrorf("property %q given twice with different values", k)
		}
		props[k] = v
	}
	return props, nil
}

type namespaceView struct {
	Catalog    catalogView       `json:"catalog"`
	Namespace  string            `json:"namespace"`
	Properties map[string]string `json:"properties,omitempty"`
	Created    bool              `json:"created,omitempty"`
	Dropped    bool              `json:"dropped,omitempty"`
}

func runNamespaceCreate(ctx context.Context, opts *NamespaceOptions) error {
	ns, _ := parseNamespaceArg(opts.Namespace)
	oc, err := openCatalog(ctx, opts.f, opts.Catalog)
	if err != nil {
		return err
	}
	defer oc.Close()
	if err := oc.cat.CreateNamespace(ctx, ns, opts.Props); err != nil {
		if errors.Is(err, catalog.ErrAlreadyExists) {
			err = fmt.Errorf("namespace %s exists already", opts.Namespace)
		}
		return scrub(oc.cfg, err)
	}
	v := namespaceView{Catalog: newCatalogView(oc.cfg), Namespace: opts.Namespace, Properties: opts.Props, Created: true}
	if opts.f.Output == outputJSON {
		return writeJSON(opts.f.Out, v)
	}
	_, err = printf(opts.f.Out, "namespace %s: created\n", v.Namespace)
	return err
}

// NewCmdNamespaceList returns `icectl namespace list`. runF replaces the
// run function in tests; nil runs the command.
func NewCmdNamespaceList(f *Factory, runF func(*NamespaceOptions) error) *cobra.Command {
	opts := &NamespaceOptions{f: f}
	cmd := &cobra.Command{
		Use:   "list [PARENT]",
		Short: "List the namespaces of a catalog, or those directly under PARENT",
		Long: `List the top-level namespaces of the catalog, or the namespaces directly
under PARENT (dotted: a.b), one per line, dotted.

` + catalogFlagsHelp,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Namespace = args[0]
				if _, err := parseNamespaceArg(opts.Namespace); err != nil {
					return err
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return runNamespaceList(cmd.Context(), opts)
		},
	}
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

type namespaceListView struct {
	Catalog    catalogView `json:"catalog"`
	Parent     *string     `json:"parent"`
	Namespaces []string    `json:"namespaces"`
}

func runNamespaceList(ctx context.Context, opts *NamespaceOptions) error {
	var parent []string
	if opts.Namespace != "" {
		parent, _ = parseNamespaceArg(opts.Namespace)
	}
	oc, err := openCatalog(ctx, opts.f, opts.Catalog)
	if err != nil {
		return err
	}
	defer oc.Close()
	got, err := oc.cat.ListNamespaces(ctx, parent)
	if err != nil {
		if errors.Is(err, catalog.ErrNoSuchNamespace) {
			err = fmt.Errorf("namespace %s does not exist", opts.Namespace)
		}
		return scrub(oc.cfg, err)
	}
	v := namespaceListView{Catalog: newCatalogView(oc.cfg), Namespaces: []string{}}
	if opts.Namespace != "" {
		v.Parent = &opts.Namespace
	}
	for _, ns := range got {
		// Some catalogs answer with the last level only.
		if len(ns) <= len(parent) || !slices.Equal(ns[:len(parent)], parent) {
			ns = append(slices.Clone(parent), ns...)
		}
		v.Namespaces = append(v.Namespaces, strings.Join(ns, "."))
	}
	slices.Sort(v.Namespaces)
	v.Namespaces = slices.Compact(v.Namespaces)
	if opts.f.Output == outputJSON {
		return writeJSON(opts.f.Out, v)
	}
	if len(v.Namespaces) == 0 {
		// A note, not a result: stdout stays empty.
		where := "the catalog"
		if opts.Namespace != "" {
			where = "namespace " + opts.Namespace
		}
		_, err := printf(opts.f.ErrOut, "no namespaces in %s\n", where)
		return err
	}
	for _, ns := range v.Namespaces {
		if _, err := fmt.Fprintln(opts.f.Out, escapeText(ns)); err != nil {
			return err
		}
	}
	return nil
}

// NewCmdNamespaceDrop returns `icectl namespace drop`. runF replaces the
// run function in tests; nil runs the command.
func NewCmdNamespaceDrop(f *Factory, runF func(*NamespaceOptions) error) *cobra.Command {
	opts := &NamespaceOptions{f: f}
	cmd := &cobra.Command{
		Use:   "drop NAMESPACE",
		Short: "Drop an empty namespace",
		Long: `Drop NAMESPACE (dotted: a.b) when it is empty: no tables, views or
namespaces in it (in the file catalog, no file or directory of any kind in
its directory). A namespace that is not empty is refused and left as it
was: drop or move its tables first. Nothing else is deleted.

` + catalogFlagsHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Namespace = args[0]
			if _, err := parseNamespaceArg(opts.Namespace); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runNamespaceDrop(cmd.Context(), opts)
		},
	}
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

func runNamespaceDrop(ctx context.Context, opts *NamespaceOptions) error {
	ns, _ := parseNamespaceArg(opts.Namespace)
	oc, err := openCatalog(ctx, opts.f, opts.Catalog)
	if err != nil {
		return err
	}
	defer oc.Close()
	if err := oc.cat.DropNamespace(ctx, ns); err != nil {
		switch {
		case errors.Is(err, catalog.ErrNamespaceNotEmpty):
			err = fmt.Errorf("%w; nothing changed: drop its tables and namespaces first (icectl table list %s, icectl namespace list %s)",
				err, opts.Namespace, opts.Namespace)
		case errors.Is(err, catalog.ErrNoSuchNamespace):
			err = fmt.Errorf("namespace %s does not exist", opts.Namespace)
		}
		return scrub(oc.cfg, err)
	}
	v := namespaceView{Catalog: newCatalogView(oc.cfg), Namespace: opts.Namespace, Dropped: true}
	if opts.f.Output == outputJSON {
		return writeJSON(opts.f.Out, v)
	}
	_, err = printf(opts.f.Out, "namespace %s: dropped\n", v.Namespace)
	return err
}
