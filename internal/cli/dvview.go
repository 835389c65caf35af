package cli

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

// defaultPositions is how many deleted positions inspect prints without --all.
const defaultPositions = 20

// dvView is the printed form of one decoded deletion vector.
type dvView struct {
	CRC32              string   `json:"crc32"`
	Cardinality        uint64   `json:"cardinality"`
	Positions          []uint64 `json:"positions"`
	PositionsTruncated bool     `json:"positions_truncated"`
}

// newDVView describes a deletion-vector-v1 blob that decoded to bm; crc is
// its last four bytes, which the decoder checked. all lists every position
// instead of the first defaultPositions.
func newDVView(crc []byte, bm *roaring64.Bitmap, all bool) dvView {
	v := dvView{
		CRC32:       fmt.Sprintf("0x%08X", binary.BigEndian.Uint32(crc)),
		Cardinality: bm.GetCardinality(),
		Positions:   []uint64{},
	}
	it := bm.Iterator()
	for it.HasNext() {
		if !all && len(v.Positions) == defaultPositions {
			v.PositionsTruncated = true
			break
		}
		v.Positions = append(v.Positions, it.Next())
	}
	return v
}

// writeText adds the vector's rows to t, indented by indent.
func (v dvView) writeText(t *table, indent string) {
	t.row(indent+"crc32", v.CRC32)
	t.row(indent+"cardinality", v.Cardinality)
	const perLine = 16
	if len(v.Positions) == 0 {
		t.row(indent+"positions", "-")
	}
	for i := 0; i < len(v.Positions); i += perLine {
		key := ""
		if i == 0 {
			key = "positions"
		}
		line := v.Positions[i:min(i+perLine, len(v.Positions))]
		s := ""
		for j, p := range line {
			if j > 0 {
				s += ", "
			}
			s += fmt.Sprint(p)
		}
		t.row(indent+key, s)
	}
	if v.PositionsTruncated {
		t.row(indent+"", fmt.Sprintf("(first %d of %d; --all lists every position)", len(v.Positions), v.Cardinality))
	}
}

// writeDVText prints a single vector as an aligned section.
func writeDVText(w io.Writer, head [][2]any, v dvView) error {
	t := newTable(w)
	for _, h := range head {
		t.row(h[0], h[1])
	}
	v.writeText(t, "")
	return t.flush()
}
