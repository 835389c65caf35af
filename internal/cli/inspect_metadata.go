package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/shared/bytesize"
)

// InspectMetadataOptions are the inputs of `icectl inspect metadata`.
type InspectMetadataOptions struct {
	f    *Factory
	S3   S3Options
	File string
}

// NewCmdInspectMetadata returns `icectl inspect metadata`. runF replaces the
// run function in tests; nil runs the command.
func NewCmdInspectMetadata(f *Factory, runF func(*InspectMetadataOptions) error) *cobra.Command {
	opts := &InspectMetadataOptions{f: f}
	cmd := &cobra.Command{
		Use:   "metadata FILE",
		Short: "Print a table metadata file (JSON, plain or gzip)",
		Long: `Print a table metadata file (plain or gzip JSON), validated as icectl
reads it: schemas, partition specs, sort orders, snapshots with their
summaries, refs, properties, logs and statistics files.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runInspectMetadata(cmd.Context(), opts)
		},
	}
	addS3Flags(cmd, &opts.S3)
	return cmd
}

func runInspectMetadata(ctx context.Context, opts *InspectMetadataOptions) error {
	file, err := openFile(ctx, opts.f, opts.S3, opts.File)
	if err != nil {
		return err
	}
	defer file.Close()
	if err := requireKind(file, opts.File, kindJSON); err != nil {
		return err
	}
	data, err := readAll(file, opts.File)
	if err != nil {
		return err
	}
	m, err := spec.ParseMetadata(data)
	if err != nil {
		return fmt.Errorf("%s: %w", opts.File, err)
	}
	v := newMetadataView(opts.File, m)
	if opts.f.Output == outputJSON {
		return writeJSON(opts.f.Out, v)
	}
	return writeMetadataText(opts.f.Out, v)
}

// The JSON form of table metadata: snake_case keys, timestamps both as
// stored (epoch milliseconds, *_ms) and as RFC 3339.

type metadataView struct {
	File                string                     `json:"file"`
	FormatVersion       int                        `json:"format_version"`
	TableUUID           string                     `json:"table_uuid"`
	Location            string                     `json:"location"`
	LastSequenceNumber  int64                      `json:"last_sequence_number"`
	LastUpdatedMS       int64                      `json:"last_updated_ms"`
	LastUpdated         string                     `json:"last_updated"`
	LastColumnID        int                        `json:"last_column_id"`
	NextRowID           *int64                     `json:"next_row_id"`
	CurrentSchemaID     int                        `json:"current_schema_id"`
	Schemas             []schemaView               `json:"schemas"`
	DefaultSpecID       int                        `json:"default_spec_id"`
	LastPartitionID     int                        `json:"last_partition_id"`
	PartitionSpecs      []specView                 `json:"partition_specs"`
	DefaultSortOrderID  int                        `json:"default_sort_order_id"`
	SortOrders          []sortOrderView            `json:"sort_orders"`
	CurrentSnapshotID   *int64                     `json:"current_snapshot_id"`
	Snapshots           []snapshotView             `json:"snapshots"`
	Refs                map[string]refView         `json:"refs"`
	Properties          map[string]string          `json:"properties"`
	SnapshotLog         []snapshotLogView          `json:"snapshot_log"`
	MetadataLog         []metadataLogView          `json:"metadata_log"`
	Statistics          []statisticsView           `json:"statistics"`
	PartitionStatistics []partitionStatsView       `json:"partition_statistics"`
	EncryptionKeys      []encryptionKeyView        `json:"encryption_keys"`
	Extra               map[string]json.RawMessage `json:"extra,omitempty"`
}

type schemaView struct {
	SchemaID           int         `json:"schema_id"`
	IdentifierFieldIDs []int       `json:"identifier_field_ids"`
	Fields             []fieldView `json:"fields"`
}

// fieldView is one field of a schema, nested fields flattened in
// depth-first order with dotted paths ("point.x", "tags.element").
type fieldView struct {
	ID             int             `json:"id"`
	Path           string          `json:"path"`
	Type           string          `json:"type"`
	Required       bool            `json:"required"`
	Doc            string          `json:"doc,omitempty"`
	InitialDefault json.RawMessage `json:"initial_default,omitempty"`
	WriteDefault   json.RawMessage `json:"write_default,omitempty"`
	depth          int
}

type specView struct {
	SpecID int                  `json:"spec_id"`
	Fields []partitionFieldView `json:"fields"`
}

type sortOrderView struct {
	OrderID int             `json:"order_id"`
	Fields  []sortFieldView `json:"fields"`
}

type sortFieldView struct {
	SourceID  int    `json:"source_id"`
	Transform string `json:"transform"`
	Direction string `json:"direction"`
	NullOrder string `json:"null_order"`
}

type snapshotView struct {
	SnapshotID       int64             `json:"snapshot_id"`
	ParentSnapshotID *int64            `json:"parent_snapshot_id"`
	SequenceNumber   int64             `json:"sequence_number"`
	TimestampMS      int64             `json:"timestamp_ms"`
	Timestamp        string            `json:"timestamp"`
	Operation        string            `json:"operation"`
	ManifestList     string            `json:"manifest_list,omitempty"`
	Manifests        []string          `json:"manifests,omitempty"`
	SchemaID         *int              `json:"schema_id"`
	FirstRowID       *int64            `json:"first_row_id,omitempty"`
	AddedRows        *int64            `json:"added_rows,omitempty"`
	Summary          map[string]string `json:"summary"`
}

type refView struct {
	SnapshotID         int64  `json:"snapshot_id"`
	Type               string `json:"type"`
	MinSnapshotsToKeep *int   `json:"min_snapshots_to_keep,omitempty"`
	MaxSnapshotAgeMS   *int64 `json:"max_snapshot_age_ms,omitempty"`
	MaxRefAgeMS        *int64 `json:"max_ref_age_ms,omitempty"`
}

type snapshotLogView struct {
	TimestampMS int64  `json:"timestamp_ms"`
	Timestamp   string `json:"timestamp"`
	SnapshotID  int64  `json:"snapshot_id"`
}

type metadataLogView struct {
	TimestampMS  int64  `json:"timestamp_ms"`
	Timestamp    string `json:"timestamp"`
	MetadataFile string `json:"metadata_file"`
}

type statisticsView struct {
	SnapshotID            int64           `json:"snapshot_id"`
	StatisticsPath        string          `json:"statistics_path"`
	FileSizeInBytes       int64           `json:"file_size_in_bytes"`
	FileFooterSizeInBytes int64           `json:"file_footer_size_in_bytes"`
	BlobMetadata          []statsBlobView `json:"blob_metadata"`
}

type statsBlobView struct {
	Type           string            `json:"type"`
	SnapshotID     int64             `json:"snapshot_id"`
	SequenceNumber int64             `json:"sequence_number"`
	Fields         []int             `json:"fields"`
	Properties     map[string]string `json:"properties"`
}

type partitionStatsView struct {
	SnapshotID      int64  `json:"snapshot_id"`
	StatisticsPath  string `json:"statistics_path"`
	FileSizeInBytes int64  `json:"file_size_in_bytes"`
}

// encryptionKeyView leaves out the key material, even though it is
// encrypted: inspect output gets pasted into tickets.
type encryptionKeyView struct {
	KeyID         string  `json:"key_id"`
	EncryptedByID *string `json:"encrypted_by_id"`
}

func newMetadataView(path string, m *spec.TableMetadata) metadataView {
	v := metadataView{
		File:                path,
		FormatVersion:       m.FormatVersion,
		TableUUID:           m.TableUUID,
		Location:            m.Location,
		LastSequenceNumber:  m.LastSequenceNumber,
		LastUpdatedMS:       m.LastUpdatedMS,
		LastUpdated:         rfc3339Millis(m.LastUpdatedMS),
		LastColumnID:        m.LastColumnID,
		NextRowID:           m.NextRowID,
		CurrentSchemaID:     m.CurrentSchemaID,
		Schemas:             []schemaView{},
		DefaultSpecID:       m.DefaultSpecID,
		LastPartitionID:     m.LastPartitionID,
		PartitionSpecs:      []specView{},
		DefaultSortOrderID:  m.DefaultSortOrderID,
		SortOrders:          []sortOrderView{},
		CurrentSnapshotID:   m.CurrentSnapshotID,
		Snapshots:           []snapshotView{},
		Refs:                map[string]refView{},
		Properties:          nonNilMap(m.Properties),
		SnapshotLog:         []snapshotLogView{},
		MetadataLog:         []metadataLogView{},
		Statistics:          []statisticsView{},
		PartitionStatistics: []partitionStatsView{},
		EncryptionKeys:      []encryptionKeyView{},
		Extra:               m.Extra,
	}
	for _, s := range m.Schemas {
		sv := schemaView{SchemaID: s.ID, IdentifierFieldIDs: s.IdentifierFieldIDs, Fields: []fieldView{}}
		if sv.IdentifierFieldIDs == nil {
			sv.IdentifierFieldIDs = []int{}
		}
		sv.Fields = flattenFields(sv.Fields, "", 0, s.Fields)
		v.Schemas = append(v.Schemas, sv)
	}
	for _, ps := range m.PartitionSpecs {
		sv := specView{SpecID: ps.ID, Fields: []partitionFieldView{}}
		for _, f := range ps.Fields {
			sv.Fields = append(sv.Fields, partitionFieldView{FieldID: f.FieldID, Name: f.Name, Transform: f.Transform.String(), SourceID: f.SourceID})
		}
		v.PartitionSpecs = append(v.PartitionSpecs, sv)
	}
	for _, o := range m.SortOrders {
		ov := sortOrderView{OrderID: o.OrderID, Fields: []sortFieldView{}}
		for _, f := range o.Fields {
			ov.Fields = append(ov.Fields, sortFieldView{SourceID: f.SourceID, Transform: f.Transform.String(), Direction: f.Direction, NullOrder: f.NullOrder})
		}
		v.SortOrders = append(v.SortOrders, ov)
	}
	for _, s := range m.Snapshots {
		v.Snapshots = append(v.Snapshots, snapshotView{
			SnapshotID:       s.SnapshotID,
			ParentSnapshotID: s.ParentSnapshotID,
			SequenceNumber:   s.SequenceNumber,
			TimestampMS:      s.TimestampMS,
			Timestamp:        rfc3339Millis(s.TimestampMS),
			Operation:        s.Operation(),
			ManifestList:     s.ManifestList,
			Manifests:        s.Manifests,
			SchemaID:         s.SchemaID,
			FirstRowID:       s.FirstRowID,
			AddedRows:        s.AddedRows,
			Summary:          nonNilMap(s.Summary),
		})
	}
	for name, r := range m.Refs {
		v.Refs[name] = refView{SnapshotID: r.SnapshotID, Type: r.Type, MinSnapshotsToKeep: r.MinSnapshotsToKeep, MaxSnapshotAgeMS: r.MaxSnapshotAgeMS, MaxRefAgeMS: r.MaxRefAgeMS}
	}
	for _, e := range m.SnapshotLog {
		v.SnapshotLog = append(v.SnapshotLog, snapshotLogView{TimestampMS: e.TimestampMS, Timestamp: rfc3339Millis(e.TimestampMS), SnapshotID: e.SnapshotID})
	}
	for _, e := range m.MetadataLog {
		v.MetadataLog = append(v.MetadataLog, metadataLogView{TimestampMS: e.TimestampMS, Timestamp: rfc3339Millis(e.TimestampMS), MetadataFile: e.MetadataFile})
	}
	for _, s := range m.Statistics {
		sv := statisticsView{SnapshotID: s.SnapshotID, StatisticsPath: s.StatisticsPath, FileSizeInBytes: s.FileSizeInBytes, FileFooterSizeInBytes: s.FileFooterSizeInBytes, BlobMetadata: []statsBlobView{}}
		for _, b := range s.BlobMetadata {
			fields := b.Fields
			if fields == nil {
				fields = []int{}
			}
			sv.BlobMetadata = append(sv.BlobMetadata, statsBlobView{Type: b.Type, SnapshotID: b.SnapshotID, SequenceNumber: b.SequenceNumber, Fields: fields, Properties: nonNilMap(b.Properties)})
		}
		v.Statistics = append(v.Statistics, sv)
	}
	for _, p := range m.PartitionStatistics {
		v.PartitionStatistics = append(v.PartitionStatistics, partitionStatsView{SnapshotID: p.SnapshotID, StatisticsPath: p.StatisticsPath, FileSizeInBytes: p.FileSizeInBytes})
	}
	for _, k := range m.EncryptionKeys {
		v.EncryptionKeys = append(v.EncryptionKeys, encryptionKeyView{KeyID: k.KeyID, EncryptedByID: k.EncryptedByID})
	}
	return v
}

// flattenFields appends fields and everything nested in them, depth first.
func flattenFields(out []fieldView, prefix string, depth int, fields []spec.NestedField) []fieldView {
	for _, f := range fields {
		out = flattenField(out, prefix, depth, f)
	}
	return out
}

func flattenField(out []fieldView, prefix string, depth int, f spec.NestedField) []fieldView {
	path := prefix + f.Name
	fv := fieldView{ID: f.ID, Path: path, Required: f.Required, Doc: f.Doc, InitialDefault: f.InitialDefault, WriteDefault: f.WriteDefault, depth: depth}
	switch t := f.Type.(type) {
	case *spec.StructType:
		fv.Type = "struct"
		out = append(out, fv)
		return flattenFields(out, path+".", depth+1, t.Fields)
	case *spec.ListType:
		fv.Type = "list"
		out = append(out, fv)
		return flattenField(out, path+".", depth+1, spec.NestedField{ID: t.ElementID, Name: "element", Type: t.Element, Required: t.ElementRequired})
	case *spec.MapType:
		fv.Type = "map"
		out = append(out, fv)
		out = flattenField(out, path+".", depth+1, spec.NestedField{ID: t.KeyID, Name: "key", Type: t.Key, Required: true})
		return flattenField(out, path+".", depth+1, spec.NestedField{ID: t.ValueID, Name: "value", Type: t.Value, Required: t.ValueRequired})
	case nil:
		fv.Type = "?"
	default:
		fv.Type = t.String()
	}
	return append(out, fv)
}

func writeMetadataText(w io.Writer, v metadataView) error {
	t := newTable(w)
	t.row("file", v.File)
	t.row("format version", v.FormatVersion)
	t.row("table uuid", v.TableUUID)
	t.row("location", v.Location)
	t.row("last updated", millisText(v.LastUpdatedMS))
	t.row("last sequence number", v.LastSequenceNumber)
	t.row("last column id", v.LastColumnID)
	t.row("last partition id", v.LastPartitionID)
	if v.NextRowID != nil {
		t.row("next row id", *v.NextRowID)
	}
	t.row("current snapshot id", optInt64(v.CurrentSnapshotID))
	writeProperties(t, "", v.Properties)
	if err := t.flush(); err != nil {
		return err
	}

	for _, s := range v.Schemas {
		cur := ""
		if s.SchemaID == v.CurrentSchemaID {
			cur = " (current)"
		}
		ids := ""
		if len(s.IdentifierFieldIDs) > 0 {
			ids = fmt.Sprintf(", identifier fields %v", s.IdentifierFieldIDs)
		}
		printf(w, "\nschema %d%s%s\n", s.SchemaID, cur, ids)
		t := newTable(w)
		t.row("  id", "name", "type", "required", "doc")
		for _, f := range s.Fields {
			name := strings.Repeat("  ", f.depth) + f.Path[strings.LastIndex(f.Path, ".")+1:]
			req := "optional"
			if f.Required {
				req = "required"
			}
			doc := f.Doc
			if f.InitialDefault != nil || f.WriteDefault != nil {
				doc = strings.TrimSpace(fmt.Sprintf("%s (initial-default %s, write-default %s)", doc, rawOrDash(f.InitialDefault), rawOrDash(f.WriteDefault)))
			}
			t.row(fmt.Sprintf("  %d", f.ID), name, f.Type, req, doc)
		}
		if err := t.flush(); err != nil {
			return err
		}
	}

	for _, s := range v.PartitionSpecs {
		def := ""
		if s.SpecID == v.DefaultSpecID {
			def = " (default)"
		}
		fmt.Fprintf(w, "\npartition spec %d%s\n", s.SpecID, def)
		if len(s.Fields) == 0 {
			fmt.Fprintln(w, "  unpartitioned")
			continue
		}
		t := newTable(w)
		t.row("  field id", "name", "transform", "source id")
		for _, f := range s.Fields {
			t.row(fmt.Sprintf("  %d", f.FieldID), f.Name, f.Transform, f.SourceID)
		}
		if err := t.flush(); err != nil {
			return err
		}
	}

	if err := writeSortOrdersText(w, v.SortOrders, v.DefaultSortOrderID); err != nil {
		return err
	}

	for _, s := range v.Snapshots {
		cur := ""
		if v.CurrentSnapshotID != nil && *v.CurrentSnapshotID == s.SnapshotID {
			cur = " (current)"
		}
		printf(w, "\nsnapshot %d%s %s\n", s.SnapshotID, cur, s.Operation)
		t := newTable(w)
		t.row("  parent", optInt64(s.ParentSnapshotID))
		t.row("  sequence number", s.SequenceNumber)
		t.row("  timestamp", millisText(s.TimestampMS))
		if s.SchemaID != nil {
			t.row("  schema id", *s.SchemaID)
		}
		if s.ManifestList != "" {
			t.row("  manifest list", s.ManifestList)
		}
		for _, m := range s.Manifests {
			t.row("  manifest", m)
		}
		if s.FirstRowID != nil {
			t.row("  first row id", *s.FirstRowID)
		}
		if s.AddedRows != nil {
			t.row("  added rows", *s.AddedRows)
		}
		t.row("  summary", "")
		for _, k := range sortedKeys(s.Summary) {
			t.row("    "+k, s.Summary[k])
		}
		if err := t.flush(); err != nil {
			return err
		}
	}

	if len(v.Snapshots) == 0 {
		fmt.Fprintln(w, "\nno snapshots")
	}
	fmt.Fprintln(w)
	t = newTable(w)
	t.row("refs", len(v.Refs))
	for _, name := range sortedKeys(v.Refs) {
		r := v.Refs[name]
		extra := ""
		if r.MinSnapshotsToKeep != nil {
			extra += fmt.Sprintf(" min-snapshots-to-keep=%d", *r.MinSnapshotsToKeep)
		}
		if r.MaxSnapshotAgeMS != nil {
			extra += fmt.Sprintf(" max-snapshot-age-ms=%d", *r.MaxSnapshotAgeMS)
		}
		if r.MaxRefAgeMS != nil {
			extra += fmt.Sprintf(" max-ref-age-ms=%d", *r.MaxRefAgeMS)
		}
		t.row("  "+name, r.Type, r.SnapshotID, strings.TrimSpace(extra))
	}
	t.row("snapshot log", len(v.SnapshotLog))
	for _, e := range v.SnapshotLog {
		t.row("  "+millisText(e.TimestampMS), e.SnapshotID)
	}
	t.row("metadata log", len(v.MetadataLog))
	for _, e := range v.MetadataLog {
		t.row("  "+millisText(e.TimestampMS), e.MetadataFile)
	}
	t.row("statistics", len(v.Statistics))
	for _, s := range v.Statistics {
		t.row("  snapshot "+fmt.Sprint(s.SnapshotID), s.StatisticsPath, bytesize.Format(s.FileSizeInBytes), "footer "+bytesize.Format(s.FileFooterSizeInBytes))
		for _, b := range s.BlobMetadata {
			t.row("    "+b.Type, fmt.Sprintf("fields %v", b.Fields), fmt.Sprintf("snapshot %d", b.SnapshotID), fmt.Sprintf("sequence number %d", b.SequenceNumber))
		}
	}
	t.row("partition statistics", len(v.PartitionStatistics))
	for _, p := range v.PartitionStatistics {
		t.row("  snapshot "+fmt.Sprint(p.SnapshotID), p.StatisticsPath, bytesize.Format(p.FileSizeInBytes))
	}
	if len(v.EncryptionKeys) > 0 {
		t.row("encryption keys", len(v.EncryptionKeys))
		for _, k := range v.EncryptionKeys {
			by := "-"
			if k.EncryptedByID != nil {
				by = *k.EncryptedByID
			}
			t.row("  "+k.KeyID, "encrypted by "+by)
		}
	}
	if len(v.Extra) > 0 {
		t.row("other keys", strings.Join(sortedKeys(v.Extra), ", "))
	}
	return t.flush()
}

func rawOrDash(b json.RawMessage) string {
	if b == nil {
		return "-"
	}
	return string(b)
}

// writeSortOrdersText prints sort orders for `inspect metadata` and
// `table show`, marking the default one.
func writeSortOrdersText(w io.Writer, orders []sortOrderView, defaultID int) error {
	for _, o := range orders {
		def := ""
		if o.OrderID == defaultID {
			def = " (default)"
		}
		fmt.Fprintf(w, "\nsort order %d%s\n", o.OrderID, def)
		if len(o.Fields) == 0 {
			fmt.Fprintln(w, "  unsorted")
			continue
		}
		t := newTable(w)
		for _, f := range o.Fields {
			t.row(fmt.Sprintf("  %s(%d)", f.Transform, f.SourceID), f.Direction, f.NullOrder)
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	return nil
}
