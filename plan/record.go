package plan

import (
	"bytes"
	"cmp"
	"encoding/binary"

	"github.com/icectl/icectl/iceberg/table"
)

// record is one live data file as a Collector keeps it: a fixed header and
// the path, in one byte slice, so a table's files cost no pointers and can
// be spilled and read back as they are.
type record []byte

// Offsets in a record's header (little endian).
const (
	recPart       = 0  // uint32: partition id
	recPathLen    = 4  // uint32
	recSeq        = 8  // int64: data sequence number
	recSize       = 16 // int64: file size in bytes
	recRecords    = 24 // int64: record count
	recFileSeq    = 32 // int64: file sequence number (see flagFileSeq)
	recFirstRowID = 40 // int64 (see flagFirstRowID)
	recPos        = 48 // uint64: table.LiveDataFile.Pos
	recKnown      = 56 // int64: known deleted rows (group records)
	recFlags      = 64 // uint8
	recFormat     = 65 // uint8: index in Collector.formats
	recReasons    = 66 // uint8: reason bits (group records)
	recHeader     = 68
)

const (
	flagFileSeq    = 1 << iota
	flagFirstRowID // first_row_id is set
	flagDV         // a DV applies (group records)
)

var le = binary.LittleEndian

func appendRecord(buf []byte, f *table.LiveDataFile, format uint8) []byte {
	var h [recHeader]byte
	le.PutUint32(h[recPart:], f.Partition)
	le.PutUint32(h[recPathLen:], uint32(len(f.Path)))
	le.PutUint64(h[recSeq:], uint64(f.DataSequenceNumber))
	le.PutUint64(h[recSize:], uint64(f.FileSizeInBytes))
	le.PutUint64(h[recRecords:], uint64(f.RecordCount))
	le.PutUint64(h[recFileSeq:], uint64(f.FileSequenceNumber))
	le.PutUint64(h[recFirstRowID:], uint64(f.FirstRowID))
	le.PutUint64(h[recPos:], f.Pos)
	var flags uint8
	if f.HasFileSequenceNumber {
		flags |= flagFileSeq
	}
	if f.HasFirstRowID {
		flags |= flagFirstRowID
	}
	h[recFlags] = flags
	h[recFormat] = format
	buf = append(buf, h[:]...)
	return append(buf, f.Path...)
}

func (r record) part() uint32      { return le.Uint32(r[recPart:]) }
func (r record) pathLen() uint32   { return le.Uint32(r[recPathLen:]) }
func (r record) seq() int64        { return int64(le.Uint64(r[recSeq:])) }
func (r record) size() int64       { return int64(le.Uint64(r[recSize:])) }
func (r record) records() int64    { return int64(le.Uint64(r[recRecords:])) }
func (r record) fileSeq() int64    { return int64(le.Uint64(r[recFileSeq:])) }
func (r record) firstRowID() int64 { return int64(le.Uint64(r[recFirstRowID:])) }
func (r record) pos() uint64       { return le.Uint64(r[recPos:]) }
func (r record) known() int64      { return int64(le.Uint64(r[recKnown:])) }
func (r record) flags() uint8      { return r[recFlags] }
func (r record) format() uint8     { return r[recFormat] }
func (r record) reasons() uint8    { return r[recReasons] }
func (r record) path() []byte      { return r[recHeader : recHeader+int(r.pathLen())] }

// compareRecords is the order of a partition's files for packing: Java
// packs in scan order; a canonical order (data sequence number, then
// path) keeps plans deterministic and files written together in one group.
// Records of different partitions order by partition id, so a merge of
// sorted runs yields each partition's files together.
func compareRecords(a, b record) int {
	if c := cmp.Compare(a.part(), b.part()); c != 0 {
		return c
	}
	if c := cmp.Compare(a.seq(), b.seq()); c != 0 {
		return c
	}
	return bytes.Compare(a.path(), b.path())
}
