package maintain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/icectl/icectl/expire"
	"github.com/icectl/icectl/health"
	"github.com/icectl/icectl/iceberg/metastore"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/plan"
	"github.com/icectl/icectl/rewriteposdeletes"
)

// Catalog is what maintain needs from a catalog: loading and committing
// (the verbs), and listing the tables to look at.
type Catalog interface {
	metastore.Committer
	ListNamespaces(ctx context.Context, parent []string) ([][]string, error)
	ListTables(ctx context.Context, ns []string) ([]metastore.Ident, error)
}

// ErrNotFound marks a selector that names no table and no namespace.
var ErrNotFound = errors.New("no such table or namespace")

// ListTables returns the tables selected: each selector names a table or
// a namespace (every table in it and below it); none selects the whole
// catalog. The result is sorted by name, without duplicates.
func ListTables(ctx context.Context, cat Catalog, selectors []string) ([]metastore.Ident, error) {
	var out []metastore.Ident
	if len(selectors) == 0 {
		ids, err := tablesUnder(ctx, cat, nil)
		if err != nil {
			return nil, err
		}
		out = ids
	}
	for _, s := range selectors {
		if id, err := metastore.ParseIdent(s); err == nil {
			if _, err := cat.LoadTable(ctx, id); err == nil {
				out = append(out, id)
				continue
			}
		}
		ns := strings.Split(s, ".")
		if err := metastore.ValidateNamespace(ns); err != nil {
			return nil, fmt.Errorf("%q: %w", s, err)
		}
		ids, err := tablesUnder(ctx, cat, ns)
		if err != nil {
			return nil, fmt.Errorf("%s: %w (%v)", s, ErrNotFound, err)
		}
		out = append(out, ids...)
	}
	slices.SortFunc(out, func(a, b metastore.Ident) int { return strings.Compare(a.String(), b.String()) })
	return slices.CompactFunc(out, func(a, b metastore.Ident) bool { return a.String() == b.String() }), nil
}

// tablesUnder lists the tables of ns and of every namespace below it (of
// the whole catalog when ns is nil).
func tablesUnder(ctx context.Context, cat Catalog, ns []string) ([]metastore.Ident, error) {
	var out []metastore.Ident
	if ns != nil {
		ids, err := cat.ListTables(ctx, ns)
		if err != nil {
			return nil, err
		}
		out = append(out, ids...)
	}
	children, err := cat.ListNamespaces(ctx, ns)
	if err != nil {
		if ns != nil {
			// A catalog without nested namespaces may refuse the question.
			return out, nil
		}
		return nil, err
	}
	for _, c := range children {
		if len(c) <= len(ns) || !slices.Equal(c[:len(ns)], ns) {
			continue // not below ns: never loop
		}
		ids, err := tablesUnder(ctx, cat, c)
		if err != nil {
			return nil, err
		}
		out = append(out, ids...)
	}
	return out, nil
}

// TableState is what the planner knows of one table: its policy and its
// debt under that policy. Reading it changes nothing.
type TableState struct {
	Ident            metastore.Ident
	MetadataLocation string
	FormatVersion    int
	Policy           *Resolved
	// Health is health.Analyze of the current snapshot with the policy's
	// thresholds.
	Health health.Report
	// MultiDVFiles counts data files with more than one DV.
	MultiDVFiles int
	// SmallBytes are the bytes of the small files in partitions with
	// enough of them to compact; DeleteBytes the data bytes compaction
	// would rewrite to apply deletes: of the partitions past the delete
	// ratio (v3), of the data files past it (v2, V2DeleteHeavy).
	SmallBytes, DeleteBytes int64
	// V2DeleteHeavy counts the data files of a v2 table whose own deletes
	// reach the delete ratio, as compaction's planner counts them (Java's
	// delete-ratio-threshold: only file-scoped position deletes are known
	// to delete rows of one file): compaction applies their deletes.
	V2DeleteHeavy int
	// PositionDeletes is what rewrite-position-deletes would do on a v2
	// table, as its own planner plans it under the policy.
	PositionDeletes PosDeleteDebt
	// Expire is what expiry would remove under the policy.
	ExpireSnapshots, ExpireRefs int
	// LastMaintainedMS is the newest snapshot that rewrote files
	// (operation replace: compaction, dv merge, rewrite-manifests); 0 when
	// none is in the history.
	LastMaintainedMS int64
	// StatsColumns is what stats-columns would write, when the policy
	// enables it.
	StatsColumns StatsColumnsDebt
	// SnapshotID is main's head when the state was read (0: none).
	SnapshotID int64
	// Writers is what the table's history says of the writers committing
	// to it now (the streaming policy's input).
	Writers WriterStats
	// Err is why the table could not be read; it is then not planned.
	Err error
}

