package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/shared/bytesize"
)

// InspectManifestOptions are the inputs of `icectl inspect manifest`.
type InspectManifestOptions struct {
	f    *Factory
	S3   S3Options
	File string
}

// NewCmdInspectManifest returns `icectl inspect manifest`. runF replaces the
// run function in tests; nil runs the command.
func NewCmdInspectManifest(f *Factory, runF func(*InspectManifestOptions) error) *cobra.Command {
	opts := &InspectManifestOptions{f: f}
	cmd := &cobra.Command{
		Use:   "manifest FILE",
		Short: "Print a manifest list or a manifest, entry by entry",
		Long: `Print a manifest list or a manifest (told apart by the Avro schema): its
header, then every entry as it is read, values as stored (nothing inherited
from the manifest list).

With --output json the document is {"file", "kind", "header", "entries"},
one entry per line, so long manifests stream.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runInspectManifest(cmd.Context(), opts)
		},
	}
	addS3Flags(cmd, &opts.S3)
	return cmd
}

func runInspectManifest(ctx context.Context, opts *InspectManifestOptions) error {
	file, err := openFile(ctx, opts.f, opts.S3, opts.File)
	if err != nil {
		return err
	}
	defer file.Close()
	if err := requireKind(file, opts.File, kindAvro); err != nil {
		return err
	}
	kind, err := avroKind(io.NewSectionReader(file, 0, file.Size()))
	if err != nil {
		return fmt.Errorf("%s: %w", opts.File, err)
	}
	r := io.NewSectionReader(file, 0, file.Size())
	var out entryPrinter
	if opts.f.Output == outputJSON {
		out = &jsonEntries{w: newJSONIndenter(opts.f.Out)}
	} else {
		out = &textEntries{w: opts.f.Out}
	}
	if kind == kindManifestList {
		err = printManifestList(ctx, opts.File, r, out)
	} else {
		err = printManifest(ctx, opts.File, r, out)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", opts.File, err)
	}
	return nil
}

func printManifestList(ctx context.Context, path string, r io.Reader, out entryPrinter) error {
	lr, err := manifest.OpenManifestList(r)
	if err != nil {
		return err
	}
	h := lr.Header()
	err = out.header(path, kindManifestList, listHeaderView{
		FormatVersion:    h.FormatVersion,
		SnapshotID:       h.SnapshotID,
		ParentSnapshotID: h.ParentSnapshotID,
		SequenceNumber:   h.SequenceNumber,
		FirstRowID:       h.FirstRowID,
		Metadata:         nonNilMap(h.Metadata),
	})
	if err != nil {
		return err
	}
	for i := 0; ; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		mf, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return out.end()
		}
		if err != nil {
			return fmt.Errorf("entry %d: %w", i, err)
		}
		if err := out.entry(i, newManifestFileView(mf)); err != nil {
			return err
		}
	}
}

func printManifest(ctx context.Context, path string, r io.Reader, out entryPrinter) error {
	mr, err := manifest.OpenManifest(r)
	if err != nil {
		return err
	}
	m := mr.Meta()
	hv := manifestHeaderView{
		FormatVersion:   m.FormatVersion,
		Content:         manifestContentName(m.Content),
		PartitionSpecID: m.Spec.ID,
		PartitionSpec:   make([]partitionFieldView, 0, len(m.Spec.Fields)),
		Metadata:        nonNilMap(m.Metadata),
	}
	for _, f := range m.Spec.Fields {
		hv.PartitionSpec = append(hv.PartitionSpec, partitionFieldView{
			FieldID: f.FieldID, Name: f.Name, Transform: f.Transform.String(), SourceID: f.SourceID,
		})
	}
	if m.Schema != nil {
		id := m.Schema.ID
		hv.SchemaID = &id
	}
	// The schema and spec JSON are already in metadata; text output shows
	// them interpreted instead of repeating the raw JSON.
	if err := out.header(path, kindManifest, hv); err != nil {
		return err
	}
	for i := 0; ; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		e, err := mr.Next()
		if errors.Is(err, io.EOF) {
			return out.end()
		}
		if err != nil {
			return fmt.Errorf("entry %d: %w", i, err)
		}
		if err := out.entry(i, newEntryView(e, m.Schema, m.Spec)); err != nil {
			return err
		}
	}
}

// Views: the JSON form (snake_case keys) of headers and entries.

type listHeaderView struct {
	FormatVersion    int               `json:"format_version"`
	SnapshotID       *int64            `json:"snapshot_id"`
	ParentSnapshotID *int64            `json:"parent_snapshot_id"`
	SequenceNumber   *int64            `json:"sequence_number"`
	FirstRowID       *int64            `json:"first_row_id"`
	Metadata         map[string]string `json:"metadata"`
}

type manifestHeaderView struct {
	FormatVersion   int                  `json:"format_version"`
	Content         string               `json:"content"`
	SchemaID        *int                 `json:"schema_id"`
	PartitionSpecID int                  `json:"partition_spec_id"`
	PartitionSpec   []partitionFieldView `json:"partition_spec"`
	Metadata        map[string]string    `json:"metadata"`
}

type partitionFieldView struct {
	FieldID   int    `json:"field_id"`
	Name      string `json:"name"`
	Transform string `json:"transform"`
	SourceID  int    `json:"source_id"`
}

type manifestFileView struct {
	ManifestPath       string             `json:"manifest_path"`
	ManifestLength     int64              `json:"manifest_length"`
	PartitionSpecID    int32              `json:"partition_spec_id"`
	Content            string             `json:"content"`
	SequenceNumber     int64              `json:"sequence_number"`
	MinSequenceNumber  int64              `json:"min_sequence_number"`
	AddedSnapshotID    int64              `json:"added_snapshot_id"`
	AddedFilesCount    *int32             `json:"added_files_count"`
	ExistingFilesCount *int32             `json:"existing_files_count"`
	DeletedFilesCount  *int32             `json:"deleted_files_count"`
	AddedRowsCount     *int64             `json:"added_rows_count"`
	ExistingRowsCount  *int64             `json:"existing_rows_count"`
	DeletedRowsCount   *int64             `json:"deleted_rows_count"`
	Partitions         []fieldSummaryView `json:"partitions"`
	KeyMetadata        *string            `json:"key_metadata,omitempty"`
	FirstRowID         *int64             `json:"first_row_id"`
}

type fieldSummaryView struct {
	ContainsNull bool    `json:"contains_null"`
	ContainsNaN  *bool   `json:"contains_nan"`
	LowerBound   *string `json:"lower_bound"` // hex of the stored bytes
	UpperBound   *string `json:"upper_bound"`
}

type entryView struct {
	Status             string       `json:"status"`
	SnapshotID         *int64       `json:"snapshot_id"`
	SequenceNumber     *int64       `json:"sequence_number"`
	FileSequenceNumber *int64       `json:"file_sequence_number"`
	DataFile           dataFileView `json:"data_file"`
}

type dataFileView struct {
	Content            string         `json:"content"`
	FilePath           string         `json:"file_path"`
	FileFormat         string         `json:"file_format"`
	SpecID             int32          `json:"spec_id"`
	Partition          map[string]any `json:"partition"`
	RecordCount        int64          `json:"record_count"`
	FileSizeInBytes    int64          `json:"file_size_in_bytes"`
	Columns            []columnView   `json:"columns"`
	KeyMetadata        *string        `json:"key_metadata,omitempty"`
	SplitOffsets       []int64        `json:"split_offsets"`
	EqualityIDs        []int          `json:"equality_ids"`
	SortOrderID        *int32         `json:"sort_order_id"`
	FirstRowID         *int64         `json:"first_row_id"`
	ReferencedDataFile *string        `json:"referenced_data_file"`
	ContentOffset      *int64         `json:"content_offset"`
	ContentSizeInBytes *int64         `json:"content_size_in_bytes"`

	partitionText [][2]string // name and value in spec order, for text output
}

// columnView gathers one column's metrics from the data file's maps.
type columnView struct {
	FieldID        int    `json:"field_id"`
	Name           string `json:"name,omitempty"`
	ColumnSize     *int64 `json:"column_size"`
	ValueCount     *int64 `json:"value_count"`
	NullValueCount *int64 `json:"null_value_count"`
	NaNValueCount  *int64 `json:"nan_value_count"`
	LowerBound     any    `json:"lower_bound"` // decoded by the schema's type; hex when unknown
	UpperBound     any    `json:"upper_bound"`

	lower, upper any // decoded, for text output
}

func manifestContentName(c manifest.ManifestContent) string {
	switch c {
	case manifest.ManifestContentData:
		return "data"
	case manifest.ManifestContentDeletes:
		return "deletes"
	}
	return fmt.Sprintf("unknown(%d)", c)
}

func fileContentName(c manifest.FileContent) string {
	switch c {
	case manifest.ContentData:
		return "data"
	case manifest.ContentPositionDeletes:
		return "position_deletes"
	case manifest.ContentEqualityDeletes:
		return "equality_deletes"
	}
	return fmt.Sprintf("unknown(%d)", c)
}

func statusName(s manifest.EntryStatus) string {
	switch s {
	case manifest.StatusExisting:
		return "existing"
	case manifest.StatusAdded:
		return "added"
	case manifest.StatusDeleted:
		return "deleted"
	}
	return fmt.Sprintf("unknown(%d)", s)
}

func optHex(b []byte) *string {
	if b == nil {
		return nil
	}
	s := jsonValue(b).(string)
	return &s
}

func newManifestFileView(mf manifest.ManifestFile) manifestFileView {
	v := manifestFileView{
		ManifestPath:       mf.Path,
		ManifestLength:     mf.Length,
		PartitionSpecID:    mf.SpecID,
		Content:            manifestContentName(mf.Content),
		SequenceNumber:     mf.SequenceNumber,
		MinSequenceNumber:  mf.MinSequenceNumber,
		AddedSnapshotID:    mf.AddedSnapshotID,
		AddedFilesCount:    mf.AddedFilesCount,
		ExistingFilesCount: mf.ExistingFilesCount,
		DeletedFilesCount:  mf.DeletedFilesCount,
		AddedRowsCount:     mf.AddedRowsCount,
		ExistingRowsCount:  mf.ExistingRowsCount,
		DeletedRowsCount:   mf.DeletedRowsCount,
		Partitions:         make([]fieldSummaryView, 0, len(mf.Partitions)),
		KeyMetadata:        optHex(mf.KeyMetadata),
		FirstRowID:         mf.FirstRowID,
	}
	for _, p := range mf.Partitions {
		v.Partitions = append(v.Partitions, fieldSummaryView{
			ContainsNull: p.ContainsNull,
			ContainsNaN:  p.ContainsNaN,
			LowerBound:   optHex(p.LowerBound),
			UpperBound:   optHex(p.UpperBound),
		})
	}
	return v
}

func newEntryView(e manifest.Entry, schema *spec.Schema, ps spec.PartitionSpec) entryView {
	df := e.DataFile
	v := entryView{
		Status:             statusName(e.Status),
		SnapshotID:         e.SnapshotID,
		SequenceNumber:     e.SequenceNumber,
		FileSequenceNumber: e.FileSequenceNumber,
		DataFile: dataFileView{
			Content:            fileContentName(df.Content),
			FilePath:           df.FilePath,
			FileFormat:         df.FileFormat,
			SpecID:             df.SpecID,
			Partition:          map[string]any{},
			RecordCount:        df.RecordCount,
			FileSizeInBytes:    df.FileSizeInBytes,
			KeyMetadata:        optHex(df.KeyMetadata),
			SplitOffsets:       df.SplitOffsets,
			EqualityIDs:        df.EqualityIDs,
			SortOrderID:        df.SortOrderID,
			FirstRowID:         df.FirstRowID,
			ReferencedDataFile: df.ReferencedDataFile,
			ContentOffset:      df.ContentOffset,
			ContentSizeInBytes: df.ContentSizeInBytes,
		},
	}
	for i, val := range df.Partition {
		name := fmt.Sprintf("_%d", i)
		if i < len(ps.Fields) {
			name = ps.Fields[i].Name
		}
		v.DataFile.Partition[name] = jsonValue(val)
		v.DataFile.partitionText = append(v.DataFile.partitionText, [2]string{name, textValue(val)})
	}
	v.DataFile.Columns = columnViews(df, schema)
	return v
}

// columnViews joins the per-column metric maps into one row per field id.
func columnViews(df manifest.DataFile, schema *spec.Schema) []columnView {
	ids := map[int]bool{}
	for _, m := range []map[int]int64{df.ColumnSizes, df.ValueCounts, df.NullValueCounts, df.NaNValueCounts} {
		for id := range m {
			ids[id] = true
		}
	}
	for _, m := range []map[int][]byte{df.LowerBounds, df.UpperBounds} {
		for id := range m {
			ids[id] = true
		}
	}
	sorted := make([]int, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	sort.Ints(sorted)
	get := func(m map[int]int64, id int) *int64 {
		if n, ok := m[id]; ok {
			return &n
		}
		return nil
	}
	bound := func(m map[int][]byte, id int) any {
		if b, ok := m[id]; ok {
			return decodeBound(schema, id, b)
		}
		return nil
	}
	cols := make([]columnView, 0, len(sorted))
	for _, id := range sorted {
		c := columnView{
			FieldID:        id,
			ColumnSize:     get(df.ColumnSizes, id),
			ValueCount:     get(df.ValueCounts, id),
			NullValueCount: get(df.NullValueCounts, id),
			NaNValueCount:  get(df.NaNValueCounts, id),
			lower:          bound(df.LowerBounds, id),
			upper:          bound(df.UpperBounds, id),
		}
		if c.lower != nil {
			c.LowerBound = jsonValue(c.lower)
		}
		if c.upper != nil {
			c.UpperBound = jsonValue(c.upper)
		}
		if schema != nil {
			if f, ok := schema.FindField(id); ok {
				c.Name = f.Name
			}
		}
		cols = append(cols, c)
	}
	return cols
}

// entryPrinter prints a header and then entries one at a time, so a long
// manifest streams.
type entryPrinter interface {
	header(path, kind string, h any) error
	entry(i int, e any) error
	end() error
}

// jsonEntries streams one JSON document, entry by entry.
type jsonEntries struct {
	w io.Writer
	n int
}

func (j *jsonEntries) header(path, kind string, h any) error {
	hb, err := marshalLine(h)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(j.w, "{\"file\":%s,\"kind\":%s,\"header\":%s,\"entries\":[", jsonLine(path), jsonLine(kind), hb)
	return err
}

func (j *jsonEntries) entry(_ int, e any) error {
	b, err := marshalLine(e)
	if err != nil {
		return err
	}
	sep := ",\n"
	if j.n == 0 {
		sep = "\n"
	}
	j.n++
	_, err = fmt.Fprintf(j.w, "%s%s", sep, b)
	return err
}

func (j *jsonEntries) end() error {
	_, err := fmt.Fprint(j.w, "\n]}\n")
	return err
}

// textEntries writes an aligned block per entry.
type textEntries struct {
	w io.Writer
}

func (t *textEntries) header(path, kind string, h any) error {
	tb := newTable(t.w)
	tb.row("file", path)
	switch h := h.(type) {
	case listHeaderView:
		tb.row("kind", "manifest list")
		tb.row("format version", h.FormatVersion)
		tb.row("snapshot id", optInt64(h.SnapshotID))
		tb.row("parent snapshot id", optInt64(h.ParentSnapshotID))
		tb.row("sequence number", optInt64(h.SequenceNumber))
		tb.row("first row id", optInt64(h.FirstRowID))
		writeProperties(tb, "", withoutKeys(h.Metadata, "avro.schema", "iceberg.schema"))
	case manifestHeaderView:
		tb.row("kind", "manifest")
		tb.row("format version", h.FormatVersion)
		tb.row("content", h.Content)
		if h.SchemaID != nil {
			tb.row("schema id", *h.SchemaID)
		}
		tb.row("partition spec id", h.PartitionSpecID)
		for _, f := range h.PartitionSpec {
			tb.row("  "+f.Name, fmt.Sprintf("%s(%d) -> %d", f.Transform, f.SourceID, f.FieldID))
		}
		writeProperties(tb, "", withoutKeys(h.Metadata, "avro.schema", "iceberg.schema", "schema", "partition-spec"))
	}
	return tb.flush()
}

func (t *textEntries) entry(i int, e any) error {
	tb := newTable(t.w)
	switch e := e.(type) {
	case manifestFileView:
		printf(t.w, "\nmanifest %d %s\n", i, e.ManifestPath)
		tb.row("  length", bytesize.Format(e.ManifestLength))
		tb.row("  content", e.Content)
		tb.row("  partition spec id", e.PartitionSpecID)
		tb.row("  sequence number", e.SequenceNumber)
		tb.row("  min sequence number", e.MinSequenceNumber)
		tb.row("  added snapshot id", e.AddedSnapshotID)
		tb.row("  files added/existing/deleted", fmt.Sprintf("%s / %s / %s", optInt32(e.AddedFilesCount), optInt32(e.ExistingFilesCount), optInt32(e.DeletedFilesCount)))
		tb.row("  rows added/existing/deleted", fmt.Sprintf("%s / %s / %s", optInt64(e.AddedRowsCount), optInt64(e.ExistingRowsCount), optInt64(e.DeletedRowsCount)))
		tb.row("  first row id", optInt64(e.FirstRowID))
		for j, p := range e.Partitions {
			nan := "-"
			if p.ContainsNaN != nil {
				nan = fmt.Sprint(*p.ContainsNaN)
			}
			tb.row(fmt.Sprintf("  partition %d", j), fmt.Sprintf("nulls %v, nans %s, lower %s, upper %s", p.ContainsNull, nan, optStr(p.LowerBound), optStr(p.UpperBound)))
		}
	case entryView:
		df := e.DataFile
		printf(t.w, "\nentry %d %s %s %s\n", i, e.Status, df.Content, df.FilePath)
		tb.row("  snapshot id", optInt64(e.SnapshotID))
		tb.row("  sequence number", optInt64(e.SequenceNumber))
		tb.row("  file sequence number", optInt64(e.FileSequenceNumber))
		tb.row("  file format", df.FileFormat)
		tb.row("  record count", df.RecordCount)
		tb.row("  file size", bytesize.Format(df.FileSizeInBytes))
		for _, p := range df.partitionText {
			tb.row("  partition "+p[0], p[1])
		}
		if df.ReferencedDataFile != nil {
			tb.row("  referenced data file", *df.ReferencedDataFile)
		}
		if df.ContentOffset != nil || df.ContentSizeInBytes != nil {
			tb.row("  content offset/size", fmt.Sprintf("%s / %s", optInt64(df.ContentOffset), optSize(df.ContentSizeInBytes)))
		}
		if df.FirstRowID != nil {
			tb.row("  first row id", *df.FirstRowID)
		}
		if df.SortOrderID != nil {
			tb.row("  sort order id", *df.SortOrderID)
		}
		if len(df.EqualityIDs) > 0 {
			tb.row("  equality ids", fmt.Sprint(df.EqualityIDs))
		}
		if len(df.SplitOffsets) > 0 {
			tb.row("  split offsets", joinInt64s(df.SplitOffsets))
		}
		if err := tb.flush(); err != nil {
			return err
		}
		return writeColumnsText(t.w, df.Columns)
	}
	return tb.flush()
}

func (t *textEntries) end() error { return nil }

// writeColumnsText prints an entry's column metrics as a table.
func writeColumnsText(w io.Writer, cols []columnView) error {
	if len(cols) == 0 {
		return nil
	}
	tb := newTable(w)
	tb.row("  column", "id", "size", "values", "nulls", "nans", "lower", "upper")
	for _, c := range cols {
		name := c.Name
		if name == "" {
			name = "?"
		}
		tb.row("  "+name, c.FieldID, optSize(c.ColumnSize), optInt64(c.ValueCount), optInt64(c.NullValueCount),
			optInt64(c.NaNValueCount), boundText(c.lower), boundText(c.upper))
	}
	return tb.flush()
}

func boundText(v any) string {
	if v == nil {
		return "-"
	}
	return textValue(v)
}

func optInt32(p *int32) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

func optStr(p *string) string {
	if p == nil {
		return "-"
	}
	return *p
}

// withoutKeys returns m without the given keys (large JSON blobs that text
// output shows interpreted instead).
func withoutKeys(m map[string]string, keys ...string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	for _, k := range keys {
		delete(out, k)
	}
	return out
}
