package cli

import (
	"bytes"

	"github.com/icectl/icectl/iceberg/fileio"
)

// fileKind is what a file is by its first bytes, for the inspect commands
// to name a file of the wrong kind instead of decoding it as theirs.
type fileKind int

const (
	kindUnknown fileKind = iota
	kindParquet
	kindAvro
	kindPuffin
	kindJSON
)

// describe and command say what a kind is and which command reads it.
var kindInfo = map[fileKind]struct{ describe, command string }{
	kindParquet: {"a Parquet data file", "parquet"},
	kindAvro:    {"an Avro manifest file", "manifest"},
	kindPuffin:  {"a Puffin file", "puffin"},
	kindJSON:    {"a table metadata file (JSON)", "metadata"},
}

// sniffKind reads the magic bytes at the start of file: PAR1, Obj\x01,
// PFA1, or a '{' after white space. Anything else is kindUnknown, left to
// the command's own decoder to refuse.
func sniffKind(file fileio.File) fileKind {
	var head [64]byte
	n, _ := file.ReadAt(head[:min(int64(len(head)), file.Size())], 0)
	b := head[:n]
	switch {
	case bytes.HasPrefix(b, []byte("PAR1")):
		return kindParquet
	case bytes.HasPrefix(b, []byte("Obj\x01")):
		return kindAvro
	case bytes.HasPrefix(b, []byte("PFA1")):
		return kindPuffin
	case bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("{")):
		return kindJSON
	}
	return kindUnknown
}

// requireKind refuses, as a usage error naming the right command, a file
// whose magic bytes say it is another kind than want. A file of unknown
// kind passes: the command's decoder says what is wrong with it.
func requireKind(file fileio.File, path string, want fileKind) error {
	got := sniffKind(file)
	if got == want || got == kindUnknown {
		return nil
	}
	info := kindInfo[got]
	return usageErrorf("%s is %s; use `icectl inspect %s %s`", path, info.describe, info.command, path)
}
