package puffin

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

// DVBlobType is the Puffin blob type of a deletion vector.
const DVBlobType = "deletion-vector-v1"

// PosFieldID is the field id of the reserved _pos column; Java lists it as
// the single field of every DV blob.
const PosFieldID = 2147483645

// dvMagic is Java's magic number 1681511377 written little-endian.
var dvMagic = [4]byte{0xD1, 0xD3, 0x39, 0x64}

// dvOverhead is the length field, the magic and the CRC around the vector.
const dvOverhead = 4 + 4 + 4

// EncodeDV serializes positions as a deletion-vector-v1 blob, byte for byte
// as Java's BitmapPositionDeleteIndex.serialize does: the bitmap is
// run-optimized (on a copy; positions is not modified) and every bucket key
// from 0 to the largest is written.
func EncodeDV(positions *roaring64.Bitmap) ([]byte, error) {
	if positions == nil {
		return nil, fmt.Errorf("encode deletion vector: nil bitmap")
	}
	bm := positions.Clone()
	bm.RunOptimize()
	out := make([]byte, 8, dvOverhead+int(bm.GetSerializedSizeInBytes()))
	copy(out[4:], dvMagic[:])
	out, err := appendPortable64(out, bm)
	if err != nil {
		return nil, fmt.Errorf("encode deletion vector: %w", err)
	}
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[4:]))
	return out, nil
}

// DecodeDV decodes a deletion-vector-v1 blob. Every malformation is an error
// wrapping one of the ErrDV sentinels.
func DecodeDV(blob []byte) (*roaring64.Bitmap, error) {
	if len(blob) < 4 {
		return nil, fmt.Errorf("decode deletion vector: %w: %d bytes, need at least %d", ErrDVTruncated, len(blob), dvOverhead+8)
	}
	length := uint64(binary.BigEndian.Uint32(blob))
	if length < 4+8 {
		return nil, fmt.Errorf("decode deletion vector: %w: length %d is below the minimum 12", ErrDVLength, length)
	}
	if want := length + 8; want != uint64(len(blob)) {
		if want > uint64(len(blob)) {
			return nil, fmt.Errorf("decode deletion vector: %w: length field says %d bytes, blob has %d", ErrDVTruncated, want, len(blob))
		}
		return nil, fmt.Errorf("decode deletion vector: %w: length field says %d bytes, blob has %d", ErrDVTrailingData, want, len(blob))
	}
	body := blob[4 : 4+length]
	if [4]byte(body[:4]) != dvMagic {
		return nil, fmt.Errorf("decode deletion vector: %w: got % x, want % x", ErrDVBadMagic, body[:4], dvMagic[:])
	}
	stored := binary.BigEndian.Uint32(blob[4+length:])
	if computed := crc32.ChecksumIEEE(body); computed != stored {
		return nil, fmt.Errorf("decode deletion vector: %w: stored 0x%08X, computed 0x%08X", ErrDVBadCRC, stored, computed)
	}
	bm, err := decodePortable64(body[4:])
	if err != nil {
		return nil, fmt.Errorf("decode deletion vector: %w", err)
	}
	return bm, nil
}

// DecodeDVWithCardinality decodes a blob and checks that it deletes exactly
// want positions (the record_count of its manifest entry).
func DecodeDVWithCardinality(blob []byte, want int64) (*roaring64.Bitmap, error) {
	bm, err := DecodeDV(blob)
	if err != nil {
		return nil, err
	}
	if got := bm.GetCardinality(); want < 0 || got != uint64(want) {
		return nil, fmt.Errorf("decode deletion vector: %w: %d positions, expected %d", ErrDVCardinality, got, want)
	}
	return bm, nil
}
