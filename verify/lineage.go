package verify

import (
	"context"
	"fmt"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
)

// Kinds of lineage violations.
const (
	RowIDChanged       = "row-id-changed"       // same key and values, another _row_id
	SequenceChanged    = "sequence-changed"     // same values, another _last_updated_sequence_number
	SequenceNotAdvance = "sequence-not-updated" // values changed, _last_updated_sequence_number did not grow
	LineageLost        = "lineage-lost"         // the row had lineage in From and has none in To
	DuplicateRowID     = "duplicate-row-id"     // two rows of one snapshot share a _row_id
	// NothingMatched: both snapshots have rows and no row matched by key,
	// so nothing was proven (a NULL key never matches).
	NothingMatched = "nothing-matched"
	// RowsDiffer: the snapshots after From up to To only rewrite data
	// (operation replace), yet a row is only in one of them.
	RowsDiffer = "rows-differ"
	// ValuesChanged: the snapshots after From up to To only rewrite data,
	// yet a matched row's values changed.
	ValuesChanged = "values-changed"
)

// DefaultMaxViolations is how many violations a report lists by default.
const DefaultMaxViolations = 20

// Violation is one broken invariant.
type Violation struct {
	Kind    string `json:"kind"`
	Key     string `json:"key,omitempty"` // the row's key values as JSON
	Message string `json:"message"`
}

// LineageOptions say what Lineage compares.
type LineageOptions struct {
	From, To *spec.Snapshot
	// KeyIDs are the field ids of the key columns (top-level, primitive).
	KeyIDs []int
	// MaxViolations caps the violations listed (all are counted);
	// DefaultMaxViolations when 0.
	MaxViolations int
}

// LineageReport is the outcome of Lineage; its JSON form is the output of
// `icectl verify lineage --output json`.
type LineageReport struct {
	FromSnapshotID int64 `json:"from_snapshot_id"`
	ToSnapshotID   int64 `json:"to_snapshot_id"`
	RowsFrom       int64 `json:"rows_from"`
	RowsTo         int64 `json:"rows_to"`
	// RewriteOnly is set when every snapshot after From up to To (To's
	// ancestry) has operation replace: the data was only rewritten, so
	// both snapshots must hold the same rows with the same values. It is
	// false when From is not an ancestor of To or a snapshot between them
	// is gone.
	RewriteOnly bool `json:"rewrite_only"`
	// OnlyFrom and OnlyTo are the rows of one snapshot whose key no row of
	// the other holds; rows with a NULL key (NullKeysFrom, NullKeysTo) are
	// among them, as a NULL key matches nothing.
	OnlyFrom     int64 `json:"rows_only_in_from"`
	OnlyTo       int64 `json:"rows_only_in_to"`
	NullKeysFrom int64 `json:"null_keys_from"`
	NullKeysTo   int64 `json:"null_keys_to"`
	// Matched rows have their key in both snapshots, held by one row in
	// each; of them, Checked had lineage in From and were held to it,
	// WithoutLineage had none in either (rows from before a v3 upgrade),
	// Gained had none in From and got it in To (the first v3 commit),
	// Replaced changed values and got a new _row_id (an update through an
	// equality delete: allowed).
	Matched        int64 `json:"matched"`
	Checked        int64 `json:"checked"`
	WithoutLineage int64 `json:"without_lineage"`
	Gained         int64 `json:"gained_lineage"`
	Changed        int64 `json:"changed_values"`
	Replaced       int64 `json:"replaced"`
	// DuplicateKeys are keys held by more than one row of a snapshot;
	// their rows cannot be matched and are left out (they are neither
	// matched nor only on one side when the key is in both snapshots).
	DuplicateKeys int64       `json:"duplicate_keys"`
	Violations    int64       `json:"violations"`
	First         []Violation `json:"first_violations"`
}

// OK reports whether no invariant was broken.
func (r *LineageReport) OK() bool { return r.Violations == 0 }

type lineageRow struct {
	digest     [32]byte
	rowID, seq *int64
	n          int64 // rows of From holding the key
	seenInTo   bool
}

