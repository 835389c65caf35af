package cli

import (
	"github.com/spf13/cobra"

	"github.com/icectl/icectl/iceberg/spec"
)

// NewCmdRoot returns the icectl command with all its subcommands.
func NewCmdRoot(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "icectl <command>",
		Short: "Maintain Apache Iceberg tables",
		Long: `icectl inspects and maintains Apache Iceberg tables (format v1-v3).

Results go to stdout, as text or, with --output json, as one JSON document
with snake_case keys. Errors go to stderr as one line "icectl: <message>".

` + exitCodesHelp,
		SilenceErrors: true,
		SilenceUsage:  true,
		// Runs before every subcommand (none defines its own persistent hook).
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if f.Output != outputText && f.Output != outputJSON {
				return usageErrorf("invalid --output %q: want text or json", f.Output)
			}
			return nil
		},
	}
	cmd.PersistentFlags().StringVarP(&f.Output, "output", "o", outputText, "output format: text or json")
	// --version prints what `icectl version` prints.
	cmd.Version = buildInfo().String()
	cmd.SetVersionTemplate("{{.Version}}\n")
	cmd.CompletionOptions.HiddenDefaultCmd = true
	cmd.AddCommand(
		NewCmdVersion(f, nil),
		NewCmdInspect(f),
		addTableRegisterCmd(addTablePropsCmds(NewCmdTable(f), f), f),
		NewCmdSnapshots(f, nil),
		NewCmdFiles(f, nil),
		NewCmdHealth(f, nil),
		NewCmdDemo(f, nil),
		NewCmdCompact(f, nil),
		NewCmdDV(f),
		NewCmdExpire(f, nil),
		NewCmdOrphan(f, nil, nil),
		NewCmdRefs(f, spec.RefTypeTag, nil),
		NewCmdRefs(f, spec.RefTypeBranch, nil),
		NewCmdRollback(f, nil),
		NewCmdCherrypick(f, nil),
		NewCmdFastForward(f, nil),
		NewCmdRewriteTablePath(f, nil),
		NewCmdCatalog(f),
		NewCmdNamespace(f),
		newHelpTopicCatalogs(),
		NewCmdUpgrade(f, nil),
		NewCmdRewriteManifests(f, nil),
		NewCmdRewritePositionDeletes(f, nil),
		NewCmdRewriteEqualityDeletes(f, nil),
		NewCmdDeleteRows(f, nil),
		NewCmdMaintain(f, nil),
		NewCmdVerify(f),
		NewCmdClaim(f, nil),
		NewCmdStats(f),
	)
	addExamples(cmd)
	return cmd
}
