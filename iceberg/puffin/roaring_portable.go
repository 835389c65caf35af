package puffin

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

// Constants of the Roaring portable format (RoaringFormatSpec).
const (
	cookieNoRuns     = 12346
	cookieRuns       = 12347
	noOffsetMaxSize  = 4 // run-flagged bitmaps with fewer containers omit offsets
	maxContainers    = 1 << 16
	maxArrayCard     = 4096
	bitmapBytes      = 8192
	emptyBitmapBytes = 8 // cookie 12346 + container count 0
)

// maxBucketKey is the largest 32-bit bucket key Java's RoaringPositionBitmap
// accepts (Integer.MAX_VALUE - 1); larger keys would be negative positions or
// overflow its bitmap array.
const maxBucketKey = math.MaxInt32 - 1

// maxPosition is Java's RoaringPositionBitmap.MAX_POSITION.
const maxPosition = uint64(maxBucketKey)<<32 | 0x80000000

// bucket is one 32-bit Roaring bitmap of a portable 64-bit vector: its key
// (the high 32 bits of the positions) and its serialized bytes.
type bucket struct {
	key  uint32
	data []byte
}

// scanPortable64 walks a portable 64-bit Roaring vector and checks every
// header and container, so that the bytes can be handed to the roaring
// library without risking its panics or huge allocations on crafted input.
// It returns the buckets and the total cardinality.
func scanPortable64(data []byte) ([]bucket, uint64, error) {
	if len(data) < 8 {
		return nil, 0, fmt.Errorf("%w: %d bytes, need 8 for the bucket count", ErrDVTruncated, len(data))
	}
	count := binary.LittleEndian.Uint64(data)
	// Every bucket takes at least a key and an empty bitmap, so a count the
	// remaining bytes cannot hold is a truncation, caught before allocating.
	if count > uint64(len(data)-8)/(4+emptyBitmapBytes) {
		return nil, 0, fmt.Errorf("%w: bucket count %d does not fit in %d bytes", ErrDVTruncated, count, len(data)-8)
	}
	buckets := make([]bucket, 0, count)
	var card uint64
	pos := 8
	prev := int64(-1)
	for i := uint64(0); i < count; i++ {
		if len(data)-pos < 4 {
			return nil, 0, fmt.Errorf("%w: bucket %d key at offset %d", ErrDVTruncated, i, pos)
		}
		key := binary.LittleEndian.Uint32(data[pos:])
		if key > maxBucketKey {
			return nil, 0, fmt.Errorf("%w: bucket %d key %d exceeds %d", ErrDVKeyTooLarge, i, key, maxBucketKey)
		}
		if int64(key) <= prev {
			return nil, 0, fmt.Errorf("%w: bucket %d key %d after %d", ErrDVKeyOrder, i, key, prev)
		}
		prev = int64(key)
		pos += 4
		n, c, err := scanBitmap32(data[pos:])
		if err != nil {
			return nil, 0, fmt.Errorf("bucket %d (key %d) at offset %d: %w", i, key, pos, err)
		}
		buckets = append(buckets, bucket{key: key, data: data[pos : pos+n]})
		card += c
		pos += n
	}
	if pos != len(data) {
		return nil, 0, fmt.Errorf("%w: %d bytes after the last bucket", ErrDVTrailingData, len(data)-pos)
	}
	return buckets, card, nil
}

