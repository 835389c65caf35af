package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/hamba/avro/v2"
)

// Kinds of Avro file `inspect manifest` reads.
const (
	kindManifestList = "manifest_list"
	kindManifest     = "manifest"
)

// Field ids that only one kind has: manifest_path (500) in a manifest list,
// status (0) in a manifest.
const (
	fieldManifestPath = 500
	fieldEntryStatus  = 0
)

// avroKind tells a manifest list from a manifest by the writer schema in the
// Avro header: Java names the records manifest_file and manifest_entry; other
// writers are recognised by the field ids only one kind has.
func avroKind(r io.Reader) (string, error) {
	schemaJSON, err := avroSchema(r)
	if err != nil {
		return "", err
	}
	var schema struct {
		Name   string `json:"name"`
		Fields []struct {
			FieldID *int `json:"field-id"`
		} `json:"fields"`
	}
	if err := json.Unmarshal(schemaJSON, &schema); err != nil {
		return "", fmt.Errorf("read Avro schema: %w", err)
	}
	switch schema.Name {
	case "manifest_file":
		return kindManifestList, nil
	case "manifest_entry":
		return kindManifest, nil
	}
	for _, f := range schema.Fields {
		switch {
		case f.FieldID == nil:
		case *f.FieldID == fieldManifestPath:
			return kindManifestList, nil
		case *f.FieldID == fieldEntryStatus:
			return kindManifest, nil
		}
	}
	return "", fmt.Errorf("neither a manifest list nor a manifest: record %q has no field with id %d or %d",
		schema.Name, fieldManifestPath, fieldEntryStatus)
}

// Bounds on an Avro header, so a corrupt file cannot make us allocate much.
const (
	maxHeaderEntries = 1024
	maxHeaderValue   = 16 << 20
)

// avroSchema reads the writer schema from an Avro object container header.
// (iceberg/manifest reads the same header but does not export it.)
func avroSchema(in io.Reader) ([]byte, error) {
	r := avro.NewReader(in, 4096, avro.WithReaderConfig(avro.Config{MaxByteSliceSize: maxHeaderValue}.Freeze()))
	var magic [4]byte
	r.Read(magic[:])
	if r.Error != nil || magic != [4]byte{'O', 'b', 'j', 1} {
		return nil, fmt.Errorf("not an Avro object container file")
	}
	for entries := int64(0); ; {
		n := r.ReadLong()
		if n < 0 {
			n = -n
			r.ReadLong() // the block's size in bytes
		}
		if r.Error != nil {
			return nil, fmt.Errorf("read Avro header: %w", r.Error)
		}
		if n == 0 {
			return nil, fmt.Errorf("Avro header has no avro.schema")
		}
		if entries += n; entries > maxHeaderEntries {
			return nil, fmt.Errorf("Avro header has too many entries")
		}
		for ; n > 0; n-- {
			k := r.ReadString()
			v := r.ReadBytes()
			if r.Error != nil {
				return nil, fmt.Errorf("read Avro header: %w", r.Error)
			}
			if k == "avro.schema" {
				return v, nil
			}
		}
	}
}
