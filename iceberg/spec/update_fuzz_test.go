package spec

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"time"
)

// FuzzParseUpdates checks that any update list we accept writes back to
// JSON that reads as the same list, and that applying it to a real table
// never panics.
func FuzzParseUpdates(f *testing.F) {
	var all []string
	for _, g := range updateGoldens {
		f.Add([]byte("[" + g.json + "]"))
		all = append(all, g.json)
	}
	f.Add([]byte("[" + joinJSON(all) + "]"))
	// Snapshots from the conformance vectors, as add-snapshot updates.
	for _, path := range conformanceFiles(f, "metadata/valid") {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		m, err := ParseMetadata(data)
		if err != nil {
			f.Fatal(err)
		}
		for _, s := range m.Snapshots {
			b, err := MarshalUpdates([]Update{AddSnapshot{s}, mainRef(s.SnapshotID)})
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	base := mustParse(f, readConformance(f, "metadata/valid/TableMetadataV2Valid.json"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ups, err := UnmarshalUpdates(data)
		if err != nil {
			return
		}
		out, err := MarshalUpdates(ups)
		if err != nil {
			t.Fatalf("cannot write updates we read: %v", err)
		}
		again, err := UnmarshalUpdates(out)
		if err != nil {
			t.Fatalf("cannot read updates we wrote: %v\n%s", err, out)
		}
		out2, err := MarshalUpdates(again)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("update JSON is not stable:\n%s\n%s", out, out2)
		}
		before := mustMarshal(t, base)
		m, err := ApplyUpdates(base, ups, ApplyOptions{Now: time.UnixMilli(1_602_638_600_000), BaseMetadataLocation: "m.json"})
		if !bytes.Equal(before, mustMarshal(t, base)) {
			t.Fatal("ApplyUpdates changed its base")
		}
		if err == nil {
			if _, err := m.Marshal(false); err != nil {
				t.Fatalf("applied metadata does not write: %v", err)
			}
		}
	})
}

// FuzzParseRequirements checks requirement JSON the same way, and that
// Validate never panics.
func FuzzParseRequirements(f *testing.F) {
	for _, g := range requirementGoldens {
		f.Add([]byte("[" + g.json + "]"))
	}
	base := mustParse(f, readConformance(f, "metadata/valid/TableMetadataV2Valid.json"))
	f.Fuzz(func(t *testing.T, data []byte) {
		reqs, err := UnmarshalRequirements(data)
		if err != nil {
			return
		}
		out, err := MarshalRequirements(reqs)
		if err != nil {
			t.Fatalf("cannot write requirements we read: %v", err)
		}
		again, err := UnmarshalRequirements(out)
		if err != nil {
			t.Fatalf("cannot read requirements we wrote: %v\n%s", err, out)
		}
		if out2, _ := MarshalRequirements(again); !bytes.Equal(out, out2) {
			t.Fatalf("requirement JSON is not stable:\n%s\n%s", out, out2)
		}
		_ = ValidateRequirements(base, reqs)
		_ = ValidateRequirements(nil, reqs)
	})
}

func joinJSON(elems []string) string {
	raw := make([]json.RawMessage, len(elems))
	for i, e := range elems {
		raw[i] = json.RawMessage(e)
	}
	b, _ := json.Marshal(raw)
	return string(b[1 : len(b)-1])
}
