package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/shared/bytesize"
	"github.com/icectl/icectl/plan/where"
)

// Defaults, as in Iceberg Java's SizeBasedFileRewritePlanner and
// BinPackRewriteFilePlanner.
const (
	DefaultTargetFileSize       int64   = 512 << 20 // write.target-file-size-bytes default
	MinFileSizeRatio            float64 = 0.75
	MaxFileSizeRatio            float64 = 1.80
	DefaultMinInputFiles                = 5
	DefaultDeleteRatioThreshold float64 = 0.3
	DefaultMaxFileGroupSize     int64   = 100 << 30
	// DeleteFileThresholdOff is Java's Integer.MAX_VALUE default.
	DeleteFileThresholdOff = math.MaxInt32

	// PropertyTargetFileSize is the table property that sets the default
	// target file size.
	PropertyTargetFileSize = "write.target-file-size-bytes"
)

// JobOrder is the order groups are rewritten in (Spark's rewrite-job-order).
type JobOrder string

const (
	JobOrderNone      JobOrder = "none"
	JobOrderBytesAsc  JobOrder = "bytes-asc"
	JobOrderBytesDesc JobOrder = "bytes-desc"
	JobOrderFilesAsc  JobOrder = "files-asc"
	JobOrderFilesDesc JobOrder = "files-desc"
)

// ParseJobOrder accepts Java's names, case-insensitively; "" is none.
func ParseJobOrder(s string) (JobOrder, error) {
	switch o := JobOrder(strings.ToLower(strings.TrimSpace(s))); o {
	case "":
		return JobOrderNone, nil
	case JobOrderNone, JobOrderBytesAsc, JobOrderBytesDesc, JobOrderFilesAsc, JobOrderFilesDesc:
		return o, nil
	}
	return "", fmt.Errorf("invalid job order %q: want none, bytes-asc, bytes-desc, files-asc or files-desc", s)
}

// Options are the user's choices, with Spark's names. A zero or nil field
// takes the default.
type Options struct {
	// TargetFileSize (target-file-size-bytes): default the table property
	// write.target-file-size-bytes, else 512 MiB.
	TargetFileSize int64
	// MinFileSize (min-file-size-bytes): default 0.75 x target. Zero is a
	// valid value (no file is too small), hence the pointer.
	MinFileSize *int64
	// MaxFileSize (max-file-size-bytes): default 1.8 x target.
	MaxFileSize int64
	// MinInputFiles (min-input-files): default 5.
	MinInputFiles int
	// DeleteFileThreshold (delete-file-threshold): default off. Zero makes
	// every file a candidate, as in Java.
	DeleteFileThreshold *int
	// DeleteRatioThreshold (delete-ratio-threshold): default 0.3; (0, 1].
	DeleteRatioThreshold float64
	// RewriteAll (rewrite-all): every file is a candidate and every group is
	// kept.
	RewriteAll bool
	// MaxFileGroupSize (max-file-group-size-bytes): default 100 GiB.
	MaxFileGroupSize int64
	// MaxFileGroupInputFiles (max-file-group-input-files): default no limit.
	MaxFileGroupInputFiles int64
	// MaxFilesToRewrite (max-files-to-rewrite): default no limit; must be
	// positive when set.
	MaxFilesToRewrite *int
	// MaxBytesToRewrite caps the input bytes of the kept groups, taken
	// in job order; a group that does not fit is left for a later run
	// (whole: a byte cap has no file boundary to cut at). Default no
	// limit; must be positive when set. icectl maintain's
	// --max-rewrite-bytes, as Flink's max-rewrite-bytes.
	MaxBytesToRewrite *int64
	// JobOrder (rewrite-job-order): default none.
	JobOrder string
	// Where selects the files that may hold matching rows, by partition
	// and column metrics (see package where); "" selects all.
	Where string
	// OutputSpec (output-spec-id): the partition spec the rewritten files
	// are written in: "" keeps each group in its own spec, "current" is
	// the table's default spec, else a spec id. Files of other specs are
	// then candidates and their rows are written to the output spec's
	// partitions.
	OutputSpec string
	// RemoveDanglingDeletes (remove-dangling-deletes): the plan's commits
	// also remove every delete file that applies to no live data file
	// after them (table.DataReach), table-wide, as Java's
	// RemoveDanglingDeletesSparkAction does after a rewrite. nil = true:
	// icectl's default, where Java's is false.
	RemoveDanglingDeletes *bool
}