// Lineage checks that row lineage survived from opts.From to opts.To:
// for every key in both snapshots, _row_id is unchanged and
// _last_updated_sequence_number is unchanged unless the row's values
// changed (then it must grow); no _row_id appears twice in a snapshot; a
// row that had lineage keeps it. When the snapshots between only rewrite
// data (operation replace), both must hold the same rows with the same
// values. A check that matched no row though both snapshots have rows
// proves nothing and is a violation. It holds the keys, digests and lineage
// of every row of From, and of the matched rows of To, in memory.
func Lineage(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, opts LineageOptions) (*LineageReport, error) {
	if opts.From == nil || opts.To == nil {
		return nil, fmt.Errorf("verify lineage: both snapshots are required")
	}
	maxV := opts.MaxViolations
	if maxV <= 0 {
		maxV = DefaultMaxViolations
	}
	r := &LineageReport{FromSnapshotID: opts.From.SnapshotID, ToSnapshotID: opts.To.SnapshotID, First: []Violation{},
		RewriteOnly: RewriteOnly(md, opts.From, opts.To)}
	violate := func(kind, key, format string, args ...any) {
		r.Violations++
		if len(r.First) < maxV {
			r.First = append(r.First, Violation{Kind: kind, Key: key, Message: fmt.Sprintf(format, args...)})
		}
	}
	dupIDs := func(snap string) func(row scan.LineageRow) {
		seen := map[int64]string{}
		return func(row scan.LineageRow) {
			if row.RowID == nil {
				return
			}
			at := fmt.Sprintf("%s@%d", row.File, row.Pos)
			if first, ok := seen[*row.RowID]; ok {
				violate(DuplicateRowID, row.KeyText, "_row_id %d appears twice in snapshot %s: %s and %s", *row.RowID, snap, first, at)
				return
			}
			seen[*row.RowID] = at
		}
	}

	from := map[string]*lineageRow{}
	checkFrom := dupIDs(fmt.Sprint(opts.From.SnapshotID))
	err := scan.LineageRows(ctx, fio, md, opts.From, opts.KeyIDs, func(row scan.LineageRow) error {
		r.RowsFrom++
		checkFrom(row)
		if row.KeyNull {
			r.NullKeysFrom++
			return nil
		}
		if old, ok := from[row.Key]; ok {
			old.n++
			return nil
		}
		from[row.Key] = &lineageRow{digest: row.Digest, rowID: row.RowID, seq: row.LastUpdated, n: 1}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("verify lineage: read snapshot %d: %w", opts.From.SnapshotID, err)
	}
	checkTo := dupIDs(fmt.Sprint(opts.To.SnapshotID))
	type pending struct {
		row scan.LineageRow
		old *lineageRow
	}
	var toRows []pending // rows of To whose key is in From, checked once To's duplicates are known
	toDup := map[string]bool{}
	err = scan.LineageRows(ctx, fio, md, opts.To, opts.KeyIDs, func(row scan.LineageRow) error {
		r.RowsTo++
		checkTo(row)
		if row.KeyNull {
			r.NullKeysTo++
			r.OnlyTo++
			return nil
		}
		old, ok := from[row.Key]
		if !ok {
			r.OnlyTo++
			return nil
		}
		if old.seenInTo {
			toDup[row.Key] = true
			return nil
		}
		old.seenInTo = true
		toRows = append(toRows, pending{row, old})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("verify lineage: read snapshot %d: %w", opts.To.SnapshotID, err)
	}
	r.OnlyFrom = r.NullKeysFrom
	for _, old := range from {
		if old.n > 1 {
			r.DuplicateKeys++
		}
		if !old.seenInTo {
			r.OnlyFrom += old.n
		}
	}
	for k := range toDup {
		if from[k].n == 1 {
			r.DuplicateKeys++
		}
	}
	for _, p := range toRows {
		row, old := p.row, p.old
		if old.n > 1 || toDup[row.Key] {
			continue
		}
		r.Matched++
		changed := row.Digest != old.digest
		if changed {
			r.Changed++
			if r.RewriteOnly {
				violate(ValuesChanged, row.KeyText, "the row's values changed though the snapshots between only rewrite data (%s@%d)", row.File, row.Pos)
			}
		}
		switch {
		case old.rowID == nil && row.RowID == nil:
			r.WithoutLineage++
			continue
		case old.rowID == nil:
			r.Gained++
			continue
		case row.RowID == nil:
			violate(LineageLost, row.KeyText, "the row had _row_id %d and now has none (%s@%d)", *old.rowID, row.File, row.Pos)
			continue
		}
		r.Checked++
		if *row.RowID != *old.rowID {
			if changed {
				r.Replaced++
				continue
			}
			violate(RowIDChanged, row.KeyText, "_row_id %d became %d with the same values (%s@%d)", *old.rowID, *row.RowID, row.File, row.Pos)
			continue
		}
		switch {
		case old.seq == nil || row.LastUpdated == nil:
			violate(LineageLost, row.KeyText, "_last_updated_sequence_number %s became %s (%s@%d)", optText(old.seq), optText(row.LastUpdated), row.File, row.Pos)
		case !changed && *row.LastUpdated != *old.seq:
			violate(SequenceChanged, row.KeyText, "_last_updated_sequence_number %d became %d though the row's values did not change (%s@%d)", *old.seq, *row.LastUpdated, row.File, row.Pos)
		case changed && *row.LastUpdated <= *old.seq:
			violate(SequenceNotAdvance, row.KeyText, "the row's values changed but _last_updated_sequence_number stayed %d (now %d) (%s@%d)", *old.seq, *row.LastUpdated, row.File, row.Pos)
		}
	}
	// The verdicts on the whole come first in the list.
	var whole []Violation
	if r.NothingMatched() {
		whole = append(whole, Violation{Kind: NothingMatched, Message: r.nothingMatched()})
	}
	if r.RewriteOnly && (r.OnlyFrom > 0 || r.OnlyTo > 0 || r.RowsFrom != r.RowsTo) {
		whole = append(whole, Violation{Kind: RowsDiffer, Message: fmt.Sprintf(
			"the snapshots after %d up to %d only rewrite data (operation replace), yet %d row(s) are only in snapshot %d and %d only in snapshot %d (%d rows -> %d)",
			r.FromSnapshotID, r.ToSnapshotID, r.OnlyFrom, r.FromSnapshotID, r.OnlyTo, r.ToSnapshotID, r.RowsFrom, r.RowsTo)})
	}
	r.Violations += int64(len(whole))
	r.First = append(whole, r.First...)
	if len(r.First) > maxV {
		r.First = r.First[:maxV]
	}
	return r, nil
}

func (r *LineageReport) nothingMatched() string {
	msg := fmt.Sprintf("no row matched by key: snapshot %d has %d row(s), snapshot %d has %d, and no key is held by one row of each", r.FromSnapshotID, r.RowsFrom, r.ToSnapshotID, r.RowsTo)
	if r.NullKeysFrom > 0 || r.NullKeysTo > 0 {
		msg += fmt.Sprintf("; %d and %d of them have a NULL key, which never matches", r.NullKeysFrom, r.NullKeysTo)
	}
	if r.DuplicateKeys > 0 {
		msg += fmt.Sprintf("; %d key(s) are held by several rows, which cannot be matched", r.DuplicateKeys)
	}
	return msg
}

// NothingMatched reports whether the check matched no row though both
// snapshots have rows, so that it proved nothing.
func (r *LineageReport) NothingMatched() bool {
	return r.RowsFrom > 0 && r.RowsTo > 0 && r.Matched == 0
}

// RewriteOnly reports whether every snapshot after from up to to, walking
// to's parents, has operation replace (a rewrite that keeps every row
// and value). It is true when from is to, and false when from is not an
// ancestor of to or a snapshot between them is no longer in md.
func RewriteOnly(md *spec.TableMetadata, from, to *spec.Snapshot) bool {
	s := to
	for range len(md.Snapshots) + 1 {
		if s.SnapshotID == from.SnapshotID {
			return true
		}
		if s.Operation() != spec.OperationReplace || s.ParentSnapshotID == nil {
			return false
		}
		p, ok := md.SnapshotByID(*s.ParentSnapshotID)
		if !ok {
			return false
		}
		s = p
	}
	return false
}

func optText(p *int64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}
