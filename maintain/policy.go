package maintain

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/icectl/icectl/expire"
	"github.com/icectl/icectl/iceberg/metastore"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/shared/bytesize"
	"github.com/icectl/icectl/plan"
	"github.com/icectl/icectl/rewriteposdeletes"
)

// The verbs maintain runs, as reports and policy files name them, in the
// order it runs them on a table: merging deletes first makes the
// compaction after it read fewer delete files; compaction and the manifest
// rewrite come before expiry so that the snapshots they replace can go in
// a later run; orphan removal last, once everything else has committed.
// On a v2 table rewrite-position-deletes takes dv merge's place, but after
// compaction: compaction retires the position deletes of the data files it
// rewrites, so the rewrite after it merges only the ones left and drops the
// positions compaction made dangling, in the same run.
// On a v2 table with equality deletes, rewrite-equality-deletes converts
// them into position deletes before compaction, so that compaction (and
// every reader) no longer joins them; on v3, dv merge resolves them into
// DVs (dv merge --equality). On a streamed table the rewriting verbs run
// only when the streaming policy finds it due (DecideStream).
// Upgrade is never among them: a format change is an operator's decision.
const (
	VerbDVMerge                = "dv-merge"
	VerbRewriteEqualityDeletes = "rewrite-equality-deletes"
	VerbCompact                = "compact"
	VerbRewritePositionDeletes = "rewrite-position-deletes"
	VerbRewriteManifests       = "rewrite-manifests"
	VerbExpire                 = "expire"
	VerbOrphan                 = "orphan"
	// VerbRetention deletes the rows past the policy's retention
	// (deleterows), first: the verbs after it then see the table
	// without them. Off unless a layer sets retention's column and keep.
	VerbRetention = "retention"
	// VerbStatsColumns writes the column statistics (NDV sketches, icectl
	// stats columns) of the table's final snapshot: after every verb that
	// commits one, before orphan removal. Off unless a layer enables it.
	VerbStatsColumns = "stats-columns"
)

// Verbs are the verbs in the order a table's run takes them.
var Verbs = []string{VerbRetention, VerbDVMerge, VerbRewriteEqualityDeletes, VerbCompact, VerbRewritePositionDeletes, VerbRewriteManifests, VerbExpire, VerbStatsColumns, VerbOrphan}

// sectionStream is the policy section of the streaming policy: not a
// verb, the thresholds that gate the rewriting verbs on a streamed table.
const sectionStream = "stream"

// ErrPolicy marks a malformed policy file or a bad policy flag: a usage
// error, found before anything runs.
var ErrPolicy = errors.New("invalid policy")

// Table properties the policy reads (Iceberg's own names).
const (
	PropMaxSnapshotAgeMS   = expire.PropMaxSnapshotAgeMS
	PropMinSnapshotsToKeep = expire.PropMinSnapshotsToKeep
	PropTargetFileSize     = plan.PropertyTargetFileSize
	PropManifestTargetSize = table.PropManifestTargetSize
	PropGCEnabled          = expire.PropGCEnabled
	PropDeleteTargetSize   = rewriteposdeletes.PropTargetSize
)

// Built-in defaults: what maintain does with no configuration at all.
// docs/maintain.md says where each comes from.
const (
	DefaultMaxSnapshotAge     = 5 * 24 * time.Hour // S3 Tables 120 h, Glue 5 days, Java's history.expire default
	DefaultMinSnapshotsToKeep = 1                  // S3 Tables, Glue, Java, Amoro
	DefaultOrphanOlderThan    = 3 * 24 * time.Hour // Glue 3 days, Java's remove_orphan_files
	DefaultMinInputFiles      = plan.DefaultMinInputFiles
	DefaultDeleteRatio        = plan.DefaultDeleteRatioThreshold
	DefaultMinSmallManifests  = 10
	DefaultTargetFileSize     = plan.DefaultTargetFileSize
	DefaultManifestTarget     = table.DefaultManifestTargetSize
	DefaultDeleteTargetSize   = rewriteposdeletes.DefaultTargetSize
	DefaultPosDeleteMinFiles  = rewriteposdeletes.DefaultMinInputFiles
	// The streaming policy's (docs/maintain.md, "Tables a stream writes").
	DefaultStreamCommitsPerHour     = 6   // a writer committing every 10 minutes or more often
	DefaultStreamSmallFiles         = 12  // Amoro's self-optimizing.minor.trigger.file-count
	DefaultStreamEqualityDeleteRate = 0.1 // Amoro's self-optimizing.major.trigger.duplicate-ratio
)

