package puffin

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// compress encodes payload as one frame of codec with the content size
// recorded in the frame header, as the Puffin spec requires.
func compress(codec string, payload []byte) ([]byte, error) {
	switch codec {
	case CodecNone:
		return payload, nil
	case CodecZstd:
		// Single segment: without it the encoder leaves the content size
		// out of the frame of a payload under 256 bytes, and Java's
		// reader (aircompressor's getDecompressedSize) fails on it.
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithSingleSegment(true))
		if err != nil {
			return nil, fmt.Errorf("zstd encoder: %w", err)
		}
		out := enc.EncodeAll(payload, nil)
		if err := enc.Close(); err != nil {
			return nil, fmt.Errorf("zstd encoder: %w", err)
		}
		return out, nil
	case CodecLZ4:
		var buf bytes.Buffer
		w := lz4.NewWriter(&buf)
		if err := w.Apply(lz4.SizeOption(uint64(len(payload)))); err != nil {
			return nil, fmt.Errorf("lz4 encoder: %w", err)
		}
		if _, err := w.Write(payload); err != nil {
			return nil, fmt.Errorf("lz4 encode: %w", err)
		}
		if err := w.Close(); err != nil {
			return nil, fmt.Errorf("lz4 encode: %w", err)
		}
		return buf.Bytes(), nil
	default:
		return nil, fmt.Errorf("unsupported compression codec %q (want lz4, zstd or none)", codec)
	}
}

// errTooLarge is returned (wrapped) when output would pass the limit.
var errTooLarge = errors.New("output exceeds the limit")

// decompress decodes data compressed with codec, refusing output larger
// than limit bytes so that a small crafted frame cannot exhaust memory.
func decompress(codec string, data []byte, limit int64) ([]byte, error) {
	switch codec {
	case CodecNone:
		return data, nil
	case CodecZstd:
		window := min(uint64(limit), 1<<27)
		window = max(window, zstd.MinWindowSize)
		dec, err := zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(uint64(limit)),
			zstd.WithDecoderMaxWindow(window))
		if err != nil {
			return nil, fmt.Errorf("zstd decoder: %w", err)
		}
		defer dec.Close()
		out, err := dec.DecodeAll(data, nil)
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
			return nil, fmt.Errorf("zstd decode: %w of %d bytes", errTooLarge, limit)
		}
		if err != nil {
			return nil, fmt.Errorf("zstd decode: %w", err)
		}
		return out, nil
	case CodecLZ4:
		r := lz4.NewReader(bytes.NewReader(data))
		out, err := io.ReadAll(io.LimitReader(r, limit+1))
		if err != nil {
			return nil, fmt.Errorf("lz4 decode: %w", err)
		}
		if int64(len(out)) > limit {
			return nil, fmt.Errorf("lz4 decode: %w of %d bytes", errTooLarge, limit)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("unsupported compression codec %q (want lz4, zstd or none)", codec)
	}
}