// PosDeleteDebt is the position-delete rewrite a v2 table is due: the
// small files of the partitions with enough of them, and the files that
// apply to no live data file.
type PosDeleteDebt struct {
	Files, Partitions, Dangling int
	// Bytes are the small files' bytes (the dangling ones are not read).
	Bytes int64
}

// ReadState reads table id's state under policy p at now.
func ReadState(ctx context.Context, cat metastore.Committer, id metastore.Ident, p *Policy, now time.Time) TableState {
	st := TableState{Ident: id}
	t, err := cat.LoadTable(ctx, id)
	if err != nil {
		st.Err = err
		return st
	}
	st.MetadataLocation, st.FormatVersion = t.MetadataLocation, t.Metadata.FormatVersion
	st.SnapshotID = headID(t.Metadata)
	if st.Policy, err = p.Resolve(id, t.Metadata.Properties); err != nil {
		st.Err = fmt.Errorf("table %s: %w", id, err)
		return st
	}
	in, err := health.ReadInput(ctx, t, now)
	if err != nil {
		st.Err = fmt.Errorf("table %s: %w", id, err)
		return st
	}
	in.Thresholds = thresholds(in.Thresholds, st.Policy)
	in.Retention = st.Policy.Retention()
	st.Health = health.Analyze(in)
	st.measure(t.Metadata, in.Files)
	if st.Policy.Enabled[VerbStatsColumns] {
		st.StatsColumns.Missing, st.StatsColumns.Err = statsColumnsMissing(t.Metadata, st.Policy.StatsColumns)
	}
	if st.FormatVersion == 2 && in.Files != nil {
		if err := st.measureV2(t.Metadata, in.Files); err != nil {
			st.Err = fmt.Errorf("table %s: %w", id, err)
			return st
		}
	}
	if ep, err := expire.NewPlan(t.Metadata, expirePolicy(st.Policy, now)); err == nil {
		st.ExpireSnapshots, st.ExpireRefs = len(ep.Remove), len(ep.RemoveRefs)
	} else {
		st.Err = fmt.Errorf("table %s: %w", id, err)
	}
	for _, s := range t.Metadata.Snapshots {
		if s.Operation() == spec.OperationReplace {
			st.LastMaintainedMS = max(st.LastMaintainedMS, s.TimestampMS)
		}
	}
	st.Writers = writerStats(t.Metadata, now)
	return st
}

// StreamWindow is how far back the streaming policy counts a table's
// writer commits: its threshold is commits per hour.
const StreamWindow = time.Hour

// FlinkJobIDKey is the snapshot summary key naming the Flink job whose
// sink committed the snapshot.
const FlinkJobIDKey = "flink.job-id"

// WriterStats are the writer commits of a table's recent history.
type WriterStats struct {
	// Commits counts the snapshots committed in the StreamWindow before
	// the state was read whose operation is not replace: what writers
	// committed (append, overwrite, delete), not maintenance (compaction,
	// delete-file rewrites and manifest rewrites are replace snapshots),
	// so that maintain running every minute does not make a table look
	// streamed.
	Commits int
	// FlinkJobID is the flink.job-id of the newest of them that has one
	// ("": none came from a Flink sink).
	FlinkJobID string
}

// writerStats counts md's writer commits in the StreamWindow before now,
// over every branch.
func writerStats(md *spec.TableMetadata, now time.Time) WriterStats {
	var w WriterStats
	from, to := now.Add(-StreamWindow).UnixMilli(), now.UnixMilli()
	newest := int64(-1)
	for _, s := range md.Snapshots {
		if s.TimestampMS <= from || s.TimestampMS > to || s.Operation() == spec.OperationReplace {
			continue
		}
		w.Commits++
		if job := s.Summary[FlinkJobIDKey]; job != "" && s.TimestampMS > newest {
			w.FlinkJobID, newest = job, s.TimestampMS
		}
	}
	return w
}

