package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/internal/shared/shard"
)

// What the sharded runs of compact and dv merge share: their flags, the
// shard, plan and stage I/O, and a worker's exit.

// shardedFlags are the flags of a verb's sharded run.
type shardedFlags struct{ plan, commit, stage, shard string }

// checkShardedFlags validates the combination of a verb's sharded-run
// flags, refusing the planning flags (decided by the plan) with them, and
// resolves the shard of a worker.
func checkShardedFlags(cmd *cobra.Command, fl shardedFlags, planning []string, getenv func(string) string) (shard.Shard, error) {
	if fl.plan == "" && fl.commit == "" {
		if fl.shard != "" || fl.stage != "" {
			return shard.Shard{}, usageErrorf("--shard and --stage run a worker of a saved plan: add --plan PLAN (made by --dry-run --plan-out PLAN)")
		}
		return shard.Shard{}, nil
	}
	for _, name := range planning {
		if cmd.Flags().Changed(name) {
			return shard.Shard{}, usageErrorf("--%s cannot be used with --plan or --commit: the plan decides it (plan again to change it)", name)
		}
	}
	if fl.commit != "" {
		if fl.shard != "" || fl.stage != "" {
			return shard.Shard{}, usageErrorf("--commit commits what the workers staged: --shard and --stage are the workers' flags")
		}
		return shard.Shard{}, nil
	}
	if fl.shard == "" || fl.stage == "" {
		return shard.Shard{}, usageErrorf("--plan needs --shard I/N and --stage DIR (a worker), or --commit DIR (the committer)")
	}
	return parseShard(fl.shard, getenv)
}

// parseShard reads --shard: "I/N", or "N" with I from the environment.
func parseShard(s string, getenv func(string) string) (shard.Shard, error) {
	sh, err := shard.Parse(s, getenv)
	if err != nil {
		return sh, usageErrorf("%v", err)
	}
	return sh, nil
}

// locationIO is the FileIO for a plan or stage location: the table's own
// when the location is on the same kind of store as the table's (so the
// catalog's settings, or the credentials a REST catalog vends, serve
// both), else one made from the catalog's properties (s3.*, gcs.*,
// adls.*), the AWS_* environment filling the gaps (and the GCS and Azure
// clients reading theirs: STORAGE_EMULATOR_HOST, AZURE_STORAGE_*, the
// default credential chains).
func locationIO(ctx context.Context, f *Factory, oc *openedCatalog, t *catalog.Table, loc string) (fileio.FileIO, error) {
	if store(loc) == store(t.Metadata.Location) {
		return t.IO, nil
	}
	return catalogLocationIO(ctx, f, oc, loc)
}

// store names the kind of store a location is on: its scheme, with the
// schemes of one store folded together (s3a and s3n are s3; abfss, wasb
// and wasbs are abfs: one client serves them all) and a plain path file.
func store(loc string) string {
	s := "file"
	if i := strings.Index(loc, "://"); i > 0 {
		s = strings.ToLower(loc[:i])
	}
	switch s {
	case "s3a", "s3n":
		return "s3"
	case "abfss", "wasb", "wasbs":
		return "abfs"
	}
	return s
}

// writePlanTo writes a plan document to name (a path or a URI).
func writePlanTo(ctx context.Context, f *Factory, oc *openedCatalog, t *catalog.Table, name string, write func(io.Writer) error) error {
	fio, err := locationIO(ctx, f, oc, t, name)
	if err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	w, err := fio.Create(ctx, name)
	if err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	if err := write(w); err != nil {
		return errors.Join(fmt.Errorf("write plan: %w", err), w.Abort())
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	return nil
}

// shardExit is a worker's outcome when failed of its units failed and
// done are staged: partial (3) when some are staged, an error when none.
func shardExit(i, n int, unit string, failed, done int) error {
	if failed == 0 {
		return nil
	}
	e := fmt.Errorf("shard %d/%d: %d %s(s) failed (see the report); run the shard again to retry them", i, n, failed, unit)
	if done > 0 {
		return &ExitError{Code: ExitPartial, Err: e}
	}
	return e
}
