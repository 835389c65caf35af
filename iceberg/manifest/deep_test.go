package manifest

import (
	"strings"
	"testing"

	"github.com/icectl/icectl/internal/testing/crafted"
)

// Errors about a deep or huge schema stay short: the Avro library quotes
// whole schemas in some of its errors.
func TestDeepSchemaErrorsShort(t *testing.T) {
	deep := func(open, inner, close string, n int) string {
		return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
	}
	for name, schema := range map[string]string{
		"nested unions": `{"type":"record","name":"manifest_entry","fields":[{"name":"status","type":` +
			deep(`["int",`, `"long"`, `]`, 20000) + `,"field-id":0}]}`,
		"nested arrays unknown type": deep(`{"type":"array","items":`, `"nosuchtype"`, `}`, 20000),
		"nested records": `{"type":"record","name":"manifest_entry","fields":[{"name":"data_file","field-id":2,"type":` +
			deep(`{"type":"record","name":"r`+`","fields":[{"name":"f","type":`, `"int"`, `}]}`, 3000) + `}]}`,
		"huge name":  `{"type":"record","name":"` + strings.Repeat("n", 1<<20) + `","fields":[{"name":"f","type":"nosuchtype"}]}`,
		"bad header": `{"type":"record","name":"manifest_entry","fields":[]}`,
	} {
		meta := map[string]string{"avro.schema": schema, "avro.codec": "null", "partition-spec-id": strings.Repeat("9x", 1<<20)}
		data := crafted.AvroContainer(meta)
		for reader, err := range map[string]error{"manifest": drainManifest(data), "list": drainList(data), "scanner": drainScan(data)} {
			if err == nil {
				t.Errorf("%s, %s: no error", name, reader)
			} else if len(err.Error()) > 400 {
				t.Errorf("%s, %s: error of %d bytes: %.200s", name, reader, len(err.Error()), err)
			}
		}
	}
}