// Resolved are validated options with every default filled in.
type Resolved struct {
	TargetFileSize         int64    `json:"target_file_size_bytes"`
	MinFileSize            int64    `json:"min_file_size_bytes"`
	MaxFileSize            int64    `json:"max_file_size_bytes"`
	WriteMaxFileSize       int64    `json:"write_max_file_size_bytes"`
	MinInputFiles          int      `json:"min_input_files"`
	DeleteFileThreshold    int      `json:"delete_file_threshold"`
	DeleteRatioThreshold   float64  `json:"delete_ratio_threshold"`
	RewriteAll             bool     `json:"rewrite_all"`
	MaxFileGroupSize       int64    `json:"max_file_group_size_bytes"`
	MaxFileGroupInputFiles int64    `json:"max_file_group_input_files"`
	MaxFilesToRewrite      *int     `json:"max_files_to_rewrite"`
	MaxBytesToRewrite      *int64   `json:"max_bytes_to_rewrite,omitempty"`
	JobOrder               JobOrder `json:"job_order"`
	Where                  string   `json:"where"`
	RemoveDanglingDeletes  bool     `json:"remove_dangling_deletes"`
	// OutputSpecID is the spec every output is written in; nil: each
	// group's own.
	OutputSpecID *int `json:"output_spec_id,omitempty"`

	filter *where.Filter
}

// Resolve fills in defaults from md's properties and validates, with the
// same rules as Java: target > 0, 0 <= min < target < max, min-input-files
// > 0, delete-file-threshold >= 0, 0 < delete-ratio-threshold <= 1,
// max-file-group-size > 0, max-files-to-rewrite > 0. The where expression is
// parsed and bound to md's current schema here, so errors show up before any
// file is read.
func (o Options) Resolve(md *spec.TableMetadata) (Resolved, error) {
	var r Resolved
	target := o.TargetFileSize
	if target < 0 {
		return r, fmt.Errorf("target file size is %d but must be > 0", target)
	}
	if target == 0 {
		target = DefaultTargetFileSize
		if md != nil {
			if v, ok := md.Properties[PropertyTargetFileSize]; ok {
				n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				if err != nil || n <= 0 {
					return r, fmt.Errorf("table property %s is %q but must be a positive number of bytes", PropertyTargetFileSize, v)
				}
				target = n
			}
		}
	}
	r.TargetFileSize = target
	r.MinFileSize = int64(float64(target) * MinFileSizeRatio)
	if o.MinFileSize != nil {
		r.MinFileSize = *o.MinFileSize
	}
	r.MaxFileSize = int64(float64(target) * MaxFileSizeRatio)
	if o.MaxFileSize != 0 {
		r.MaxFileSize = o.MaxFileSize
	}
	if r.MinFileSize < 0 {
		return r, fmt.Errorf("min file size is %d but must be >= 0", r.MinFileSize)
	}
	if r.MaxFileSize <= 0 {
		return r, fmt.Errorf("max file size is %d but must be > 0", r.MaxFileSize)
	}
	if target <= r.MinFileSize {
		return r, fmt.Errorf("target file size %s must be greater than min file size %s: every new file would be below the min threshold",
			bytesize.Format(target), bytesize.Format(r.MinFileSize))
	}
	if target >= r.MaxFileSize {
		return r, fmt.Errorf("target file size %s must be less than max file size %s: every new file would be above the max threshold",
			bytesize.Format(target), bytesize.Format(r.MaxFileSize))
	}
	r.WriteMaxFileSize = int64(float64(target) + float64(r.MaxFileSize-target)*0.5)

	r.MinInputFiles = DefaultMinInputFiles
	if o.MinInputFiles != 0 {
		r.MinInputFiles = o.MinInputFiles
	}
	if r.MinInputFiles <= 0 {
		return r, fmt.Errorf("min input files is %d but must be > 0", r.MinInputFiles)
	}
	r.DeleteFileThreshold = DeleteFileThresholdOff
	if o.DeleteFileThreshold != nil {
		r.DeleteFileThreshold = *o.DeleteFileThreshold
	}
	if r.DeleteFileThreshold < 0 {
		return r, fmt.Errorf("delete file threshold is %d but must be >= 0", r.DeleteFileThreshold)
	}
	r.DeleteRatioThreshold = DefaultDeleteRatioThreshold
	if o.DeleteRatioThreshold != 0 {
		r.DeleteRatioThreshold = o.DeleteRatioThreshold
	}
	if !(r.DeleteRatioThreshold > 0 && r.DeleteRatioThreshold <= 1) {
		return r, fmt.Errorf("delete ratio threshold is %v but must be > 0 and <= 1", r.DeleteRatioThreshold)
	}
	r.RewriteAll = o.RewriteAll
	r.RemoveDanglingDeletes = o.RemoveDanglingDeletes == nil || *o.RemoveDanglingDeletes
	r.MaxFileGroupSize = DefaultMaxFileGroupSize
	if o.MaxFileGroupSize != 0 {
		r.MaxFileGroupSize = o.MaxFileGroupSize
	}
	if r.MaxFileGroupSize <= 0 {
		return r, fmt.Errorf("max file group size is %d but must be > 0", r.MaxFileGroupSize)
	}
	r.MaxFileGroupInputFiles = math.MaxInt64
	if o.MaxFileGroupInputFiles != 0 {
		r.MaxFileGroupInputFiles = o.MaxFileGroupInputFiles
	}
	if r.MaxFileGroupInputFiles <= 0 {
		return r, fmt.Errorf("max file group input files is %d but must be > 0", r.MaxFileGroupInputFiles)
	}
	if o.MaxFilesToRewrite != nil {
		if *o.MaxFilesToRewrite <= 0 {
			return r, fmt.Errorf("max files to rewrite is %d but must be a positive integer", *o.MaxFilesToRewrite)
		}
		n := *o.MaxFilesToRewrite
		r.MaxFilesToRewrite = &n
	}
	if o.MaxBytesToRewrite != nil {
		if *o.MaxBytesToRewrite <= 0 {
			return r, fmt.Errorf("max bytes to rewrite is %d but must be positive", *o.MaxBytesToRewrite)
		}
		n := *o.MaxBytesToRewrite
		r.MaxBytesToRewrite = &n
	}
	jo, err := ParseJobOrder(o.JobOrder)
	if err != nil {
		return r, err
	}
	r.JobOrder = jo
	if r.OutputSpecID, err = resolveOutputSpec(o.OutputSpec, md); err != nil {
		return r, err
	}
	r.Where = strings.TrimSpace(o.Where)
	if r.Where != "" {
		if md == nil || md.CurrentSchema() == nil {
			return r, fmt.Errorf("where %q: the table has no current schema to resolve columns against", r.Where)
		}
		f, err := where.Compile(r.Where, md.CurrentSchema())
		if err != nil {
			return r, fmt.Errorf("where: %w", err)
		}
		r.filter = f
	}
	return r, nil
}

