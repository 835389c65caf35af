package health

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/plan/where"
)

// KindPartitionValues is the finding of data files whose identity
// partition source column disagrees with their partition value.
const KindPartitionValues = "partition-values-mismatch"

// PartitionValues sums up the live data files whose column metrics show
// an identity partition source column stored otherwise than the file's
// partition value (all null, as icectl's compaction of Hive-migrated
// tables left them before issue 36 was fixed, or other values). Readers
// take the partition value, but engines prune files on their metrics
// first, so filtered reads miss those rows. Judged from the metrics
// alone: `icectl verify partitions` also reads files whose metrics do not
// say.
type PartitionValues struct {
	DataFiles int   `json:"data_files"`
	Rows      int64 `json:"rows"`
	// Partitions are the damaged partitions, sorted by spec id then
	// partition text.
	Partitions []DamagedPartition `json:"partitions"`
	// Where is the --where expression of the recommended compaction, which
	// selects the damaged partitions by their identity values; "" when no
	// expression can select them (the whole table is rewritten).
	Where string `json:"where"`
}

// DamagedPartition is one partition with damaged files: how many, their
// rows, the fields that disagree and the first file's problem.
type DamagedPartition struct {
	SpecID    int      `json:"spec_id"`
	Partition string   `json:"partition"`
	DataFiles int      `json:"data_files"`
	Rows      int64    `json:"rows"`
	Fields    []string `json:"fields"`
	First     string   `json:"first"`
	tuple     []any
}

// partitionValues judges the identity partition fields of in's live data
// files by their metrics; a file it cannot judge (its spec or source
// column is gone from the metadata) is a note.
func partitionValues(in Input, notes *[]string) PartitionValues {
	out := PartitionValues{Partitions: []DamagedPartition{}}
	if in.Files == nil {
		return out
	}
	md := in.Metadata
	type key struct {
		spec int32
		text string
	}
	parts := map[key]*DamagedPartition{}
	pc := table.NewPartitionChecker(md)
	for _, e := range in.Files.Data {
		df := &e.Entry.DataFile
		ps, _, err := pc.Metrics(df)
		if err != nil {
			*notes = append(*notes, fmt.Sprintf("table %s: partition values not judged: %v", in.Table, err))
			continue
		}
		if len(ps) == 0 {
			continue
		}
		spec, _ := md.SpecByID(int(df.SpecID))
		k := key{df.SpecID, PartitionText(spec, df.Partition)}
		p := parts[k]
		if p == nil {
			p = &DamagedPartition{SpecID: int(df.SpecID), Partition: k.text, Fields: []string{},
				First: fmt.Sprintf("%s: %s", df.FilePath, ps[0].Detail), tuple: df.Partition}
			parts[k] = p
		}
		p.DataFiles++
		p.Rows += df.RecordCount
		for _, x := range ps {
			if !slices.Contains(p.Fields, x.Field) {
				p.Fields = append(p.Fields, x.Field)
			}
		}
		out.DataFiles++
		out.Rows += df.RecordCount
	}
	for _, p := range parts {
		out.Partitions = append(out.Partitions, *p)
	}
	slices.SortFunc(out.Partitions, func(a, b DamagedPartition) int {
		return cmp.Or(cmp.Compare(a.SpecID, b.SpecID), cmp.Compare(a.Partition, b.Partition))
	})
	if len(out.Partitions) > 0 {
		out.Where = RepairWhere(md, out.Partitions)
	}
	return out
}

// RepairWhere returns a --where expression that selects the damaged
// partitions for compaction: for each, the identity fields of its own
// spec with their values (col = value, or col IS NULL). The compaction
// judges a predicate on a file's own identity columns by its partition
// alone (where.Filter.MatchMetricsIn), never by the column metrics,
// whose all-null counts would rule the damaged files out, so each damaged
// partition is selected exactly. Files of other specs are selected by
// their partitions and metrics as any --where selects them: those that
// may hold rows with the values. It is "" when a partition has no
// identity field with a value --where can spell, or the expression does
// not compile: only a rewrite of the whole table then reaches the files.
func RepairWhere(md *spec.TableMetadata, parts []DamagedPartition) string {
	schema := md.CurrentSchema()
	if schema == nil {
		return ""
	}
	var terms []string
	for _, p := range parts {
		ps, ok := md.SpecByID(p.SpecID)
		if !ok {
			return ""
		}
		var and []string
		for i, f := range ps.Fields {
			if f.Transform.Kind != spec.TransformIdentity || len(f.SourceIDs) > 1 || i >= len(p.tuple) {
				continue
			}
			name, t, ok := columnName(schema, f.SourceID)
			if !ok {
				continue
			}
			term := name + " IS NULL"
			if v := p.tuple[i]; v != nil {
				lit, ok := whereLiteral(t, v)
				if !ok {
					continue
				}
				term = name + " = " + lit
			}
			if !slices.Contains(and, term) {
				and = append(and, term)
			}
		}
		if len(and) == 0 {
			return ""
		}
		term := strings.Join(and, " AND ")
		if len(and) > 1 && len(parts) > 1 {
			term = "(" + term + ")"
		}
		if !slices.Contains(terms, term) {
			terms = append(terms, term)
		}
	}
	expr := strings.Join(terms, " OR ")
	if _, err := where.Compile(expr, schema); err != nil {
		return ""
	}
	return expr
}

