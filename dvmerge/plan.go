package dvmerge

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/plan/where"
)

// Plan is what a run will merge: the partitions with data files whose
// deletes need merging, and the dangling deletes. It is computed from
// manifests alone (no delete file is read), so a dry run is cheap.
type Plan struct {
	TableUUID      string          `json:"table_uuid"`
	Location       string          `json:"location"`
	FormatVersion  int             `json:"format_version"`
	Branch         string          `json:"branch"`
	BaseSnapshotID *int64          `json:"base_snapshot_id"`
	Where          string          `json:"where,omitempty"`
	Repair         bool            `json:"repair_resurrected"`
	Equality       bool            `json:"equality"`
	Partitions     []PartitionPlan `json:"partitions"`
	Dangling       []string        `json:"dangling_deletes"`
	// Totals over Partitions.
	DataFiles           int `json:"data_files"`
	PositionDeleteFiles int `json:"position_delete_files"`
	DVs                 int `json:"deletion_vectors"`
	EqualityDeleteFiles int `json:"equality_delete_files"`

	head     *head
	dangling []table.FileKey
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

// MarshalJSON writes the plan as one JSON document.
func (p *Plan) MarshalJSON() ([]byte, error) {
	type plain Plan
	return json.Marshal((*plain)(p))
}

// PlanTable plans a merge of t's branch head.
func PlanTable(ctx context.Context, t *catalog.Table, opts Options) (*Plan, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	md := t.Metadata
	if md.FormatVersion < 3 {
		return nil, fmt.Errorf("%w: %s is format v%d; upgrade it to v3 first (icectl upgrade)", ErrNotV3, t.Ident, md.FormatVersion)
	}
	snap, err := table.BranchHead(md, opts.Branch)
	if err != nil {
		return nil, fmt.Errorf("plan dv merge of %s: %w", t.Ident, err)
	}
	h, err := loadHead(ctx, t, snap, opts.Equality)
	if err != nil {
		return nil, fmt.Errorf("plan dv merge of %s: %w", t.Ident, err)
	}
	p, err := planHead(h, opts)
	if err != nil {
		return nil, fmt.Errorf("plan dv merge of %s: %w", t.Ident, err)
	}
	return p, nil
}

// selector decides which partitions --where selects.
type selector struct {
	md      *spec.TableMetadata
	f       *where.Filter
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
	pf, ok := s.filters[specID]
	if !ok {
		ps, found := s.md.SpecByID(int(specID))
		if !found {
			return false, fmt.Errorf("where: the table has no partition spec %d", specID)
		}
		var err error
		if pf, err = s.f.ForSpec(ps, s.md.CurrentSchema()); err != nil {
			return false, fmt.Errorf("%w: where: %v", ErrInvalidOptions, err)
		}
		s.filters[specID] = pf
	}
	ok, err := pf.Match(tuple)
	if err != nil {
		return false, fmt.Errorf("where: %w", err)
	}
	return ok, nil
}

func planHead(h *head, opts Options) (*Plan, error) {
	md := h.t.Metadata
	sel, err := newSelector(md, opts.Where)
	if err != nil {
		return nil, err
	}
	p := &Plan{TableUUID: md.TableUUID, Location: md.Location, FormatVersion: md.FormatVersion, Branch: opts.Branch,
		Where: opts.Where, Repair: opts.RepairResurrected, Equality: opts.Equality, Partitions: []PartitionPlan{}, Dangling: []string{}, head: h}
	if p.Branch == "" {
		p.Branch = spec.MainBranch
	}
	if h.snap != nil {
		id := h.snap.SnapshotID
		p.BaseSnapshotID = &id
	}
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
		c := h.ix.Candidates(indexEntry(f, all[f.part].Tuple))
		if !needsWork(c, opts.Equality) || skip[f.part] {
			continue
		}
		pp := parts[f.part]
		if pp == nil {
			part := all[f.part]
			ok, err := sel.match(part.SpecID, part.Tuple)
			if err != nil {
				return nil, fmt.Errorf("data file %s: %w", path, err)
			}
			if !ok {
				skip[f.part] = true
				continue
			}
			ps, _ := md.SpecByID(int(part.SpecID))
			text := table.PartitionPath(ps, part.Tuple)
			id := fmt.Sprintf("spec %d %s", part.SpecID, text)
			if text == "" {
				id = fmt.Sprintf("spec %d (unpartitioned)", part.SpecID)
			}
			pp = &PartitionPlan{SpecID: part.SpecID, Partition: text, ID: id}
			parts[f.part] = pp
			seen[f.part] = map[table.FileKey]bool{}
		}
		pp.DataFiles = append(pp.DataFiles, path)
		add(pp, seen[f.part], &pp.DVs, c.DVs, &lastDVs)
		add(pp, seen[f.part], &pp.PositionDeleteFiles, c.PositionDeletes, &lastPos)
		if opts.Equality {
			add(pp, seen[f.part], &pp.EqualityDeleteFiles, c.EqualityDeletes, &lastEq)
		}
	}
	for _, pp := range parts {
		slices.Sort(pp.DataFiles)
		slices.Sort(pp.DVs)
		slices.Sort(pp.PositionDeleteFiles)
		slices.Sort(pp.EqualityDeleteFiles)
		p.DataFiles += len(pp.DataFiles)
		p.PositionDeleteFiles += len(pp.PositionDeleteFiles)
		p.DVs += len(pp.DVs)
		p.EqualityDeleteFiles += len(pp.EqualityDeleteFiles)
		p.Partitions = append(p.Partitions, *pp)
	}
	slices.SortFunc(p.Partitions, func(a, b PartitionPlan) int {
		return cmp.Or(cmp.Compare(a.SpecID, b.SpecID), cmp.Compare(a.Partition, b.Partition))
	})
	for k, e := range h.dels {
		if h.applies[k] {
			continue
		}
		global := len(e.partition) == 0
		if ps, ok := md.SpecByID(int(e.specID)); ok {
			global = ps.IsUnpartitioned()
		}
		if global && opts.Where != "" {
			continue // it spans partitions the filter may not select
		}
		ok, err := sel.match(e.specID, e.partition)
		if err != nil {
			return nil, fmt.Errorf("delete file %s: %w", k, err)
		}
		if ok {
			p.dangling = append(p.dangling, k)
		}
	}
	slices.SortFunc(p.dangling, compareKeys)
	for _, k := range p.dangling {
		p.Dangling = append(p.Dangling, k.String())
	}
	return p, nil
}