// Filter is the compiled where expression; nil when there is none or the
// options were not resolved against a table (as in a plan read back from
// JSON).
func (r Resolved) Filter() *where.Filter { return r.filter }

// resolveOutputSpec resolves the output-spec option: "" (none), "current"
// or the id of one of md's specs.
func resolveOutputSpec(s string, md *spec.TableMetadata) (*int, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return nil, nil
	}
	if md == nil {
		return nil, fmt.Errorf("output spec %q: no table metadata", s)
	}
	id := md.DefaultSpecID
	if s != "current" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("invalid output spec %q: want current or a partition spec id", s)
		}
		id = n
	}
	ps, ok := md.SpecByID(id)
	if !ok {
		return nil, fmt.Errorf("output spec %d is not a partition spec of the table: want current or one of its spec ids", id)
	}
	if schema := md.CurrentSchema(); schema != nil {
		for _, f := range ps.Fields {
			if f.Transform.Kind == spec.TransformUnknown {
				return nil, fmt.Errorf("output spec %d has transform %s, which icectl cannot evaluate", id, f.Transform)
			}
			if len(f.SourceIDs) > 1 {
				return nil, fmt.Errorf("output spec %d has a multi-argument transform on field %s, which icectl cannot evaluate", id, f.Name)
			}
			if _, ok := schema.FindField(f.SourceID); !ok && f.Transform.Kind != spec.TransformVoid {
				return nil, fmt.Errorf("output spec %d partitions by field %d, which the current schema does not have", id, f.SourceID)
			}
		}
	}
	return &id, nil
}
