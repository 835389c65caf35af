package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// VersionOptions are the inputs of `icectl version`.
type VersionOptions struct {
	f *Factory
}

// NewCmdVersion returns `icectl version`. runF replaces the run function in
// tests; nil runs the command.
func NewCmdVersion(f *Factory, runF func(*VersionOptions) error) *cobra.Command {
	opts := &VersionOptions{f: f}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the icectl version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runVersion(opts)
		},
	}
}

type versionInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	GoVersion string `json:"go_version"`
}

// buildVersion is the version of this build, from the Go build info.
func buildVersion() versionInfo {
	v := versionInfo{Version: "(devel)", GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				v.Commit = s.Value
			}
		}
	}
	return v
}

// String is the one line `icectl version` and `icectl --version` print.
func (v versionInfo) String() string {
	return strings.Join(strings.Fields(fmt.Sprintf("icectl %s %s %s", v.Version, v.Commit, v.GoVersion)), " ")
}

func runVersion(opts *VersionOptions) error {
	v := buildVersion()
	if opts.f.Output == outputJSON {
		return writeJSON(opts.f.Out, v)
	}
	_, err := fmt.Fprintln(opts.f.Out, v)
	return err
}
