package spec

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// roundTripInputs are the valid conformance files and our own fixtures.
func roundTripInputs(t *testing.T) map[string][]byte {
	inputs := map[string][]byte{}
	for _, f := range conformanceFiles(t, "metadata/valid") {
		inputs[filepath.Base(f)] = readConformance(t, "metadata/valid/"+filepath.Base(f))
	}
	for _, name := range []string{"v2-extras.json", "v3-full.json", "v1-legacy.json", "v1-no-field-ids.json"} {
		inputs[name] = readTestdata(t, name)
	}
	return inputs
}

// v1DerivedKeys are the keys Java adds when it writes a v1 file that had
// only the legacy "schema" and "partition-spec".
var v1DerivedKeys = map[string]bool{
	"schemas": true, "current-schema-id": true, "partition-specs": true, "default-spec-id": true,
	"last-partition-id": true, "sort-orders": true, "default-sort-order-id": true,
}

func TestRoundTripSemanticallyEqual(t *testing.T) {
	for name, input := range roundTripInputs(t) {
		t.Run(name, func(t *testing.T) {
			m := mustParse(t, input)
			out, err := m.Marshal(false)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			in := normalizeMetadataJSON(decodeJSON(t, input)).(map[string]any)
			got := normalizeMetadataJSON(decodeJSON(t, out)).(map[string]any)
			if m.FormatVersion > 1 {
				if !reflect.DeepEqual(in, got) {
					t.Fatalf("round trip differs\n in:  %s\n out: %s", mustJSON(in), mustJSON(got))
				}
				return
			}
			// v1: everything read must be written back; the only additions
			// are the v2 forms of the legacy fields, as Java writes them.
			for k, v := range in {
				if k == "schema" || k == "partition-spec" {
					continue // checked by TestWriteV1LikeJava
				}
				if !reflect.DeepEqual(v, got[k]) {
					t.Errorf("key %q: in %s, out %s", k, mustJSON(v), mustJSON(got[k]))
				}
			}
			for k := range got {
				if _, ok := in[k]; !ok && !v1DerivedKeys[k] && k != "schema" && k != "partition-spec" {
					t.Errorf("v1 output adds key %q", k)
				}
			}
			if !bytes.Contains(out, []byte(`"schema":`)) || !bytes.Contains(out, []byte(`"partition-spec":`)) {
				t.Error("v1 output lacks the legacy schema / partition-spec")
			}
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestRoundTripStableValue(t *testing.T) {
	for name, input := range roundTripInputs(t) {
		t.Run(name, func(t *testing.T) {
			m1 := mustParse(t, input)
			b1, err := m1.Marshal(false)
			if err != nil {
				t.Fatal(err)
			}
			m2 := mustParse(t, b1)
			if !equalValues(m1, m2) {
				t.Fatalf("re-parsed value differs:\n%+v\n%+v", m1, m2)
			}
			b2, err := m2.Marshal(false)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b1, b2) {
				t.Fatalf("second write differs:\n%s\n%s", b1, b2)
			}
		})
	}
}

func TestWriteV1LikeJava(t *testing.T) {
	m := mustParse(t, readConformance(t, "metadata/valid/TableMetadataV1Valid.json"))
	out, err := m.Marshal(false)
	if err != nil {
		t.Fatal(err)
	}
	want := decodeJSON(t, readTestdata(t, "TableMetadataV1Valid.written.json"))
	if got := decodeJSON(t, out); !reflect.DeepEqual(got, want) {
		t.Fatalf("v1 output:\n%s\nwant (as Java writes it):\n%s", out, mustJSON(want))
	}
}

func TestV1PartitionFieldIDsAssigned(t *testing.T) {
	m := mustParse(t, readTestdata(t, "v1-no-field-ids.json"))
	spec := m.DefaultSpec()
	if spec == nil || len(spec.Fields) != 2 {
		t.Fatalf("default spec = %+v", spec)
	}
	checkEqual(t, "field ids", []int{spec.Fields[0].FieldID, spec.Fields[1].FieldID}, []int{1000, 1001})
	checkEqual(t, "last-partition-id", m.LastPartitionID, 1001)
	checkEqual(t, "table-uuid", m.TableUUID, "")

	out, err := m.Marshal(false)
	if err != nil {
		t.Fatal(err)
	}
	doc := decodeJSON(t, out).(map[string]any)
	legacy := doc["partition-spec"].([]any)
	if id := legacy[1].(map[string]any)["field-id"]; id != json.Number("1001") {
		t.Errorf("legacy partition-spec field-id = %v, want 1001", id)
	}
	if _, ok := doc["table-uuid"]; ok {
		t.Error("a v1 table without uuid must not gain one on write")
	}
}

func TestV1MixedFieldIDsFollowJava(t *testing.T) {
	// Java numbers a field without id one above the highest id seen so far.
	doc := strings.Replace(string(readTestdata(t, "v1-no-field-ids.json")),
		`{"name": "a", "transform": "identity", "source-id": 1}`,
		`{"name": "a", "transform": "identity", "source-id": 1, "field-id": 1005}`, 1)
	m := mustParse(t, []byte(doc))
	f := m.DefaultSpec().Fields
	checkEqual(t, "field ids", []int{f[0].FieldID, f[1].FieldID}, []int{1005, 1006})
	checkEqual(t, "last-partition-id", m.LastPartitionID, 1006)
}

func TestGzipMetadata(t *testing.T) {
	plain := readConformance(t, "metadata/valid/TableMetadataV2Valid.json")
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(plain)
	zw.Close()
	m := mustParse(t, z.Bytes())
	if m.LastSequenceNumber != 34 || len(m.Snapshots) != 2 {
		t.Fatalf("gzip metadata parsed to %+v", m)
	}
	out, err := m.Marshal(true)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 2 || out[0] != 0x1f || out[1] != 0x8b {
		t.Fatalf("Marshal(true) did not write gzip: % x", out[:min(len(out), 4)])
	}
	zr, err := gzip.NewReader(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	var unz bytes.Buffer
	if _, err := unz.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	if !json.Valid(unz.Bytes()) {
		t.Fatal("gzip payload is not JSON")
	}
	if !equalValues(m, mustParse(t, out)) {
		t.Error("gzip round trip changed the metadata")
	}
	if _, err := ParseMetadata([]byte{0x1f, 0x8b, 0x08, 0x00}); err == nil {
		t.Error("truncated gzip must fail")
	}
}

func TestCurrentSnapshotNoneEncoding(t *testing.T) {
	cases := []struct {
		file string
		want string
	}{
		{"metadata/valid/TableMetadataV1Valid.json", `"current-snapshot-id":-1`},
		{"metadata/valid/TableMetadataV2ValidMinimal.json", `"current-snapshot-id":-1`},
		{"metadata/valid/TableMetadataV3ValidMinimal.json", `"current-snapshot-id":null`},
	}
	for _, c := range cases {
		m := mustParse(t, readConformance(t, c.file))
		out, err := m.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(out, []byte(c.want)) {
			t.Errorf("%s: output lacks %s:\n%s", c.file, c.want, out)
		}
	}
	// null and absent read as none too.
	for _, v := range []string{`null`, `-1`} {
		doc := strings.Replace(string(readConformance(t, "metadata/valid/TableMetadataV2Valid.json")),
			`"current-snapshot-id": 3055729675574597004`, `"current-snapshot-id": `+v, 1)
		m := mustParse(t, []byte(doc))
		if m.CurrentSnapshot() != nil || len(m.Refs) != 0 {
			t.Errorf("current-snapshot-id %s: current %v refs %v", v, m.CurrentSnapshotID, m.Refs)
		}
	}
}

func TestRefsWrittenForV2(t *testing.T) {
	m := mustParse(t, readConformance(t, "metadata/valid/TableMetadataV2Valid.json"))
	out, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	doc := decodeJSON(t, out).(map[string]any)
	want := map[string]any{"main": map[string]any{"snapshot-id": json.Number("3055729675574597004"), "type": "branch"}}
	if !reflect.DeepEqual(doc["refs"], want) {
		t.Errorf("refs = %s, want %s", mustJSON(doc["refs"]), mustJSON(want))
	}
}

func TestExtrasKept(t *testing.T) {
	m := mustParse(t, readTestdata(t, "v2-extras.json"))
	checkEqual(t, "top-level extras", m.Extra, map[string]json.RawMessage{
		"x-vendor-top":  json.RawMessage(`{"nested":[1,"two",null,{"three":3.5}]}`),
		"x-vendor-flag": json.RawMessage(`true`),
		// next-row-id is not a v2 field: kept verbatim, not interpreted.
		"next-row-id": json.RawMessage(`99`),
	})
	if m.NextRowID != nil {
		t.Error("v2 next-row-id must not be interpreted")
	}
	s, ok := m.SnapshotByID(200)
	if !ok {
		t.Fatal("snapshot 200 missing")
	}
	checkEqual(t, "snapshot extra", s.Extra, map[string]json.RawMessage{
		"x-snapshot-engine": json.RawMessage(`{"name":"spark","version":"3.5"}`)})
	checkEqual(t, "refs", m.Refs, map[string]SnapshotRef{
		"main":  {SnapshotID: 300, Type: RefTypeBranch, MinSnapshotsToKeep: ptr(2), MaxSnapshotAgeMS: ptr(int64(3600000))},
		"audit": {SnapshotID: 200, Type: RefTypeBranch, MaxRefAgeMS: ptr(int64(604800000)), Extra: map[string]json.RawMessage{"x-ref-owner": json.RawMessage(`"etl"`)}},
		"v1.0":  {SnapshotID: 100, Type: RefTypeTag, MaxRefAgeMS: ptr(int64(31536000000))},
	})
	st := m.Statistics[0]
	checkEqual(t, "key-metadata", st.KeyMetadata, []byte{0, 1, 2, 3})
	checkEqual(t, "stats extra", st.Extra, map[string]json.RawMessage{"x-stats-extra": json.RawMessage(`"kept"`)})
	checkEqual(t, "blob", st.BlobMetadata[0], BlobMetadata{
		Type: "apache-datasketches-theta-v1", SnapshotID: 300, SequenceNumber: 3, Fields: []int{1, 2},
		Properties: map[string]string{"ndv": "42"}, Extra: map[string]json.RawMessage{"x-blob-extra": json.RawMessage(`7`)},
	})
	checkEqual(t, "partition stats extra", m.PartitionStatistics[0].Extra,
		map[string]json.RawMessage{"x-pstats-extra": json.RawMessage(`[1,2,3]`)})
	checkEqual(t, "property", m.Property("write.format.default", "avro"), "parquet")
	checkEqual(t, "property default", m.Property("missing", "dflt"), "dflt")
	nm, err := ParseNameMapping([]byte(m.Property("schema.name-mapping.default", "")))
	if err != nil {
		t.Fatal(err)
	}
	checkEqual(t, "name mapping", nm, NameMapping{{FieldID: ptr(1), Names: []string{"id", "record_id"}}})
}

func TestV3Fixture(t *testing.T) {
	m := mustParse(t, readTestdata(t, "v3-full.json"))
	s := m.CurrentSchema()
	types := map[string]Type{}
	for _, f := range s.Fields {
		types[f.Name] = f.Type
	}
	checkEqual(t, "types", []Type{types["event_ts"], types["ingest_ts"], types["payload"], types["shape"], types["area"], types["plain_geo"], types["nothing"]},
		[]Type{TimestampNsType{}, TimestampTzNsType{}, VariantType{}, GeometryType{CRS: "srid:3857"},
			GeographyType{CRS: "srid:4269", Algorithm: "karney"}, GeometryType{}, UnknownType{}})
	status, _ := s.FindField(9)
	checkEqual(t, "status defaults", []string{string(status.InitialDefault), string(status.WriteDefault)}, []string{`"new"`, `"open"`})
	spec := m.DefaultSpec()
	checkEqual(t, "multi-arg field", spec.Fields[1].SourceIDs, []int{1, 9})
	checkEqual(t, "unknown transform", spec.Fields[2].Transform, Transform{Kind: TransformUnknown, Raw: "zorder"})
	cur := m.CurrentSnapshot()
	checkEqual(t, "lineage", []any{cur.FirstRowID, cur.AddedRows, cur.KeyID}, []any{ptr(int64(100)), ptr(int64(50)), ptr("key-2")})
	checkEqual(t, "next-row-id", m.NextRowID, ptr(int64(150)))
	checkEqual(t, "encryption keys", m.EncryptionKeys, []EncryptedKey{
		{KeyID: "key-1", EncryptedKeyMetadata: []byte("secret-key-1"), Properties: map[string]string{"kms": "aws"}},
		{KeyID: "key-2", EncryptedKeyMetadata: []byte{0, 1, 2, 255}, EncryptedByID: ptr("key-1"),
			Extra: map[string]json.RawMessage{"x-key-extra": json.RawMessage(`1`)}},
	})
	out, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"source-ids":[1,9]`, `"encrypted-key-metadata":"AAEC/w=="`, `"type":"geography(srid:4269, karney)"`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("output lacks %s", want)
		}
	}
}

// encoding/json folds key case ("ſ" folds to "s"), so the lead's codecs read
// "ſource-id" into SourceID too; the known key must still win after a
// write and re-read.
func TestCaseFoldedKeysRoundTrip(t *testing.T) {
	base := string(readConformance(t, "metadata/valid/TableMetadataV2Valid.json"))
	doc := strings.Replace(base, `"source-id": 1,`, `"ſource-id": 3, "source-id": 1,`, 1)
	m1 := mustParse(t, []byte(doc))
	b, err := m1.Marshal(false)
	if err != nil {
		t.Fatal(err)
	}
	m2 := mustParse(t, b)
	if got := m2.PartitionSpecs[0].Fields[0].SourceID; got != 1 || !equalValues(m1, m2) {
		t.Fatalf("source-id after round trip = %d, want 1; written:\n%s", got, b)
	}
}

// Java writes "<", ">" and "&" unescaped; so must we, in known fields and
// in fields we keep without knowing them, or a file read from another
// writer comes back with other bytes (the fuzzer found this).
func TestHTMLCharactersWrittenAsJavaDoes(t *testing.T) {
	doc := strings.Replace(string(readConformance(t, "metadata/valid/TableMetadataV2Valid.json")),
		`"manifest-list": "s3://a/b/2.avro"`, `"manifest-list": "s3://a/b/2.avro", "x-vendor": "a<b>&c"`, 1)
	doc = strings.Replace(doc, `"location": "s3://bucket/test/location"`, `"location": "s3://bucket/a&b<c>"`, 1)
	out, err := mustParse(t, []byte(doc)).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"x-vendor":"a<b>&c"`, `"location":"s3://bucket/a&b<c>"`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
}
