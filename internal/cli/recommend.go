package cli

import (
	"net/url"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/health"
	"github.com/icectl/icectl/internal/cli/config"
)

// hasVerb reports whether root has the command at path (e.g. "dv",
// "merge"), so that health recommends only what this build can run.
func hasVerb(root *cobra.Command, path []string) bool {
	c := root
	for _, name := range path {
		var next *cobra.Command
		for _, sub := range c.Commands() {
			if sub.Name() == name || sub.HasAlias(name) {
				next = sub
				break
			}
		}
		if next == nil {
			return false
		}
		c = next
	}
	return c != root && c.Runnable()
}

// recommend renders the command of a health finding as a command line to
// paste: the flags that chose the catalog added, secrets in a URI hidden.
// It is "" when this build has no such command. A table opened as a
// metadata file is read-only, so the command names the table to run it
// against in its catalog instead.
func recommend(root *cobra.Command, c health.Command, flags config.Flags, metadataFile bool) string {
	if root == nil || !hasVerb(root, c.Verb) {
		return ""
	}
	args := append([]string{}, c.Args...)
	if metadataFile {
		if len(args) > 0 {
			args[0] = "NAMESPACE.TABLE"
		}
		return "against the table in its catalog (a metadata file opens read-only): " +
			shellJoin(append(append([]string{"icectl"}, c.Verb...), args...)) + " --catalog-uri URI"
	}
	args = append(args, catalogFlagArgs(flags)...)
	return shellJoin(append(append([]string{"icectl"}, c.Verb...), args...))
}

// catalogFlagArgs are the flags that chose the catalog, to repeat in a
// command line a command prints for the operator to paste (a secret in a
// URI hidden).
func catalogFlagArgs(flags config.Flags) []string {
	var args []string
	if flags.Catalog != "" {
		args = append(args, "--catalog", flags.Catalog)
	}
	if flags.URI != "" {
		args = append(args, "--catalog-uri", hideURISecret(flags.URI))
	}
	if flags.CatalogName != "" {
		args = append(args, "--catalog-name", flags.CatalogName)
	}
	if flags.Warehouse != "" {
		args = append(args, "--warehouse", flags.Warehouse)
	}
	return args
}

// renderRecommendations replaces the recommendations of r with the
// command lines of this build.
func renderRecommendations(r *health.Report, root *cobra.Command, flags config.Flags, metadataFile bool) {
	for i := range r.Findings {
		r.Findings[i].Recommendation = recommend(root, r.Findings[i].Command, flags, metadataFile)
	}
}

// hideURISecret replaces the password of a URI's user info with ****.
func hideURISecret(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); !ok {
		return s
	}
	u.User = url.UserPassword(u.User.Username(), "****")
	return u.String()
}