// Settings are one layer of a policy: a field left nil is not set by the
// layer and falls through to the one below.
type Settings struct {
	Compact                CompactSettings
	DVMerge                Switch
	RewriteEqualityDeletes Switch
	RewritePositionDeletes PosDeleteSettings
	RewriteManifests       ManifestSettings
	Expire                 ExpireSettings
	Orphan                 OrphanSettings
	Retention              RetentionSettings
	Stream                 StreamSettings
	StatsColumns           StatsColumnsSettings
}

// Switch returns the field that turns verb on or off in s, nil for a
// verb maintain does not run.
func (s *Settings) Switch(verb string) **bool {
	switch verb {
	case VerbCompact:
		return &s.Compact.Enabled
	case VerbDVMerge:
		return &s.DVMerge.Enabled
	case VerbRewriteEqualityDeletes:
		return &s.RewriteEqualityDeletes.Enabled
	case VerbRewritePositionDeletes:
		return &s.RewritePositionDeletes.Enabled
	case VerbRewriteManifests:
		return &s.RewriteManifests.Enabled
	case VerbExpire:
		return &s.Expire.Enabled
	case VerbOrphan:
		return &s.Orphan.Enabled
	case VerbRetention:
		return &s.Retention.Enabled
	case VerbStatsColumns:
		return &s.StatsColumns.Enabled
	}
	return nil
}

// Switch turns a verb on or off.
type Switch struct{ Enabled *bool }

// CompactSettings are compaction's policy: when it is due and how it plans.
type CompactSettings struct {
	Enabled        *bool
	TargetFileSize *int64
	MinInputFiles  *int
	DeleteRatio    *float64
	// OutputSpec (compact.output-spec): "current" moves data of older
	// partition specs into the current one; "none" (the default) leaves
	// it, since moving all old data is the operator's decision.
	OutputSpec *string
}

// PosDeleteSettings are rewrite-position-deletes' policy (v2 tables).
type PosDeleteSettings struct {
	Enabled *bool
	// TargetSize is the delete files' target: smaller ones are merged.
	TargetSize *int64
	// MinInputFiles is how many small position-delete files a partition
	// needs to be rewritten.
	MinInputFiles *int
}

// ManifestSettings are rewrite-manifests' policy.
type ManifestSettings struct {
	Enabled           *bool
	TargetSize        *int64
	MinSmallManifests *int
}

// ExpireSettings are expiry's policy.
type ExpireSettings struct {
	Enabled            *bool
	MaxSnapshotAge     *time.Duration
	MinSnapshotsToKeep *int
	// CleanExpiredMetadata also removes the specs and schemas no
	// retained snapshot uses (expire --clean-expired-metadata); off
	// unless a layer turns it on.
	CleanExpiredMetadata *bool
}

// OrphanSettings are orphan removal's policy; off unless a layer enables it.
type OrphanSettings struct {
	Enabled   *bool
	OlderThan *time.Duration
}

// RetentionSettings are the retention policy: the rows whose Column (a
// timestamp or date) is older than Keep are deleted. Setting Column turns
// it on for the layer's tables; it is off unless a layer sets it.
type RetentionSettings struct {
	Enabled *bool
	Column  *string
	Keep    *time.Duration
}

// StreamSettings are the streaming policy (the policy file's stream:
// section): when a table counts as streamed, and when a streamed table's
// rewriting verbs are due.
type StreamSettings struct {
	// Enabled false plans every table by the verbs' own thresholds alone.
	Enabled *bool
	// CommitsPerHour: a table with at least this many writer commits
	// (snapshots other than replace) in the hour before the run is
	// streamed.
	CommitsPerHour *int
	// SmallFiles: a streamed table is due once its small data files,
	// delete files and small manifests reach this many.
	SmallFiles *int
	// EqualityDeleteRatio: a streamed table is due once its equality
	// delete keys reach this ratio of its data rows.
	EqualityDeleteRatio *float64
}

// StatsColumnsSettings are column statistics' policy: the columns to
// sketch (nil: not set by the layer; empty: every top-level column of a
// primitive type, as icectl stats columns without --columns).
type StatsColumnsSettings struct {
	Enabled *bool
	Columns *[]string
}

