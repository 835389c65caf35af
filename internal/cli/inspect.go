package cli

import (
	"github.com/spf13/cobra"
)

// NewCmdInspect returns `icectl inspect`, the group of commands that decode
// one Iceberg file and print what it holds.
func NewCmdInspect(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inspect <kind> FILE",
		Short: "Decode one Iceberg file and print its contents",
		Long: `Decode one Iceberg file and print its contents.

FILE is a local path or an s3:// URI. S3 credentials come from the standard
AWS environment variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
AWS_SESSION_TOKEN); they are never printed.`,
		// A group: with no subcommand it prints help; anything else is a
		// usage error (cobra would otherwise print help and succeed).
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(
		NewCmdInspectMetadata(f, nil),
		NewCmdInspectManifest(f, nil),
		NewCmdInspectPuffin(f, nil),
		NewCmdInspectDV(f, nil),
		NewCmdInspectParquet(f, nil),
	)
	return cmd
}
