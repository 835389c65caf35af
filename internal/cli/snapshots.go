package cli

import (
	"cmp"
	"context"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/internal/cli/config"
)

// SnapshotsOptions are the inputs of `icectl snapshots`.
type SnapshotsOptions struct {
	f       *Factory
	Catalog config.Flags
	Table   string
}

// NewCmdSnapshots returns `icectl snapshots`. runF replaces the run
// function in tests; nil runs the command.
func NewCmdSnapshots(f *Factory, runF func(*SnapshotsOptions) error) *cobra.Command {
	opts := &SnapshotsOptions{f: f}
	cmd := &cobra.Command{
		Use:   "snapshots TABLE",
		Short: "List the snapshots of a table",
		Long: `List the snapshots of a table, oldest first: id, parent, sequence number,
time, operation, the refs pointing at it and the highlights of its summary
(the JSON output carries the whole summary).

` + catalogFlagsHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runSnapshots(cmd.Context(), opts)
		},
	}
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

type snapshotsView struct {
	Table             string             `json:"table"`
	CurrentSnapshotID *int64             `json:"current_snapshot_id"`
	Snapshots         []snapshotListItem `json:"snapshots"`
}

type snapshotListItem struct {
	SnapshotID       int64             `json:"snapshot_id"`
	ParentSnapshotID *int64            `json:"parent_snapshot_id"`
	SequenceNumber   int64             `json:"sequence_number"`
	TimestampMS      int64             `json:"timestamp_ms"`
	Timestamp        string            `json:"timestamp"`
	Operation        string            `json:"operation"`
	Current          bool              `json:"current"`
	Refs             []string          `json:"refs"`
	Summary          map[string]string `json:"summary"`
}

// summaryHighlights are the summary keys text output shows, with short
// labels, in this order.
var summaryHighlights = []struct{ key, label string }{
	{"added-data-files", "+files"},
	{"deleted-data-files", "-files"},
	{"added-records", "+rows"},
	{"deleted-records", "-rows"},
	{"added-delete-files", "+deletes"},
	{"removed-delete-files", "-deletes"},
	{"added-dvs", "+dvs"},
	{"removed-dvs", "-dvs"},
	{"total-records", "rows"},
	{"total-data-files", "files"},
	{"total-delete-files", "delete files"},
}

func newSnapshotsView(t *catalog.Table) snapshotsView {
	md := t.Metadata
	v := snapshotsView{Table: t.Ident.String(), CurrentSnapshotID: md.CurrentSnapshotID, Snapshots: []snapshotListItem{}}
	refs := map[int64][]string{}
	for name, r := range md.Refs {
		refs[r.SnapshotID] = append(refs[r.SnapshotID], name)
	}
	for _, s := range md.Snapshots {
		names := refs[s.SnapshotID]
		slices.Sort(names)
		if names == nil {
			names = []string{}
		}
		v.Snapshots = append(v.Snapshots, snapshotListItem{
			SnapshotID:       s.SnapshotID,
			ParentSnapshotID: s.ParentSnapshotID,
			SequenceNumber:   s.SequenceNumber,
			TimestampMS:      s.TimestampMS,
			Timestamp:        rfc3339Millis(s.TimestampMS),
			Operation:        s.Operation(),
			Current:          md.CurrentSnapshotID != nil && *md.CurrentSnapshotID == s.SnapshotID,
			Refs:             names,
			Summary:          nonNilMap(s.Summary),
		})
	}
	slices.SortStableFunc(v.Snapshots, func(a, b snapshotListItem) int {
		return cmp.Or(cmp.Compare(a.SequenceNumber, b.SequenceNumber), cmp.Compare(a.TimestampMS, b.TimestampMS), cmp.Compare(a.SnapshotID, b.SnapshotID))
	})
	return v
}

func runSnapshots(ctx context.Context, opts *SnapshotsOptions) error {
	oc, t, err := loadTable(ctx, opts.f, opts.Catalog, opts.Table)
	if err != nil {
		return err
	}
	defer oc.Close()
	v := newSnapshotsView(t)
	if opts.f.Output == outputJSON {
		return writeJSON(opts.f.Out, v)
	}
	return writeSnapshotsText(opts.f.Out, opts.f.ErrOut, v)
}

// writeSnapshotsText writes the snapshots to w; that there are none is a
// note, on errOut.
func writeSnapshotsText(w, errOut io.Writer, v snapshotsView) error {
	if len(v.Snapshots) == 0 {
		_, err := printf(errOut, "%s has no snapshots\n", v.Table)
		return err
	}
	t := newTable(w)
	t.row("SNAPSHOT", "PARENT", "SEQ", "TIME", "OPERATION", "REFS", "SUMMARY")
	for _, s := range v.Snapshots {
		var hl []string
		for _, h := range summaryHighlights {
			if val, ok := s.Summary[h.key]; ok && val != "0" {
				hl = append(hl, h.label+"="+val)
			}
		}
		refs := strings.Join(s.Refs, ",")
		if refs == "" {
			refs = "-"
		}
		t.row(s.SnapshotID, optInt64(s.ParentSnapshotID), s.SequenceNumber, rfc3339Millis(s.TimestampMS), s.Operation, refs, strings.Join(hl, " "))
	}
	return t.flush()
}