// Override is a layer that applies to some tables: a namespace (and the
// namespaces below it) or a pattern on the dotted table name.
type Override struct {
	// Match is the namespace ("sales", "sales.eu") or the table pattern
	// (path.Match syntax on "namespace.table": "sales.orders_*").
	Match    string
	Line     int
	Settings Settings
}

// Policy is every layer but the table's own properties, which come with
// each table. Precedence, highest first: Flags, Tables (later entries
// above earlier ones), Namespaces (deeper above shallower, then later
// above earlier), the table's properties, Defaults, the built-in defaults.
// gc.enabled=false is above all of them: no layer turns expiry or orphan
// removal back on for such a table, as Java refuses both.
type Policy struct {
	Defaults   Settings
	Namespaces []Override
	Tables     []Override
	Flags      Settings
}

// Source says which layer a resolved value came from.
type Source string

// Resolved is the policy of one table with every value filled in.
type Resolved struct {
	Enabled map[string]bool
	// Off says why a verb is off ("policy", "gc.enabled=false", ...).
	Off map[string]string

	TargetFileSize     int64
	MinInputFiles      int
	DeleteRatio        float64
	OutputSpec         string // compact --output-spec: "current" or "" (none)
	DeleteTargetSize   int64
	PosDeleteMinFiles  int
	ManifestTargetSize int64
	MinSmallManifests  int
	MaxSnapshotAge     time.Duration
	MinSnapshotsToKeep int
	// CleanExpiredMetadata: expiry also removes unused specs and schemas.
	CleanExpiredMetadata bool
	OrphanOlderThan      time.Duration
	// RetentionColumn and RetentionKeep: retention deletes the rows whose
	// column is older than keep.
	RetentionColumn string
	RetentionKeep   time.Duration
	// The streaming policy (StreamSettings).
	Stream                    bool
	StreamCommitsPerHour      int
	StreamSmallFiles          int
	StreamEqualityDeleteRatio float64
	// StatsColumns are the columns stats-columns sketches (empty: every
	// top-level column of a primitive type).
	StatsColumns []string
	// Sources name the layer of each setting that did not come from the
	// built-in defaults, keyed by the policy file's names.
	Sources map[string]Source
}

// Resolve computes the policy of table id with properties props. A
// malformed table property is an error naming it.
func (p *Policy) Resolve(id metastore.Ident, props map[string]string) (*Resolved, error) {
	r := &Resolved{
		Enabled: map[string]bool{VerbDVMerge: true, VerbRewriteEqualityDeletes: true, VerbCompact: true, VerbRewritePositionDeletes: true, VerbRewriteManifests: true,
			VerbExpire: true, VerbOrphan: false, VerbRetention: false, VerbStatsColumns: false},
		Off: map[string]string{VerbOrphan: "off unless the policy enables it (it lists storage)",
			VerbRetention: retentionOff, VerbStatsColumns: "off unless the policy enables it (it reads the columns' values)"},

		TargetFileSize: DefaultTargetFileSize, MinInputFiles: DefaultMinInputFiles, DeleteRatio: DefaultDeleteRatio,
		DeleteTargetSize: DefaultDeleteTargetSize, PosDeleteMinFiles: DefaultPosDeleteMinFiles,
		ManifestTargetSize: DefaultManifestTarget, MinSmallManifests: DefaultMinSmallManifests,
		MaxSnapshotAge: DefaultMaxSnapshotAge, MinSnapshotsToKeep: DefaultMinSnapshotsToKeep,
		OrphanOlderThan: DefaultOrphanOlderThan,
		Stream:          true, StreamCommitsPerHour: DefaultStreamCommitsPerHour, StreamSmallFiles: DefaultStreamSmallFiles,
		StreamEqualityDeleteRatio: DefaultStreamEqualityDeleteRate,
		Sources:                   map[string]Source{},
	}
	r.apply(p.Defaults, "policy defaults")
	if err := r.applyProps(props); err != nil {
		return nil, err
	}
	ns := strings.Join(id.Namespace, ".")
	nsLayers := slices.Clone(p.Namespaces)
	slices.SortStableFunc(nsLayers, func(a, b Override) int { return strings.Count(a.Match, ".") - strings.Count(b.Match, ".") })
	for _, o := range nsLayers {
		if ns == o.Match || strings.HasPrefix(ns, o.Match+".") {
			r.apply(o.Settings, Source("policy namespace "+o.Match))
		}
	}
	name := id.String()
	for _, o := range p.Tables {
		if ok, _ := path.Match(o.Match, name); ok {
			r.apply(o.Settings, Source("policy table "+o.Match))
		}
	}
	r.apply(p.Flags, "flag")
	if r.Enabled[VerbRetention] && (r.RetentionColumn == "" || r.RetentionKeep <= 0) {
		r.Enabled[VerbRetention] = false
		r.Off[VerbRetention] = retentionOff
	}
	if v, ok := props[PropGCEnabled]; ok {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("table property %s=%q: want true or false", PropGCEnabled, v)
		}
		if !b {
			for _, verb := range []string{VerbExpire, VerbOrphan} {
				r.Enabled[verb] = false
				r.Off[verb] = "gc.enabled=false"
			}
		}
	}
	return r, nil
}