// scanBitmap32 checks one 32-bit Roaring bitmap in the portable layout at the
// start of b and returns its length in bytes and its cardinality.
func scanBitmap32(b []byte) (int, uint64, error) {
	if len(b) < 4 {
		return 0, 0, fmt.Errorf("%w: bitmap cookie", ErrDVTruncated)
	}
	cookie := binary.LittleEndian.Uint32(b)
	var size int
	var runFlags []byte
	p := 4
	switch {
	case cookie == cookieNoRuns:
		if len(b) < 8 {
			return 0, 0, fmt.Errorf("%w: bitmap container count", ErrDVTruncated)
		}
		n := binary.LittleEndian.Uint32(b[4:])
		if n > maxContainers {
			return 0, 0, fmt.Errorf("%w: %d containers, at most %d allowed", ErrDVCorrupt, n, maxContainers)
		}
		size = int(n)
		p = 8
	case cookie&0xFFFF == cookieRuns:
		size = int(cookie>>16) + 1
		nb := (size + 7) / 8
		if len(b)-p < nb {
			return 0, 0, fmt.Errorf("%w: run flags", ErrDVTruncated)
		}
		runFlags = b[p : p+nb]
		p += nb
	default:
		return 0, 0, fmt.Errorf("%w: unknown bitmap cookie 0x%08x", ErrDVCorrupt, cookie)
	}
	if len(b)-p < 4*size {
		return 0, 0, fmt.Errorf("%w: descriptive header of %d containers", ErrDVTruncated, size)
	}
	header := b[p : p+4*size]
	p += 4 * size
	var offsets []byte
	if runFlags == nil || size >= noOffsetMaxSize {
		if len(b)-p < 4*size {
			return 0, 0, fmt.Errorf("%w: offset header of %d containers", ErrDVTruncated, size)
		}
		offsets = b[p : p+4*size]
		p += 4 * size
	}
	var total uint64
	prevKey := -1
	for i := 0; i < size; i++ {
		key := int(binary.LittleEndian.Uint16(header[4*i:]))
		card := int(binary.LittleEndian.Uint16(header[4*i+2:])) + 1
		if key <= prevKey {
			return 0, 0, fmt.Errorf("%w: container %d key %d after %d", ErrDVCorrupt, i, key, prevKey)
		}
		prevKey = key
		if offsets != nil {
			if off := binary.LittleEndian.Uint32(offsets[4*i:]); uint64(off) != uint64(p) {
				return 0, 0, fmt.Errorf("%w: container %d offset %d, data starts at %d", ErrDVCorrupt, i, off, p)
			}
		}
		isRun := runFlags != nil && runFlags[i/8]&(1<<(i%8)) != 0
		var n int
		var err error
		switch {
		case isRun:
			n, err = checkRunContainer(b[p:], card)
		case card > maxArrayCard:
			n, err = checkBitmapContainer(b[p:], card)
		default:
			n, err = checkArrayContainer(b[p:], card)
		}
		if err != nil {
			return 0, 0, fmt.Errorf("container %d (key %d): %w", i, key, err)
		}
		p += n
		total += uint64(card)
	}
	return p, total, nil
}

func checkRunContainer(b []byte, card int) (int, error) {
	if len(b) < 2 {
		return 0, fmt.Errorf("%w: run count", ErrDVTruncated)
	}
	runs := int(binary.LittleEndian.Uint16(b))
	if runs == 0 {
		return 0, fmt.Errorf("%w: run container without runs", ErrDVCorrupt)
	}
	n := 2 + 4*runs
	if len(b) < n {
		return 0, fmt.Errorf("%w: %d runs", ErrDVTruncated, runs)
	}
	sum := 0
	nextFree := 0 // first value a following run may start at
	for i := 0; i < runs; i++ {
		start := int(binary.LittleEndian.Uint16(b[2+4*i:]))
		length := int(binary.LittleEndian.Uint16(b[4+4*i:])) + 1
		if start < nextFree {
			return 0, fmt.Errorf("%w: run %d starts at %d, overlapping or unsorted", ErrDVCorrupt, i, start)
		}
		if start+length > maxContainers {
			return 0, fmt.Errorf("%w: run %d [%d, +%d) exceeds the container", ErrDVCorrupt, i, start, length)
		}
		nextFree = start + length
		sum += length
	}
	if sum != card {
		return 0, fmt.Errorf("%w: runs hold %d values, header says %d", ErrDVCorrupt, sum, card)
	}
	return n, nil
}

func checkBitmapContainer(b []byte, card int) (int, error) {
	if len(b) < bitmapBytes {
		return 0, fmt.Errorf("%w: bitmap container", ErrDVTruncated)
	}
	count := 0
	for i := 0; i < bitmapBytes; i += 8 {
		count += bits.OnesCount64(binary.LittleEndian.Uint64(b[i:]))
	}
	if count != card {
		return 0, fmt.Errorf("%w: bitmap container holds %d values, header says %d", ErrDVCorrupt, count, card)
	}
	return bitmapBytes, nil
}

