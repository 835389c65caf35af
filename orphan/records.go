package orphan

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Records of the sorted streams: the key first, then NUL-separated
// fields, so byte order is key order (NUL sorts before every other byte,
// and no path may contain it).

func checkPath(p string) error {
	if strings.IndexByte(p, 0) >= 0 {
		return fmt.Errorf("path %q contains a NUL byte", p)
	}
	return nil
}

func refRecord(buf []byte, path string) []byte {
	buf = append(buf[:0], pathKey(splitURI(path).path)...)
	buf = append(buf, 0)
	return append(buf, path...)
}

func parseRef(rec []byte) (Ref, error) {
	k, p, ok := bytes.Cut(rec, []byte{0})
	if !ok {
		return Ref{}, fmt.Errorf("orphan: bad reference record %q", rec)
	}
	return Ref{Key: string(k), Path: string(p)}, nil
}

// candidate is a File with its decision, as kept between planning and
// execution.
type candidate struct {
	File
	Reason       string
	ReferencedAs string
}

func fileRecord(buf []byte, f File, reason, refAs string) []byte {
	buf = append(buf[:0], f.Key...)
	buf = append(buf, 0)
	buf = append(buf, f.Path...)
	buf = append(buf, 0)
	buf = strconv.AppendInt(buf, f.Size, 10)
	buf = append(buf, 0)
	ns := int64(0)
	if !f.ModTime.IsZero() {
		ns = f.ModTime.UnixNano()
	}
	buf = strconv.AppendInt(buf, ns, 10)
	buf = append(buf, 0)
	buf = append(buf, reason...)
	buf = append(buf, 0)
	return append(buf, refAs...)
}

func parseFile(rec []byte) (candidate, error) {
	parts := bytes.SplitN(rec, []byte{0}, 6)
	if len(parts) != 6 {
		return candidate{}, fmt.Errorf("orphan: bad file record %q", rec)
	}
	size, err1 := strconv.ParseInt(string(parts[2]), 10, 64)
	ns, err2 := strconv.ParseInt(string(parts[3]), 10, 64)
	if err1 != nil || err2 != nil {
		return candidate{}, fmt.Errorf("orphan: bad file record %q", rec)
	}
	c := candidate{File: File{Key: string(parts[0]), Path: string(parts[1]), Size: size},
		Reason: string(parts[4]), ReferencedAs: string(parts[5])}
	if ns != 0 {
		c.ModTime = time.Unix(0, ns).UTC()
	}
	return c, nil
}