// retentionOff says why retention is off when no layer gives it a column
// and an age.
const retentionOff = "off unless the policy sets retention: {column: COL, keep: AGE}"

// apply lays s over r.
func (r *Resolved) apply(s Settings, src Source) {
	sw := func(verb string, b *bool) {
		if b == nil {
			return
		}
		r.Enabled[verb] = *b
		r.Sources[verb+".enabled"] = src
		if *b {
			delete(r.Off, verb)
		} else {
			r.Off[verb] = "off by " + string(src)
		}
	}
	sw(VerbCompact, s.Compact.Enabled)
	sw(VerbDVMerge, s.DVMerge.Enabled)
	sw(VerbRewriteEqualityDeletes, s.RewriteEqualityDeletes.Enabled)
	sw(VerbRewritePositionDeletes, s.RewritePositionDeletes.Enabled)
	sw(VerbRewriteManifests, s.RewriteManifests.Enabled)
	sw(VerbExpire, s.Expire.Enabled)
	sw(VerbOrphan, s.Orphan.Enabled)
	if on := true; s.Retention.Column != nil && s.Retention.Enabled == nil {
		sw(VerbRetention, &on)
	}
	sw(VerbRetention, s.Retention.Enabled)
	sw(VerbStatsColumns, s.StatsColumns.Enabled)
	set(&r.StatsColumns, s.StatsColumns.Columns, r.Sources, "stats-columns.columns", src)
	set(&r.RetentionColumn, s.Retention.Column, r.Sources, "retention.column", src)
	set(&r.RetentionKeep, s.Retention.Keep, r.Sources, "retention.keep", src)
	set(&r.TargetFileSize, s.Compact.TargetFileSize, r.Sources, "compact.target-file-size", src)
	set(&r.MinInputFiles, s.Compact.MinInputFiles, r.Sources, "compact.min-input-files", src)
	set(&r.DeleteRatio, s.Compact.DeleteRatio, r.Sources, "compact.delete-ratio", src)
	set(&r.OutputSpec, s.Compact.OutputSpec, r.Sources, "compact.output-spec", src)
	set(&r.DeleteTargetSize, s.RewritePositionDeletes.TargetSize, r.Sources, "rewrite-position-deletes.target-size", src)
	set(&r.PosDeleteMinFiles, s.RewritePositionDeletes.MinInputFiles, r.Sources, "rewrite-position-deletes.min-input-files", src)
	set(&r.ManifestTargetSize, s.RewriteManifests.TargetSize, r.Sources, "rewrite-manifests.target-size", src)
	set(&r.MinSmallManifests, s.RewriteManifests.MinSmallManifests, r.Sources, "rewrite-manifests.min-small-manifests", src)
	set(&r.MaxSnapshotAge, s.Expire.MaxSnapshotAge, r.Sources, "expire.max-snapshot-age", src)
	set(&r.MinSnapshotsToKeep, s.Expire.MinSnapshotsToKeep, r.Sources, "expire.min-snapshots-to-keep", src)
	set(&r.CleanExpiredMetadata, s.Expire.CleanExpiredMetadata, r.Sources, "expire.clean-expired-metadata", src)
	set(&r.OrphanOlderThan, s.Orphan.OlderThan, r.Sources, "orphan.older-than", src)
	set(&r.Stream, s.Stream.Enabled, r.Sources, "stream.enabled", src)
	set(&r.StreamCommitsPerHour, s.Stream.CommitsPerHour, r.Sources, "stream.commits-per-hour", src)
	set(&r.StreamSmallFiles, s.Stream.SmallFiles, r.Sources, "stream.small-files", src)
	set(&r.StreamEqualityDeleteRatio, s.Stream.EqualityDeleteRatio, r.Sources, "stream.equality-delete-ratio", src)
}