func checkArrayContainer(b []byte, card int) (int, error) {
	n := 2 * card
	if len(b) < n {
		return 0, fmt.Errorf("%w: array container of %d values", ErrDVTruncated, card)
	}
	prev := -1
	for i := 0; i < card; i++ {
		v := int(binary.LittleEndian.Uint16(b[2*i:]))
		if v <= prev {
			return 0, fmt.Errorf("%w: array value %d after %d", ErrDVCorrupt, v, prev)
		}
		prev = v
	}
	return n, nil
}

// decodePortable64 decodes a portable 64-bit Roaring vector, keeping the
// container types as stored.
func decodePortable64(data []byte) (*roaring64.Bitmap, error) {
	_, card, err := scanPortable64(data)
	if err != nil {
		return nil, err
	}
	bm, err := readValidated(data)
	if err != nil {
		return nil, err
	}
	if got := bm.GetCardinality(); got != card {
		return nil, fmt.Errorf("%w: decoded %d positions, headers say %d", ErrDVCorrupt, got, card)
	}
	return bm, nil
}

// readValidated hands bytes already checked by scanPortable64 to roaring.
// The recover is a second line of defence: a panic in the library must
// surface as an error, never crash a maintenance run.
func readValidated(data []byte) (bm *roaring64.Bitmap, err error) {
	defer func() {
		if r := recover(); r != nil {
			bm, err = nil, fmt.Errorf("%w: roaring decoder failed: %v", ErrDVCorrupt, r)
		}
	}()
	bm = roaring64.New()
	n, err := bm.ReadPortableFrom(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDVCorrupt, err)
	}
	if n != int64(len(data)) {
		return nil, fmt.Errorf("%w: roaring read %d of %d bytes", ErrDVCorrupt, n, len(data))
	}
	return bm, nil
}

// appendPortable64 appends bm in the portable 64-bit layout the way Java's
// RoaringPositionBitmap.serialize writes it: one bucket for every key from 0
// to the largest, empty buckets included. Container types are written as
// they are; run-optimize first to match Java's DV bytes.
func appendPortable64(dst []byte, bm *roaring64.Bitmap) ([]byte, error) {
	if bm.IsEmpty() {
		return binary.LittleEndian.AppendUint64(dst, 0), nil
	}
	if maxPos := bm.Maximum(); maxPos > maxPosition {
		return nil, fmt.Errorf("%w: position %d exceeds the maximum %d", ErrDVKeyTooLarge, maxPos, maxPosition)
	}
	raw, err := bm.ToPortableBytes()
	if err != nil {
		return nil, fmt.Errorf("serialize roaring bitmap: %w", err)
	}
	buckets, _, err := scanPortable64(raw)
	if err != nil {
		return nil, fmt.Errorf("roaring serialized an invalid bitmap: %w", err)
	}
	last := uint64(buckets[len(buckets)-1].key)
	size := uint64(8)
	for _, b := range buckets {
		size += 4 + uint64(len(b.data))
	}
	size += (last + 1 - uint64(len(buckets))) * (4 + emptyBitmapBytes)
	// The blob length is an int32 that also covers the magic.
	if size > math.MaxInt32-4 {
		return nil, fmt.Errorf("deletion vector too large: %d bytes", size)
	}
	dst = binary.LittleEndian.AppendUint64(dst, last+1)
	next := uint32(0)
	for _, b := range buckets {
		for ; next < b.key; next++ {
			dst = binary.LittleEndian.AppendUint32(dst, next)
			dst = binary.LittleEndian.AppendUint32(dst, cookieNoRuns)
			dst = binary.LittleEndian.AppendUint32(dst, 0)
		}
		dst = binary.LittleEndian.AppendUint32(dst, b.key)
		dst = append(dst, b.data...)
		next = b.key + 1
	}
	return dst, nil
}
