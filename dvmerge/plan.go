package dvmerge

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/plan/where"
)

// Plan is what a run will merge: the partitions with data files whose
// deletes need merging, and the dangling deletes. It is computed from
// manifests alone (no delete file is read), so a dry run is cheap.
//
// A plan holds its partitions as counts: the live files behind them are
// spilled to a temporary file (unlinked; Close releases it) and read
// again, a partition at a time, when the plan is executed or written out
// (WriteJSON), so that planning and merging hold one partition's files at
// a time however many data files the table has.
type Plan struct {
	TableUUID      string `json:"table_uuid"`
	Location       string `json:"location"`
	FormatVersion  int    `json:"format_version"`
	Branch         string `json:"branch"`
	BaseSnapshotID *int64 `json:"base_snapshot_id"`
	Where          string `json:"where,omitempty"`
	Repair         bool   `json:"repair_resurrected"`
	Equality       bool   `json:"equality"`
	// PositionDeletes: equality deletes become position-delete files (v2).
	PositionDeletes bool               `json:"position_deletes,omitempty"`
	Partitions      []PartitionSummary `json:"-"`
	Dangling        []string           `json:"dangling_deletes"`
	// Totals over Partitions.
	DataFiles           int `json:"data_files"`
	PositionDeleteFiles int `json:"position_delete_files"`
	DVs                 int `json:"deletion_vectors"`
	EqualityDeleteFiles int `json:"equality_delete_files"`

	spill    *spilled
	sel      *selector
	opts     Options
	dangling []table.FileKey
	// eqApplies lists, with Equality, the live data files each
	// equality-delete file applies to: it is retired once all of them are
	// covered.
	eqApplies map[table.FileKey][]string
}

// PartitionSummary is a planned partition without its lists of files:
// what a plan holds of each.
type PartitionSummary struct {
	ID                  string
	SpecID              int32
	Partition           string
	DataFiles           int
	PositionDeleteFiles int
	DVs                 int
	EqualityDeleteFiles int
	Bytes               int64
}

// PartitionPlan is one partition's data files to merge. A partition is
// the unit of work and of commit: every delete file a partition's data
// files have in common belongs to that partition, so whether it is fully
// replaced is decided within it.
type PartitionPlan struct {
	ID                  string   `json:"id"`
	SpecID              int32    `json:"spec_id"`
	Partition           string   `json:"partition"`
	DataFiles           []string `json:"data_files"`
	PositionDeleteFiles []string `json:"position_delete_files"`
	DVs                 []string `json:"deletion_vectors"`
	EqualityDeleteFiles []string `json:"equality_delete_files,omitempty"`
	Bytes               int64    `json:"delete_bytes"`
}

func (pp *PartitionPlan) summary() PartitionSummary {
	return PartitionSummary{ID: pp.ID, SpecID: pp.SpecID, Partition: pp.Partition, DataFiles: len(pp.DataFiles),
		PositionDeleteFiles: len(pp.PositionDeleteFiles), DVs: len(pp.DVs), EqualityDeleteFiles: len(pp.EqualityDeleteFiles), Bytes: pp.Bytes}
}

// Close releases the plan's spill of live files. A closed plan can be
// neither executed nor written out.
func (p *Plan) Close() error {
	if p == nil {
		return nil
	}
	err := p.spill.Close()
	p.spill = nil
	return err
}

// each calls fn with every planned partition in plan order, as its files
// are read again from the spill, and the head of that partition (see
// spilled.each for keep).
func (p *Plan) each(ctx context.Context, keep bool, fn func(pp *PartitionPlan, h *head) error) error {
	if p.spill == nil {
		return errors.New("the plan was closed, or not made by PlanTable")
	}
	return p.spill.each(ctx, keep, func(h *head) error {
		pps, _, err := planPartitions(h, p.sel, p.opts)
		if err != nil {
			return err
		}
		for i := range pps {
			if err := fn(&pps[i], h); err != nil {
				return err
			}
		}
		return nil
	})
}

