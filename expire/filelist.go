package expire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// fileListBudget is the memory a FileList holds before it moves to disk.
// It is small on purpose: the list is written once and read once or twice
// (by the report), sequentially.
const fileListBudget = 1 << 20

// FileList is the files of a Report, in the order the run met them: in
// memory up to a small budget, then in a temporary file, so that a report
// of millions of files costs no more memory than one of a few. Each reads
// it as often as needed; Close releases the file. A nil FileList is empty.
type FileList struct {
	budget   int
	dir      string
	name     string // the spill file, when the system kept it after unlinking
	mem      [][]byte
	memBytes int
	f        *os.File
	w        *bufio.Writer
	size     int64
	n        int
	bytes    int64
	buf      []byte
}

// NewFileList returns an empty list whose spill file, once it needs one,
// goes in dir ("" = the system's temporary directory).
func NewFileList(dir string) *FileList { return &FileList{dir: dir, budget: fileListBudget} }

// Len is the number of files.
func (l *FileList) Len() int {
	if l == nil {
		return 0
	}
	return l.n
}

// Bytes is the sum of the files' sizes.
func (l *FileList) Bytes() int64 {
	if l == nil {
		return 0
	}
	return l.bytes
}

// Add appends f: its record (as the diff's, see encodeFile) and its own
// reason, if any.
func (l *FileList) Add(f File) error {
	l.buf = append(encodeFile(l.buf, f), f.Reason...)
	l.n++
	l.bytes += f.Size
	if l.f == nil && l.memBytes+len(l.buf) <= l.budget {
		l.mem = append(l.mem, append([]byte(nil), l.buf...))
		l.memBytes += len(l.buf)
		return nil
	}
	if l.f == nil {
		if err := l.spill(); err != nil {
			return err
		}
	}
	return l.write(l.buf)
}

// spill moves the records in memory to a temporary file, unlinked at once
// where the system allows it, so that nothing is left behind on a crash.
func (l *FileList) spill() error {
	f, err := os.CreateTemp(l.dir, "icectl-expire-files-*")
	if err != nil {
		return fmt.Errorf("expire: report spill file: %w", err)
	}
	if os.Remove(f.Name()) != nil {
		// Windows keeps open files: Close removes it.
		l.name = f.Name()
	}
	l.f, l.w = f, bufio.NewWriterSize(f, 64<<10)
	for _, rec := range l.mem {
		if err := l.write(rec); err != nil {
			return err
		}
	}
	l.mem, l.memBytes = nil, 0
	return nil
}

func (l *FileList) write(rec []byte) error {
	var hdr [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(hdr[:], uint64(len(rec)))
	if _, err := l.w.Write(hdr[:n]); err != nil {
		return fmt.Errorf("expire: write report spill file: %w", err)
	}
	if _, err := l.w.Write(rec); err != nil {
		return fmt.Errorf("expire: write report spill file: %w", err)
	}
	l.size += int64(n + len(rec))
	return nil
}

// Each calls fn for every file, in order, each with its reason.
func (l *FileList) Each(fn func(File) error) error {
	if l == nil {
		return nil
	}
	return l.each(func(f File) error {
		if f.Reason == "" {
			f.Reason = defaultReason(f)
		}
		return fn(f)
	})
}

func (l *FileList) each(fn func(File) error) error {
	if l.f == nil {
		for _, rec := range l.mem {
			f, err := decodeFile(rec)
			if err != nil {
				return err
			}
			if err := fn(f); err != nil {
				return err
			}
		}
		return nil
	}
	if err := l.w.Flush(); err != nil {
		return fmt.Errorf("expire: write report spill file: %w", err)
	}
	r := bufio.NewReaderSize(io.NewSectionReader(l.f, 0, l.size), 64<<10)
	var rec []byte
	for {
		n, err := binary.ReadUvarint(r)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("expire: read report spill file: %w", err)
		}
		if uint64(cap(rec)) < n {
			rec = make([]byte, n)
		}
		rec = rec[:n]
		if _, err := io.ReadFull(r, rec); err != nil {
			return fmt.Errorf("expire: read report spill file: %w", err)
		}
		f, err := decodeFile(rec)
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			return err
		}
	}
}

// Close releases the spill file.
func (l *FileList) Close() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	if l.name != "" {
		err = errors.Join(err, os.Remove(l.name))
	}
	l.f, l.w, l.mem = nil, nil, nil
	return err
}
