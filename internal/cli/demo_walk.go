package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/internal/cli/demo"
)

// WalkthroughTable is the demo table the walkthrough maintains; the
// practice table (demo.TableName) is left as built, with work to do.
const WalkthroughTable = "walkthrough"

// walkthroughKeepLast is how many snapshots of main the walkthrough's
// expire keeps.
const walkthroughKeepLast = 5

// walkStep is one command of the walkthrough, as run.
type walkStep struct {
	Why      string `json:"why"`
	Command  string `json:"command"`
	ExitCode int    `json:"exit_code"`
	// Output is the command's JSON output (with --output json).
	Output json.RawMessage `json:"output,omitempty"`
}

type walkthroughView struct {
	Table string     `json:"table"`
	Steps []walkStep `json:"steps"`
}

// plannedStep is a walkthrough step before it runs: args may depend on
// what the steps before it committed.
type plannedStep struct {
	why  string
	args func() ([]string, error)
}

// runWalkthrough takes the walkthrough table from v2 with delete debt to
// clean v3 by running, in this process, the very commands it prints. In
// text mode each command's output goes to stdout as it runs; in JSON mode
// it is collected into the returned view.
func runWalkthrough(ctx context.Context, opts *DemoOptions, res *demo.Result) (*walkthroughView, error) {
	f := opts.f
	table := demo.Namespace + "." + WalkthroughTable
	flags := []string{"--catalog-uri", res.CatalogURI, "--catalog-name", res.CatalogName}
	fixed := func(args ...string) func() ([]string, error) {
		return func() ([]string, error) { return args, nil }
	}
	steps := []plannedStep{
		{"the table as built: format v2, hundreds of small files, position and equality deletes, a failed job's leftovers",
			fixed("health", table)},
		{"upgrade to v3: every existing row gets a _row_id in the same commit, rewriting no file; --merge-deletes merges the v2 position deletes into one deletion vector per data file (without it upgrade refuses: a v3 writer that ignores them brings deleted rows back)",
			fixed("upgrade", table, "--to", "3", "--merge-deletes")},
		{"compact the small files; deletes are applied and each row keeps its _row_id",
			fixed("compact", table)},
		{"regroup the small manifests every commit left, so that planning a scan reads few",
			fixed("rewrite-manifests", table)},
		{"prove that every row kept its lineage since the upgrade, through the delete merge, the compaction and the manifest rewrite",
			func() ([]string, error) {
				id, err := upgradeSnapshot(ctx, res, table)
				return []string{"verify", "lineage", table, "--from", strconv.FormatInt(id, 10), "--key", "order_id"}, err
			}},
		{"check the delete invariants, and that every file the table references exists",
			fixed("verify", "deletes", table, "--check-files")},
		{fmt.Sprintf("expire old snapshots, keeping the last %d of main (the tag and the audit branch keep theirs); files no snapshot needs any more go", walkthroughKeepLast),
			fixed("expire", table, "--older-than", "1s", "--retain-last", strconv.Itoa(walkthroughKeepLast))},
		{"delete the failed job's leftovers: the demo backdated them 4 days when it built them, so --older-than 3d (the default) catches them and --unsafe-allow-recent is not needed",
			fixed("orphan", table, "--older-than", "3d")},
		{"the debt is gone", fixed("health", table)},
	}
	v := &walkthroughView{Table: table, Steps: []walkStep{}}
	if f.Output != outputJSON {
		printf(f.Out, "\nwalkthrough: %s, built the same way, from v2 with delete debt to clean v3\n", table)
	}
	for i, s := range steps {
		args, err := s.args()
		if err != nil {
			return v, fmt.Errorf("walkthrough step %d: %w", i+1, err)
		}
		args = append(args, flags...)
		step := walkStep{Why: s.why, Command: shellJoin(append([]string{"icectl"}, args...))}
		var out bytes.Buffer
		sub := &Factory{Out: &out, ErrOut: f.ErrOut, Getenv: f.Getenv}
		if f.Output == outputJSON {
			args = append(args, "--output", "json")
		} else {
			printf(f.Out, "\n%d. %s\n$ %s\n", i+1, s.why, step.Command)
			sub.Out = f.Out
		}
		step.ExitCode = Run(ctx, sub, args)
		if f.Output == outputJSON {
			step.Output = json.RawMessage(bytes.TrimSpace(out.Bytes()))
		}
		v.Steps = append(v.Steps, step)
		if step.ExitCode != ExitOK {
			return v, fmt.Errorf("walkthrough step %d (%s) exited %d", i+1, step.Command, step.ExitCode)
		}
	}
	return v, nil
}

// upgradeSnapshot is the snapshot of the demo table's upgrade to v3: the
// oldest ancestor of main's head with a first-row-id.
func upgradeSnapshot(ctx context.Context, res *demo.Result, table string) (int64, error) {
	cat, err := sqlcat.Open(ctx, catalog.Config{Name: res.CatalogName, URI: res.CatalogURI, Warehouse: res.Warehouse})
	if err != nil {
		return 0, fmt.Errorf("open demo catalog: %w", err)
	}
	defer cat.Close()
	id, err := catalog.ParseIdent(table)
	if err != nil {
		return 0, err
	}
	t, err := cat.LoadTable(ctx, id)
	if err != nil {
		return 0, err
	}
	md := t.Metadata
	var found *int64
	for s := md.CurrentSnapshot(); s != nil && s.FirstRowID != nil; {
		found = &s.SnapshotID
		if s.ParentSnapshotID == nil {
			break
		}
		p, ok := md.SnapshotByID(*s.ParentSnapshotID)
		if !ok {
			break
		}
		s = p
	}
	if found == nil {
		return 0, fmt.Errorf("%s has no snapshot with row ids", table)
	}
	return *found, nil
}

// writeWalkthroughOutro says, in text mode, what the practice table is
// after the walkthrough ran.
func writeWalkthroughOutro(w io.Writer, practice string) {
	printf(w, "\n%s is left as built: the same rows and the same debt the walkthrough started from.\n", practice)
}