// thresholds are health's thresholds with the policy's values.
func thresholds(th health.Thresholds, r *Resolved) health.Thresholds {
	th.TargetFileSize, th.MinInputFiles, th.DeleteRatio = r.TargetFileSize, r.MinInputFiles, r.DeleteRatio
	th.DeleteTargetFileSize, th.MinPositionDeleteFiles = r.DeleteTargetSize, r.PosDeleteMinFiles
	th.ManifestTargetSize, th.MinSmallManifests = r.ManifestTargetSize, r.MinSmallManifests
	th.MaxSnapshotAge, th.MinSnapshotsToKeep = r.MaxSnapshotAge, r.MinSnapshotsToKeep
	return th
}

// expirePolicy is expiry's policy under r at now.
func expirePolicy(r *Resolved, now time.Time) expire.Policy {
	older := now.Add(-r.MaxSnapshotAge)
	keep := r.MinSnapshotsToKeep
	return expire.Policy{Now: now, OlderThan: &older, RetainLast: &keep}
}

// measure counts what health's report does not: several DVs for one data
// file, and the bytes compaction would read.
func (st *TableState) measure(md *spec.TableMetadata, fs *table.FileSet) {
	if fs == nil {
		return
	}
	type key struct {
		spec int32
		text string
	}
	partOf := func(specID int32, values []any) key {
		ps, _ := md.SpecByID(int(specID))
		return key{specID, health.PartitionText(ps, values)}
	}
	h := &st.Health
	due := map[key]bool{}
	for _, p := range h.Partitions {
		k := key{int32(p.SpecID), p.Partition}
		if p.Data.SmallFiles >= h.Thresholds.MinInputFiles {
			due[k] = true
		}
		if st.FormatVersion >= 3 && p.Data.Records > 0 && p.Deletes.DeleteRatio >= h.Thresholds.DeleteRatio {
			st.DeleteBytes += p.Data.Bytes
		}
	}
	for _, e := range fs.Data {
		df := &e.Entry.DataFile
		if df.FileSizeInBytes < h.SmallFileBytes && due[partOf(df.SpecID, df.Partition)] {
			st.SmallBytes += df.FileSizeInBytes
		}
	}
	dvs := map[string]int{}
	for _, e := range fs.Deletes {
		df := &e.Entry.DataFile
		if table.IsDV(df) {
			dvs[*df.ReferencedDataFile]++
		}
	}
	for _, n := range dvs {
		if n > 1 {
			st.MultiDVFiles++
		}
	}
}

// measureV2 measures a v2 table's delete debt with the verbs' own rules:
// rewrite-position-deletes' plan, and the data files compaction's planner
// would rewrite for their delete ratio.
func (st *TableState) measureV2(md *spec.TableMetadata, fs *table.FileSet) error {
	pol := st.Policy
	rp, err := rewriteposdeletes.PlanFiles(md, fs, rewriteposdeletes.Options{TargetSize: pol.DeleteTargetSize, MinInputFiles: pol.PosDeleteMinFiles})
	if err != nil {
		return err
	}
	st.PositionDeletes = PosDeleteDebt{Files: rp.Rewritten, Partitions: len(rp.Groups), Dangling: len(rp.Dangling)}
	for _, g := range rp.Groups {
		st.PositionDeletes.Bytes += g.Bytes
	}
	ix := table.DeletesForTable(md, fs)
	for _, e := range fs.Data {
		df := &e.Entry.DataFile
		a := ix.For(e)
		if a.Empty() || df.RecordCount <= 0 {
			continue
		}
		var known int64
		for _, d := range a.PositionDeletes {
			if plan.FileScoped(&d.Entry.DataFile) != "" {
				known += d.Entry.DataFile.RecordCount
			}
		}
		if float64(min(known, df.RecordCount))/float64(df.RecordCount) >= pol.DeleteRatio {
			st.V2DeleteHeavy++
			st.DeleteBytes += df.FileSizeInBytes
		}
	}
	return nil
}

// ReadStates reads the state of every table in ids, concurrency at a time,
// in ids' order.
func ReadStates(ctx context.Context, cat metastore.Committer, ids []metastore.Ident, p *Policy, now time.Time, concurrency int) []TableState {
	out := make([]TableState, len(ids))
	sem := make(chan struct{}, max(concurrency, 1))
	done := make(chan struct{})
	for i, id := range ids {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; done <- struct{}{} }()
			out[i] = ReadState(ctx, cat, id, p, now)
		}()
	}
	for range ids {
		<-done
	}
	return out
}

// headID is main's head snapshot id, 0 when the table has none.
func headID(md *spec.TableMetadata) int64 {
	if sn := md.CurrentSnapshot(); sn != nil {
		return sn.SnapshotID
	}
	return 0
}
