package datafile

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
)

// Table properties the Writer honours.
const (
	PropCompressionCodec  = "write.parquet.compression-codec"
	PropCompressionLevel  = "write.parquet.compression-level"
	PropRowGroupSizeBytes = "write.parquet.row-group-size-bytes"
	PropPageSizeBytes     = "write.parquet.page-size-bytes"

	DefaultRowGroupSizeBytes = 128 * 1024 * 1024
	DefaultPageSizeBytes     = 1024 * 1024
)

// writerConfig is what the table properties ask of a Writer.
type writerConfig struct {
	codec        compress.Compression
	level        *int
	rowGroupSize int64
	pageSize     int64
	// serialEncode makes flat schemas use pqarrow's one-column-at-a-time
	// encoder too; tests compare the two encoders' bytes with it.
	serialEncode bool
}

func writerConfigFromProperties(props map[string]string) (writerConfig, error) {
	cfg := writerConfig{codec: compress.Codecs.Zstd, rowGroupSize: DefaultRowGroupSizeBytes, pageSize: DefaultPageSizeBytes}
	if v, ok := props[PropCompressionCodec]; ok {
		c, err := parseCodec(v)
		if err != nil {
			return cfg, err
		}
		cfg.codec = c
	}
	if v, ok := props[PropCompressionLevel]; ok && strings.TrimSpace(v) != "" {
		l, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return cfg, fmt.Errorf("table property %s=%q: not an integer", PropCompressionLevel, v)
		}
		cfg.level = &l
	}
	for _, p := range []struct {
		key string
		dst *int64
	}{{PropRowGroupSizeBytes, &cfg.rowGroupSize}, {PropPageSizeBytes, &cfg.pageSize}} {
		v, ok := props[p.key]
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n <= 0 {
			return cfg, fmt.Errorf("table property %s=%q: want a positive number of bytes", p.key, v)
		}
		*p.dst = n
	}
	return cfg, nil
}

// CheckWriterProperties reports the first of props' write.parquet.*
// values the Writer would refuse, as NewWriter would refuse it.
func CheckWriterProperties(props map[string]string) error {
	_, err := writerConfigFromProperties(props)
	return err
}

// RowGroupSizeFromProperties is the row-group size the Writer aims at for
// table properties props (its default when they do not say or say
// something NewWriter would refuse).
func RowGroupSizeFromProperties(props map[string]string) int64 {
	cfg, err := writerConfigFromProperties(props)
	if err != nil {
		return DefaultRowGroupSizeBytes
	}
	return cfg.rowGroupSize
}

// parseCodec reads write.parquet.compression-codec as Java does
// (case-insensitive). lz4 is written as LZ4_RAW: arrow-go does not write
// the deprecated Hadoop-framed LZ4.
func parseCodec(v string) (compress.Compression, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "zstd":
		return compress.Codecs.Zstd, nil
	case "snappy":
		return compress.Codecs.Snappy, nil
	case "gzip":
		return compress.Codecs.Gzip, nil
	case "lz4", "lz4_raw":
		return compress.Codecs.Lz4Raw, nil
	case "brotli":
		return compress.Codecs.Brotli, nil
	case "uncompressed", "none":
		return compress.Codecs.Uncompressed, nil
	}
	return 0, fmt.Errorf("table property %s=%q: unsupported codec (want zstd, snappy, gzip, lz4, brotli or uncompressed)", PropCompressionCodec, v)
}

// parquetOptions are the writer properties of parquetProperties, for a
// caller that adds its own.
func (c writerConfig) parquetOptions(ncols int) []parquet.WriterProperty {
	// Row groups are cut by size from the bytes of flushed pages, so pages
	// must be small next to the row-group target or a row group overshoots
	// by up to one page per column.
	page := c.pageSize
	if ncols > 0 {
		page = max(min(page, c.rowGroupSize/int64(4*ncols)), 8*1024)
	}
	opts := []parquet.WriterProperty{
		parquet.WithCompression(c.codec),
		parquet.WithDataPageSize(page),
		parquet.WithDictionaryPageSizeLimit(page),
		parquet.WithStoreDecimalAsInteger(true),
		parquet.WithCreatedBy("icectl (" + parquet.DefaultCreatedBy + ")"),
	}
	if c.level != nil {
		opts = append(opts, parquet.WithCompressionLevel(*c.level))
	}
	return opts
}