// columnName is the dotted name of field id in schema (through structs),
// quoted for --where when a part is not a plain identifier, and its type.
func columnName(schema *spec.Schema, id int) (string, spec.Type, bool) {
	var walk func(fields []spec.NestedField) ([]string, spec.Type, bool)
	walk = func(fields []spec.NestedField) ([]string, spec.Type, bool) {
		for _, f := range fields {
			if f.ID == id {
				return []string{f.Name}, f.Type, true
			}
			if st, ok := f.Type.(*spec.StructType); ok {
				if names, t, ok := walk(st.Fields); ok {
					return append([]string{f.Name}, names...), t, true
				}
			}
		}
		return nil, nil, false
	}
	names, t, ok := walk(schema.Fields)
	if !ok {
		return "", nil, false
	}
	name := strings.Join(names, ".")
	for _, n := range names {
		if !plainIdent(n) {
			if strings.Contains(name, "`") {
				return "", nil, false
			}
			return "`" + name + "`", t, true
		}
	}
	return name, t, true
}

func plainIdent(s string) bool {
	if s == "" {
		return false
	}
	switch strings.ToUpper(s) {
	case "AND", "OR", "NOT", "IN", "IS", "NULL", "TRUE", "FALSE", "DATE", "TIMESTAMP":
		return false
	}
	for i, r := range s {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9' {
			continue
		}
		return false
	}
	return true
}

// whereLiteral spells partition value v of a column of type t as a --where
// literal; false for types it has none for that compares exactly
// (floating point, binary, times and timestamps).
func whereLiteral(t spec.Type, v any) (string, bool) {
	switch t.(type) {
	case spec.IntType, spec.LongType:
		switch x := v.(type) {
		case int32:
			return strconv.FormatInt(int64(x), 10), true
		case int64:
			return strconv.FormatInt(x, 10), true
		}
	case spec.BooleanType:
		if b, ok := v.(bool); ok {
			return strings.ToUpper(strconv.FormatBool(b)), true
		}
	case spec.StringType:
		if s, ok := v.(string); ok {
			return "'" + strings.ReplaceAll(s, "'", "''") + "'", true
		}
	case spec.DateType:
		if d, ok := v.(int32); ok {
			return "DATE '" + time.Unix(0, 0).UTC().AddDate(0, 0, int(d)).Format("2006-01-02") + "'", true
		}
	case spec.DecimalType:
		if d, ok := v.(spec.Decimal); ok && d.Unscaled != nil {
			return d.String(), true
		}
	}
	return "", false
}

// repairCommand is the compaction that rewrites the damaged partitions
// whereExpr selects (RepairWhere; "": the whole table): with --rewrite-all,
// as their files may be of any size, and the rewrite takes each row's
// value of an identity partition column from the partition (spec rule 1).
func repairCommand(t, whereExpr string) Command {
	c := Command{Verb: []string{"compact"}, Args: []string{t, "--rewrite-all"}}
	if whereExpr != "" {
		c.Args = append(c.Args, "--where", whereExpr)
	}
	return c
}

// PartitionRepair is the command that repairs the data files of problems
// (verify partitions) on table t: the compaction of their partitions.
func PartitionRepair(md *spec.TableMetadata, t string, problems []table.PartitionValueProblem) Command {
	type key struct {
		spec int32
		text string
	}
	seen := map[key]bool{}
	var parts []DamagedPartition
	for _, p := range problems {
		ps, _ := md.SpecByID(int(p.SpecID))
		k := key{p.SpecID, PartitionText(ps, p.Partition)}
		if seen[k] {
			continue
		}
		seen[k] = true
		parts = append(parts, DamagedPartition{SpecID: int(p.SpecID), Partition: k.text, tuple: p.Partition})
	}
	slices.SortFunc(parts, func(a, b DamagedPartition) int {
		return cmp.Or(cmp.Compare(a.SpecID, b.SpecID), cmp.Compare(a.Partition, b.Partition))
	})
	return repairCommand(t, RepairWhere(md, parts))
}