func set[T any](dst *T, v *T, sources map[string]Source, key string, src Source) {
	if v != nil {
		*dst = *v
		sources[key] = src
	}
}

// applyProps lays the table's own Iceberg properties over r.
func (r *Resolved) applyProps(props map[string]string) error {
	num := func(key string) (*int64, error) {
		v, ok := props[key]
		if !ok || strings.TrimSpace(v) == "" {
			return nil, nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("table property %s=%q: want a positive integer (fix it with icectl table set-properties)", key, v)
		}
		return &n, nil
	}
	src := func(key string) Source { return Source("table property " + key) }
	var s Settings
	var err error
	if s.Compact.TargetFileSize, err = num(PropTargetFileSize); err != nil {
		return err
	}
	if s.RewriteManifests.TargetSize, err = num(PropManifestTargetSize); err != nil {
		return err
	}
	if s.RewritePositionDeletes.TargetSize, err = num(PropDeleteTargetSize); err != nil {
		return err
	}
	age, err := num(PropMaxSnapshotAgeMS)
	if err != nil {
		return err
	}
	keep, err := num(PropMinSnapshotsToKeep)
	if err != nil {
		return err
	}
	set(&r.TargetFileSize, s.Compact.TargetFileSize, r.Sources, "compact.target-file-size", src(PropTargetFileSize))
	set(&r.ManifestTargetSize, s.RewriteManifests.TargetSize, r.Sources, "rewrite-manifests.target-size", src(PropManifestTargetSize))
	set(&r.DeleteTargetSize, s.RewritePositionDeletes.TargetSize, r.Sources, "rewrite-position-deletes.target-size", src(PropDeleteTargetSize))
	if age != nil {
		d := time.Duration(min(*age, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond
		set(&r.MaxSnapshotAge, &d, r.Sources, "expire.max-snapshot-age", src(PropMaxSnapshotAgeMS))
	}
	if keep != nil {
		k := int(min(*keep, math.MaxInt32))
		set(&r.MinSnapshotsToKeep, &k, r.Sources, "expire.min-snapshots-to-keep", src(PropMinSnapshotsToKeep))
	}
	return nil
}

// ParsePolicy reads a policy file (YAML). name is the file's name for
// errors, which say the line: "policy.yaml:7: ...". An empty file is the
// built-in defaults.
func ParsePolicy(name string, data []byte) (*Policy, error) {
	p := &Policy{}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if err.Error() == "EOF" {
			return p, nil
		}
		return nil, fmt.Errorf("%w: %s: %s", ErrPolicy, name, strings.ReplaceAll(strings.TrimPrefix(err.Error(), "yaml: "), "\n", " "))
	}
	bad := func(n *yaml.Node, format string, args ...any) error {
		return fmt.Errorf("%w: %s:%d: %s", ErrPolicy, name, n.Line, fmt.Sprintf(format, args...))
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return p, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, bad(root, "want a mapping with defaults, namespaces and tables")
	}
	err := eachKey(root, bad, []string{"defaults", "namespaces", "tables"}, func(key string, k, v *yaml.Node) error {
		switch key {
		case "defaults":
			return parseSettings(v, bad, &p.Defaults)
		default:
			if v.Kind != yaml.MappingNode {
				return bad(v, "%s: want a mapping of %s to settings", key, map[string]string{"namespaces": "namespace", "tables": "table pattern"}[key])
			}
			for i := 0; i+1 < len(v.Content); i += 2 {
				mk, mv := v.Content[i], v.Content[i+1]
				o := Override{Match: mk.Value, Line: mk.Line}
				if key == "namespaces" {
					if err := metastore.ValidateNamespace(strings.Split(o.Match, ".")); err != nil {
						return bad(mk, "namespace %q: %v", o.Match, err)
					}
				} else if _, err := path.Match(o.Match, ""); err != nil || o.Match == "" {
					return bad(mk, "table pattern %q: want a name like db.orders or db.orders_* (path.Match syntax)", o.Match)
				}
				if err := parseSettings(mv, bad, &o.Settings); err != nil {
					return err
				}
				if key == "namespaces" {
					p.Namespaces = append(p.Namespaces, o)
				} else {
					p.Tables = append(p.Tables, o)
				}
			}
			return nil
		}
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

type badFunc func(n *yaml.Node, format string, args ...any) error

// eachKey calls fn for each key of mapping n, refusing keys not in known
// and keys given twice.
func eachKey(n *yaml.Node, bad badFunc, known []string, fn func(key string, k, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return bad(n, "want a mapping with keys %s", strings.Join(known, ", "))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(known, k.Value) {
			return bad(k, "unknown key %q (want %s)", k.Value, strings.Join(known, ", "))
		}
		if seen[k.Value] {
			return bad(k, "key %q given twice", k.Value)
		}
		seen[k.Value] = true
		if err := fn(k.Value, k, v); err != nil {
			return err
		}
	}
	return nil
}

// parseSettings reads one layer: a mapping of verb names to their
// settings.
func parseSettings(n *yaml.Node, bad badFunc, s *Settings) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	return eachKey(n, bad, slices.Concat(Verbs, []string{sectionStream}), func(verb string, _, v *yaml.Node) error {
		switch verb {
		case sectionStream:
			st := &s.Stream
			return eachKey(v, bad, []string{"enabled", "commits-per-hour", "small-files", "equality-delete-ratio"}, func(key string, _, v *yaml.Node) error {
				var err error
				switch key {
				case "enabled":
					st.Enabled, err = boolValue(v, bad)
				case "commits-per-hour":
					st.CommitsPerHour, err = intValue(v, bad, 1)
				case "small-files":
					st.SmallFiles, err = intValue(v, bad, 1)
				case "equality-delete-ratio":
					st.EqualityDeleteRatio, err = ratioValue(v, bad)
				}
				return err
			})
		case VerbCompact:
			c := &s.Compact
			return eachKey(v, bad, []string{"enabled", "target-file-size", "min-input-files", "delete-ratio", "output-spec"}, func(key string, _, v *yaml.Node) error {
				var err error
				switch key {
				case "enabled":
					c.Enabled, err = boolValue(v, bad)
				case "target-file-size":
					c.TargetFileSize, err = sizeValue(v, bad)
				case "min-input-files":
					c.MinInputFiles, err = intValue(v, bad, 1)
				case "delete-ratio":
					c.DeleteRatio, err = ratioValue(v, bad)
				case "output-spec":
					c.OutputSpec, err = value(v, bad, "current or none", func(s string) (string, bool) {
						switch s {
						case "current":
							return s, true
						case "none":
							return "", true
						}
						return "", false
					})
				}
				return err
			})
		case VerbRetention:
			rt := &s.Retention
			return eachKey(v, bad, []string{"enabled", "column", "keep"}, func(key string, _, v *yaml.Node) error {
				var err error
				switch key {
				case "enabled":
					rt.Enabled, err = boolValue(v, bad)
				case "column":
					if v.Kind != yaml.ScalarNode || strings.TrimSpace(v.Value) == "" {
						return bad(v, "retention.column: want a column name (a timestamp or date column)")
					}
					c := v.Value
					rt.Column = &c
				case "keep":
					rt.Keep, err = durationValue(v, bad, time.Hour)
				}
				return err
			})
		case VerbStatsColumns:
			sc := &s.StatsColumns
			return eachKey(v, bad, []string{"enabled", "columns"}, func(key string, _, v *yaml.Node) error {
				var err error
				switch key {
				case "enabled":
					sc.Enabled, err = boolValue(v, bad)
				case "columns":
					sc.Columns, err = namesValue(v, bad)
				}
				return err
			})
		case VerbDVMerge:
			return eachKey(v, bad, []string{"enabled"}, func(_ string, _, v *yaml.Node) (err error) {
				s.DVMerge.Enabled, err = boolValue(v, bad)
				return err
			})
		case VerbRewriteEqualityDeletes:
			return eachKey(v, bad, []string{"enabled"}, func(_ string, _, v *yaml.Node) (err error) {
				s.RewriteEqualityDeletes.Enabled, err = boolValue(v, bad)
				return err
			})
		case VerbRewritePositionDeletes:
			d := &s.RewritePositionDeletes
			return eachKey(v, bad, []string{"enabled", "target-size", "min-input-files"}, func(key string, _, v *yaml.Node) error {
				var err error
				switch key {
				case "enabled":
					d.Enabled, err = boolValue(v, bad)
				case "target-size":
					d.TargetSize, err = sizeValue(v, bad)
				case "min-input-files":
					d.MinInputFiles, err = intValue(v, bad, 1)
				}
				return err
			})
		case VerbRewriteManifests:
			m := &s.RewriteManifests
			return eachKey(v, bad, []string{"enabled", "target-size", "min-small-manifests"}, func(key string, _, v *yaml.Node) error {
				var err error
				switch key {
				case "enabled":
					m.Enabled, err = boolValue(v, bad)
				case "target-size":
					m.TargetSize, err = sizeValue(v, bad)
				case "min-small-manifests":
					m.MinSmallManifests, err = intValue(v, bad, 1)
				}
				return err
			})
		case VerbExpire:
			e := &s.Expire
			return eachKey(v, bad, []string{"enabled", "max-snapshot-age", "min-snapshots-to-keep", "clean-expired-metadata"}, func(key string, _, v *yaml.Node) error {
				var err error
				switch key {
				case "enabled":
					e.Enabled, err = boolValue(v, bad)
				case "max-snapshot-age":
					e.MaxSnapshotAge, err = durationValue(v, bad, time.Millisecond)
				case "min-snapshots-to-keep":
					e.MinSnapshotsToKeep, err = intValue(v, bad, 1)
				case "clean-expired-metadata":
					e.CleanExpiredMetadata, err = boolValue(v, bad)
				}
				return err
			})
		default: // VerbOrphan
			o := &s.Orphan
			return eachKey(v, bad, []string{"enabled", "older-than"}, func(key string, _, v *yaml.Node) error {
				var err error
				switch key {
				case "enabled":
					o.Enabled, err = boolValue(v, bad)
				case "older-than":
					// orphan's own floor: younger files may belong to
					// writes in flight.
					o.OlderThan, err = durationValue(v, bad, 24*time.Hour)
				}
				return err
			})
		}
	})
}

func scalar(v *yaml.Node, bad badFunc, want string) (string, error) {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return "", bad(v, "want %s", want)
	}
	return v.Value, nil
}

// value reads a scalar with parse, which says whether the text is a
// valid value; want says what is (for the error).
func value[T any](v *yaml.Node, bad badFunc, want string, parse func(string) (T, bool)) (*T, error) {
	s, err := scalar(v, bad, want)
	if err != nil {
		return nil, err
	}
	x, ok := parse(s)
	if !ok {
		return nil, bad(v, "%q: want %s", s, want)
	}
	return &x, nil
}

// namesValue reads a list of column names: [a, b] (an empty list is
// every column).
func namesValue(v *yaml.Node, bad badFunc) (*[]string, error) {
	if v.Kind != yaml.SequenceNode {
		return nil, bad(v, "want a list of column names, like [id, country]")
	}
	names := []string{}
	for _, n := range v.Content {
		if n.Kind != yaml.ScalarNode || n.Tag == "!!null" || strings.TrimSpace(n.Value) == "" {
			return nil, bad(n, "want a column name")
		}
		if slices.Contains(names, n.Value) {
			return nil, bad(n, "column %q given twice", n.Value)
		}
		names = append(names, n.Value)
	}
	return &names, nil
}

func boolValue(v *yaml.Node, bad badFunc) (*bool, error) {
	return value(v, bad, "true or false", func(s string) (bool, bool) {
		b, err := strconv.ParseBool(s)
		return b, err == nil && v.Tag == "!!bool"
	})
}

func sizeValue(v *yaml.Node, bad badFunc) (*int64, error) {
	return value(v, bad, "a positive size like 512MiB", func(s string) (int64, bool) {
		n, err := bytesize.Parse(s)
		return n, err == nil && n > 0
	})
}

func intValue(v *yaml.Node, bad badFunc, least int) (*int, error) {
	return value(v, bad, fmt.Sprintf("a whole number >= %d", least), func(s string) (int, bool) {
		n, err := strconv.Atoi(s)
		return n, err == nil && n >= least
	})
}

func ratioValue(v *yaml.Node, bad badFunc) (*float64, error) {
	return value(v, bad, "a ratio in (0, 1], like 0.3", func(s string) (float64, bool) {
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil && f > 0 && f <= 1
	})
}

func durationValue(v *yaml.Node, bad badFunc, least time.Duration) (*time.Duration, error) {
	return value(v, bad, fmt.Sprintf("a duration of at least %s, like 5d or 36h", durationText(least)), func(s string) (time.Duration, bool) {
		d, err := plan.ParseDuration(s)
		return d, err == nil && d >= least
	})
}
