package datafile

import (
	"encoding/hex"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// ParquetInfo describes a Parquet file for `icectl inspect parquet`.
type ParquetInfo struct {
	CreatedBy        string         `json:"created_by"`
	FormatVersion    string         `json:"format_version"`
	NumRows          int64          `json:"num_rows"`
	Schema           []ParquetNode  `json:"schema"`
	RowGroups        []RowGroupInfo `json:"row_groups"`
	KeyValueMetadata []KeyValue     `json:"key_value_metadata"`
}

// KeyValue is one entry of the footer's key/value metadata, in file order.
type KeyValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// ParquetNode is one node of the Parquet schema tree.
type ParquetNode struct {
	Name          string        `json:"name"`
	FieldID       *int32        `json:"field_id,omitempty"`
	Repetition    string        `json:"repetition"`
	PhysicalType  string        `json:"physical_type,omitempty"`
	TypeLength    int           `json:"type_length,omitempty"`
	LogicalType   string        `json:"logical_type,omitempty"`
	ConvertedType string        `json:"converted_type,omitempty"`
	Children      []ParquetNode `json:"children,omitempty"`
}

// RowGroupInfo describes one row group.
type RowGroupInfo struct {
	NumRows        int64        `json:"num_rows"`
	FileOffset     int64        `json:"file_offset"`
	TotalByteSize  int64        `json:"total_byte_size"`
	CompressedSize int64        `json:"compressed_size"`
	Columns        []ColumnInfo `json:"columns"`
}

// ColumnInfo describes one column chunk.
type ColumnInfo struct {
	Path             string       `json:"path"`
	FieldID          *int32       `json:"field_id,omitempty"`
	PhysicalType     string       `json:"physical_type"`
	Codec            string       `json:"codec"`
	Encodings        []string     `json:"encodings"`
	NumValues        int64        `json:"num_values"`
	CompressedSize   int64        `json:"compressed_size"`
	UncompressedSize int64        `json:"uncompressed_size"`
	Statistics       *ColumnStats `json:"statistics,omitempty"`
}

// ColumnStats are a column chunk's statistics. Min and Max are numbers,
// booleans, strings (for UTF-8 columns) or "0x"-prefixed hex.
type ColumnStats struct {
	NullCount     *int64 `json:"null_count,omitempty"`
	DistinctCount *int64 `json:"distinct_count,omitempty"`
	Min           any    `json:"min,omitempty"`
	Max           any    `json:"max,omitempty"`
}

// InspectParquet reads the footer of a Parquet file.
func InspectParquet(r io.ReaderAt, size int64) (info *ParquetInfo, err error) {
	defer recoverError(&err, "inspect parquet file")
	pf, err := openParquet(r, size)
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	md := pf.MetaData()
	info = &ParquetInfo{
		CreatedBy:        md.GetCreatedBy(),
		FormatVersion:    md.Version().String(),
		NumRows:          md.NumRows,
		RowGroups:        []RowGroupInfo{},
		KeyValueMetadata: []KeyValue{},
	}
	root := md.Schema.Root()
	for i := range root.NumFields() {
		info.Schema = append(info.Schema, describeNode(root.Field(i)))
	}
	kv := md.KeyValueMetadata()
	for i, k := range kv.Keys() {
		info.KeyValueMetadata = append(info.KeyValueMetadata, KeyValue{Key: k, Value: kv.Values()[i]})
	}
	for i := range md.NumRowGroups() {
		rg, err := describeRowGroup(md, i)
		if err != nil {
			return nil, fmt.Errorf("inspect parquet file: row group %d: %w", i, err)
		}
		info.RowGroups = append(info.RowGroups, rg)
	}
	return info, nil
}

func describeNode(n schema.Node) ParquetNode {
	out := ParquetNode{Name: n.Name(), Repetition: n.RepetitionType().String()}
	if id := n.FieldID(); id >= 0 {
		out.FieldID = &id
	}
	if lt := n.LogicalType(); lt != nil && !lt.Equals(schema.NoLogicalType{}) {
		out.LogicalType = lt.String()
	}
	if ct := n.ConvertedType(); ct != schema.ConvertedTypes.None {
		out.ConvertedType = ct.String()
	}
	switch n := n.(type) {
	case *schema.PrimitiveNode:
		out.PhysicalType = n.PhysicalType().String()
		if n.PhysicalType() == parquet.Types.FixedLenByteArray {
			out.TypeLength = n.TypeLength()
		}
	case *schema.GroupNode:
		for i := range n.NumFields() {
			out.Children = append(out.Children, describeNode(n.Field(i)))
		}
	}
	return out
}

func describeRowGroup(md *metadata.FileMetaData, i int) (RowGroupInfo, error) {
	rg := md.RowGroup(i)
	out := RowGroupInfo{NumRows: rg.NumRows(), FileOffset: rg.FileOffset(), TotalByteSize: rg.TotalByteSize()}
	for c := range rg.NumColumns() {
		cc, err := rg.ColumnChunk(c)
		if err != nil {
			return out, fmt.Errorf("column %d: %w", c, err)
		}
		ci := ColumnInfo{
			Path:             cc.PathInSchema().String(),
			PhysicalType:     cc.Type().String(),
			Codec:            cc.Compression().String(),
			Encodings:        []string{},
			NumValues:        cc.NumValues(),
			CompressedSize:   cc.TotalCompressedSize(),
			UncompressedSize: cc.TotalUncompressedSize(),
		}
		if c < md.Schema.NumColumns() {
			if id := md.Schema.Column(c).SchemaNode().FieldID(); id >= 0 {
				ci.FieldID = &id
			}
		}
		for _, e := range cc.Encodings() {
			ci.Encodings = append(ci.Encodings, e.String())
		}
		if ok, _ := cc.StatsSet(); ok {
			if st, err := cc.Statistics(); err == nil && st != nil {
				ci.Statistics = describeStats(st)
			}
		}
		out.CompressedSize += ci.CompressedSize
		out.Columns = append(out.Columns, ci)
	}
	return out, nil
}

func describeStats(st metadata.TypedStatistics) *ColumnStats {
	out := &ColumnStats{}
	if st.HasNullCount() {
		n := st.NullCount()
		out.NullCount = &n
	}
	if st.HasDistinctCount() {
		n := st.DistinctCount()
		out.DistinctCount = &n
	}
	if !st.HasMinMax() {
		return out
	}
	isString := false
	if d := st.Descr(); d != nil {
		if _, ok := d.LogicalType().(schema.StringLogicalType); ok {
			isString = true
		}
	}
	bytesValue := func(b []byte) any {
		if isString {
			return string(b)
		}
		return "0x" + hex.EncodeToString(b)
	}
	switch s := st.(type) {
	case *metadata.BooleanStatistics:
		out.Min, out.Max = s.Min(), s.Max()
	case *metadata.Int32Statistics:
		out.Min, out.Max = s.Min(), s.Max()
	case *metadata.Int64Statistics:
		out.Min, out.Max = s.Min(), s.Max()
	case *metadata.Float32Statistics:
		out.Min, out.Max = jsonFloat(float64(s.Min())), jsonFloat(float64(s.Max()))
	case *metadata.Float64Statistics:
		out.Min, out.Max = jsonFloat(s.Min()), jsonFloat(s.Max())
	case *metadata.ByteArrayStatistics:
		out.Min, out.Max = bytesValue(s.Min()), bytesValue(s.Max())
	case *metadata.FixedLenByteArrayStatistics:
		out.Min, out.Max = bytesValue(s.Min()), bytesValue(s.Max())
	default:
		out.Min, out.Max = "0x"+hex.EncodeToString(st.EncodeMin()), "0x"+hex.EncodeToString(st.EncodeMax())
	}
	return out
}

// jsonFloat keeps NaN and infinities, which encoding/json rejects, as
// strings.
func jsonFloat(f float64) any {
	if f != f || f > 1.7976931348623157e308 || f < -1.7976931348623157e308 {
		return fmt.Sprint(f)
	}
	return f
}