// WriteJSON writes the plan as one JSON document on one line (the CLI
// indents it): table names the table, as the first field; the plan's
// fields follow, and its partitions last, their lists of files read
// again from the spill as they are written.
func (p *Plan) WriteJSON(ctx context.Context, w io.Writer, table string) error {
	type fields Plan // the plan's fields, without their partitions (json:"-")
	line := func(v any) ([]byte, error) {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		if err := e.Encode(v); err != nil {
			return nil, err
		}
		return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
	}
	top, err := line(struct {
		Table string `json:"table"`
		*fields
	}{table, (*fields)(p)})
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	bw.Write(top[:len(top)-1])
	bw.WriteString(`,"partitions":[`)
	n := 0
	err = p.each(ctx, false, func(pp *PartitionPlan, _ *head) error {
		if n > 0 {
			bw.WriteByte(',')
		}
		n++
		b, err := line(pp)
		bw.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	if n != len(p.Partitions) {
		return fmt.Errorf("internal error: the plan has %d partitions, its spill %d", len(p.Partitions), n)
	}
	bw.WriteString("]}\n")
	return bw.Flush()
}

// PlanTable plans a merge of t's branch head. The plan must be closed.
func PlanTable(ctx context.Context, t *catalog.Table, opts Options) (*Plan, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	md := t.Metadata
	if err := opts.checkFormat(t.Ident, md.FormatVersion); err != nil {
		return nil, err
	}
	snap, err := table.BranchHead(md, opts.Branch)
	if err != nil {
		return nil, fmt.Errorf("plan %s of %s: %w", opts.verbName(), t.Ident, err)
	}
	sel, err := newSelector(md, opts.Where)
	if err != nil {
		return nil, err
	}
	sp, err := spillHead(ctx, t, snap, opts.scope(), opts.TempDir, opts.spillBudget)
	if err != nil {
		return nil, fmt.Errorf("plan %s of %s: %w", opts.verbName(), t.Ident, err)
	}
	p := &Plan{PositionDeletes: opts.PositionDeletes, TableUUID: md.TableUUID, Location: md.Location, FormatVersion: md.FormatVersion, Branch: opts.Branch,
		Where: opts.Where, Repair: opts.RepairResurrected, Equality: opts.Equality, Partitions: []PartitionSummary{}, Dangling: []string{},
		spill: sp, sel: sel, opts: opts, eqApplies: map[table.FileKey][]string{}}
	if p.Branch == "" {
		p.Branch = spec.MainBranch
	}
	if snap != nil {
		id := snap.SnapshotID
		p.BaseSnapshotID = &id
	}
	if err := p.fill(ctx); err != nil {
		p.Close()
		return nil, fmt.Errorf("plan %s of %s: %w", opts.verbName(), t.Ident, err)
	}
	return p, nil
}

// fill plans the partitions of the spill, a partition at a time, and the
// dangling deletes.
func (p *Plan) fill(ctx context.Context) error {
	sp := p.spill
	global := make(map[table.FileKey]bool, len(sp.global))
	for i := range sp.global {
		global[sp.global[i].Key()] = false
	}
	err := sp.each(ctx, false, func(h *head) error {
		pps, dangling, err := planPartitions(h, p.sel, p.opts)
		if err != nil {
			return err
		}
		for i := range pps {
			pp := pps[i].summary()
			p.Partitions = append(p.Partitions, pp)
			p.DataFiles += pp.DataFiles
			p.PositionDeleteFiles += pp.PositionDeleteFiles
			p.DVs += pp.DVs
			p.EqualityDeleteFiles += pp.EqualityDeleteFiles
		}
		p.dangling = append(p.dangling, dangling...)
		for k := range h.applies {
			if _, ok := global[k]; ok {
				global[k] = true
			}
		}
		if p.opts.Equality {
			for k, paths := range h.eqApplies {
				p.eqApplies[k] = append(p.eqApplies[k], paths...)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// A global equality delete applies to something if a spilled data file
	// took it, or an older data file was left out of the spill.
	for i := range sp.global {
		e := &sp.global[i]
		k := e.Key()
		if global[k] || (sp.unspilled && sp.minSeq < e.DataSequenceNumber()) {
			continue
		}
		if p.Where != "" {
			continue // it spans partitions the filter may not select
		}
		p.dangling = append(p.dangling, k)
	}
	slices.SortFunc(p.dangling, compareKeys)
	for _, k := range p.dangling {
		p.Dangling = append(p.Dangling, k.String())
	}
	return nil
}

// selector decides which partitions --where selects. A run's merges are
// planned from the spill while a commit's validation plans the fresh
// table: mu guards the filters compiled per spec.
type selector struct {
	md      *spec.TableMetadata
	f       *where.Filter
	mu      sync.Mutex
	filters map[int32]*where.PartitionFilter
}

func newSelector(md *spec.TableMetadata, text string) (*selector, error) {
	s := &selector{md: md, filters: map[int32]*where.PartitionFilter{}}
	if text == "" {
		return s, nil
	}
	if md.CurrentSchema() == nil {
		return nil, invalidf("the table has no current schema for --where")
	}
	f, err := where.Compile(text, md.CurrentSchema())
	if err != nil {
		return nil, invalidf("where: %v", err)
	}
	s.f = f
	return s, nil
}

func (s *selector) match(specID int32, tuple []any) (bool, error) {
	if s.f == nil {
		return true, nil
	}
	s.mu.Lock()
	pf, ok := s.filters[specID]
	s.mu.Unlock()
	if !ok {
		ps, found := s.md.SpecByID(int(specID))
		if !found {
			return false, fmt.Errorf("where: the table has no partition spec %d", specID)
		}
		var err error
		if pf, err = s.f.ForSpec(ps, s.md.CurrentSchema()); err != nil {
			return false, fmt.Errorf("%w: where: %v", ErrInvalidOptions, err)
		}
		s.mu.Lock()
		s.filters[specID] = pf
		s.mu.Unlock()
	}
	ok, err := pf.Match(tuple)
	if err != nil {
		return false, fmt.Errorf("where: %w", err)
	}
	return ok, nil
}

// planPartitions plans the partitions of h that --where selects and
// whose data files have deletes to merge, in plan order, and lists the
// delete files of h that apply to nothing (sorted).
func planPartitions(h *head, sel *selector, opts Options) ([]PartitionPlan, []table.FileKey, error) {
	md := h.t.Metadata
	parts := map[uint32]*PartitionPlan{}
	skip := map[uint32]bool{} // partitions --where leaves out
	seen := map[uint32]map[table.FileKey]bool{}
	all := h.parts.All()
	// A partition's data files share its partition-wide delete lists: a
	// list just added for the previous file is not looked at again.
	var lastDVs, lastPos, lastEq *table.FileEntry
	add := func(pp *PartitionPlan, seen map[table.FileKey]bool, list *[]string, es []table.FileEntry, last **table.FileEntry) {
		if len(es) == 0 || &es[0] == *last {
			return
		}
		*last = &es[0]
		for _, d := range es {
			if k := d.Key(); !seen[k] {
				seen[k] = true
				*list = append(*list, k.String())
				pp.Bytes += d.Entry.DataFile.FileSizeInBytes
			}
		}
	}
	for i := range h.files {
		f := &h.files[i]
		path := f.path
		c := f.c
		if !needsWork(c, opts.scope()) || skip[f.part] {
			continue
		}
		pp := parts[f.part]
		if pp == nil {
			part := all[f.part]
			ok, err := sel.match(part.SpecID, part.Tuple)
			if err != nil {
				return nil, nil, fmt.Errorf("data file %s: %w", path, err)
			}
			if !ok {
				skip[f.part] = true
				continue
			}
			ps, _ := md.SpecByID(int(part.SpecID))
			text := table.PartitionPathOf(md.CurrentSchema(), ps, part.Tuple)
			id := fmt.Sprintf("spec %d %s", part.SpecID, text)
			if text == "" {
				id = fmt.Sprintf("spec %d (unpartitioned)", part.SpecID)
			}
			pp = &PartitionPlan{SpecID: part.SpecID, Partition: text, ID: id}
			parts[f.part] = pp
			seen[f.part] = map[table.FileKey]bool{}
		}
		pp.DataFiles = append(pp.DataFiles, path)
		if !opts.PositionDeletes { // converting equality deletes leaves the others be
			add(pp, seen[f.part], &pp.DVs, c.DVs, &lastDVs)
			add(pp, seen[f.part], &pp.PositionDeleteFiles, c.PositionDeletes, &lastPos)
		}
		if opts.Equality {
			add(pp, seen[f.part], &pp.EqualityDeleteFiles, c.EqualityDeletes, &lastEq)
		}
	}
	out := make([]PartitionPlan, 0, len(parts))
	for _, pp := range parts {
		slices.Sort(pp.DataFiles)
		slices.Sort(pp.DVs)
		slices.Sort(pp.PositionDeleteFiles)
		slices.Sort(pp.EqualityDeleteFiles)
		out = append(out, *pp)
	}
	slices.SortFunc(out, func(a, b PartitionPlan) int {
		return cmp.Or(cmp.Compare(a.SpecID, b.SpecID), cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.ID, b.ID))
	})
	var dangling []table.FileKey
	for k, e := range h.dels {
		if h.applies[k] {
			continue
		}
		if opts.Where != "" && table.Unpartitioned(md, e.specID, e.partition) {
			continue // it spans partitions the filter may not select
		}
		ok, err := sel.match(e.specID, e.partition)
		if err != nil {
			return nil, nil, fmt.Errorf("delete file %s: %w", k, err)
		}
		if ok {
			dangling = append(dangling, k)
		}
	}
	slices.SortFunc(dangling, compareKeys)
	return out, dangling, nil
}
