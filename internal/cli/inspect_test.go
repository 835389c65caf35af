package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/icectl/icectl/iceberg/puffin"
)

// textField returns the value of the first text row whose key is key.
func textField(t *testing.T, out, key string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(key) + `\s{2,}(.*)$`)
	m := re.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q row in:\n%s", key, out)
	}
	return m[1]
}

func TestInspectDV(t *testing.T) {
	path := vector(t, "dv/small-alternating-values-position-index.bin")
	out := runCLI(t, nil, "inspect", "dv", path).mustSucceed(t).stdout
	for key, want := range map[string]string{"cardinality": "5", "positions": "1, 3, 5, 7, 9", "crc32": "0xB3FB20BE", "length": "50 bytes"} {
		if got := textField(t, out, key); got != want {
			t.Errorf("text %s = %q, want %q", key, got, want)
		}
	}

	m := runCLI(t, nil, "-o", "json", "inspect", "dv", path).mustSucceed(t).decodeJSON(t)
	if got := num(t, m, "cardinality"); got != "5" {
		t.Errorf("json cardinality = %s", got)
	}
	if got := fmt.Sprint(at(t, m, "positions")); got != "[1 3 5 7 9]" {
		t.Errorf("json positions = %s", got)
	}
	if m["crc32"] != "0xB3FB20BE" || m["positions_truncated"] != false {
		t.Errorf("json = %v", m)
	}

	m = runCLI(t, nil, "-o", "json", "inspect", "dv", vector(t, "dv/small-and-large-values-position-index.bin")).mustSucceed(t).decodeJSON(t)
	if got := fmt.Sprint(at(t, m, "positions")); got != "[100 101 2147483747 2147483748]" {
		t.Errorf("large positions = %s", got)
	}
	if m["crc32"] != "0x15EB1C7C" {
		t.Errorf("crc32 = %v", m["crc32"])
	}

	m = runCLI(t, nil, "-o", "json", "inspect", "dv", vector(t, "dv/empty-position-index.bin")).mustSucceed(t).decodeJSON(t)
	if num(t, m, "cardinality") != "0" || len(at(t, m, "positions").([]any)) != 0 || m["crc32"] != "0xBF18480C" {
		t.Errorf("empty DV json = %v", m)
	}
}

// The same blob, cut out of a Puffin file by offset and length.
func TestInspectDVInPuffin(t *testing.T) {
	path := vector(t, "puffin/single-blob-dv.puffin")
	m := runCLI(t, nil, "-o", "json", "inspect", "dv", path, "--offset", "4", "--length", "50").mustSucceed(t).decodeJSON(t)
	if got := fmt.Sprint(at(t, m, "positions")); got != "[1 3 5 7 9]" || num(t, m, "offset") != "4" {
		t.Errorf("json = %v", m)
	}
	// One byte off: not a deletion vector.
	r := runCLI(t, nil, "inspect", "dv", path, "--offset", "5", "--length", "50")
	if r.code != ExitFailure || !strings.Contains(r.stderr, "deletion vector") {
		t.Errorf("misplaced blob: exit %d, stderr %q", r.code, r.stderr)
	}
	r = runCLI(t, nil, "inspect", "dv", path, "--offset", "380", "--length", "50")
	if r.code != ExitFailure || !strings.Contains(r.stderr, "beyond the end") {
		t.Errorf("blob past the end: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestInspectDVPositionLimit(t *testing.T) {
	bm := roaring64.New()
	for p := uint64(0); p < 100; p++ {
		bm.Add(p * 3)
	}
	blob, err := puffin.EncodeDV(bm)
	if err != nil {
		t.Fatal(err)
	}
	path := writeTemp(t, "dv.bin", blob)

	m := runCLI(t, nil, "-o", "json", "inspect", "dv", path).mustSucceed(t).decodeJSON(t)
	pos := at(t, m, "positions").([]any)
	if len(pos) != defaultPositions || m["positions_truncated"] != true || num(t, m, "cardinality") != "100" {
		t.Errorf("default: %d positions, truncated %v, cardinality %v", len(pos), m["positions_truncated"], m["cardinality"])
	}
	if num(t, m, "positions", 19) != "57" {
		t.Errorf("20th position = %v", pos[19])
	}
	out := runCLI(t, nil, "inspect", "dv", path).mustSucceed(t).stdout
	if !strings.Contains(out, "first 20 of 100; --all lists every position") {
		t.Errorf("text does not say the list is cut:\n%s", out)
	}

	m = runCLI(t, nil, "-o", "json", "inspect", "dv", path, "--all").mustSucceed(t).decodeJSON(t)
	if pos := at(t, m, "positions").([]any); len(pos) != 100 || m["positions_truncated"] != false || num(t, m, "positions", 99) != "297" {
		t.Errorf("--all: %d positions, truncated %v", len(pos), m["positions_truncated"])
	}
}

func TestInspectPuffinDV(t *testing.T) {
	path := vector(t, "puffin/single-blob-dv.puffin")
	out := runCLI(t, nil, "inspect", "puffin", path).mustSucceed(t).stdout
	const ref = "s3://warehouse/db/table/data/00000-0-abc.parquet"
	if got := textField(t, out, "referenced data file"); got != ref {
		t.Errorf("referenced data file = %q", got)
	}
	if got := textField(t, out, "positions"); got != "1, 3, 5, 7, 9" {
		t.Errorf("positions = %q", got)
	}
	if got := textField(t, out, "created-by"); got != "iceberg-go DV cross-client fixtures (apache/iceberg)" {
		t.Errorf("created-by = %q", got)
	}

	m := runCLI(t, nil, "-o", "json", "inspect", "puffin", path).mustSucceed(t).decodeJSON(t)
	if num(t, m, "footer_size") != "330" || num(t, m, "blobs", 0, "offset") != "4" || num(t, m, "blobs", 0, "length") != "50" ||
		num(t, m, "blobs", 0, "fields", 0) != "2147483645" || num(t, m, "blobs", 0, "snapshot_id") != "-1" {
		t.Errorf("blob metadata = %v", m)
	}
	dv := at(t, m, "blobs", 0, "deletion_vector")
	if at(t, dv, "referenced_data_file") != ref || num(t, dv, "cardinality") != "5" || fmt.Sprint(at(t, dv, "positions")) != "[1 3 5 7 9]" {
		t.Errorf("deletion_vector = %v", dv)
	}
}

func TestInspectPuffinOtherBlobs(t *testing.T) {
	m := runCLI(t, nil, "-o", "json", "inspect", "puffin", vector(t, "puffin/sample-metric-data-compressed-zstd.bin")).mustSucceed(t).decodeJSON(t)
	if at(t, m, "properties", "created-by") != "Test 1234" || num(t, m, "footer_size") != "314" {
		t.Errorf("file = %v", m)
	}
	blobs := at(t, m, "blobs").([]any)
	if len(blobs) != 2 {
		t.Fatalf("%d blobs", len(blobs))
	}
	if at(t, blobs[1], "type") != "some-other-blob" || num(t, blobs[1], "offset") != "26" || num(t, blobs[1], "length") != "77" ||
		at(t, blobs[1], "compression_codec") != "zstd" || at(t, blobs[1], "deletion_vector") != nil {
		t.Errorf("blob 1 = %v", blobs[1])
	}

	m = runCLI(t, nil, "-o", "json", "inspect", "puffin", vector(t, "puffin/empty-puffin-uncompressed.bin")).mustSucceed(t).decodeJSON(t)
	if len(at(t, m, "blobs").([]any)) != 0 || num(t, m, "footer_size") != "28" {
		t.Errorf("empty puffin = %v", m)
	}
}

func TestInspectMetadata(t *testing.T) {
	path := vector(t, "metadata/valid/TableMetadataV2Valid.json")
	out := runCLI(t, nil, "inspect", "metadata", path).mustSucceed(t).stdout
	for key, want := range map[string]string{
		"table uuid":          "9c12d441-03fe-4693-9a96-a0705ddf69c1",
		"current snapshot id": "3055729675574597004",
		"last updated":        "2020-10-14T01:22:53.590Z (1602638573590)",
		"format version":      "2",
	} {
		if got := textField(t, out, key); got != want {
			t.Errorf("text %s = %q, want %q", key, got, want)
		}
	}
	if !strings.Contains(out, "snapshot 3055729675574597004 (current) append") || !strings.Contains(out, "bucket[4](3)  desc  nulls-last") {
		t.Errorf("text lacks the current snapshot or the sort order:\n%s", out)
	}

	m := runCLI(t, nil, "-o", "json", "inspect", "metadata", path).mustSucceed(t).decodeJSON(t)
	// Exact digits: an int64 that went through float64 would end in ...000.
	if got := num(t, m, "current_snapshot_id"); got != "3055729675574597004" {
		t.Errorf("current_snapshot_id = %s", got)
	}
	if got := num(t, m, "snapshots", 1, "parent_snapshot_id"); got != "3051729675574597004" {
		t.Errorf("parent_snapshot_id = %s", got)
	}
	if num(t, m, "refs", "main", "snapshot_id") != "3055729675574597004" || at(t, m, "refs", "main", "type") != "branch" {
		t.Errorf("refs = %v", m["refs"])
	}
	if at(t, m, "snapshots", 0, "timestamp") != "2018-01-04T21:22:35.770Z" || num(t, m, "last_sequence_number") != "34" {
		t.Errorf("snapshot 0 = %v", at(t, m, "snapshots", 0))
	}
	if at(t, m, "schemas", 1, "fields", 1, "doc") != "comment" || fmt.Sprint(at(t, m, "schemas", 1, "identifier_field_ids")) != "[1 2]" {
		t.Errorf("schema 1 = %v", at(t, m, "schemas", 1))
	}

	m = runCLI(t, nil, "-o", "json", "inspect", "metadata", vector(t, "metadata/valid/TableMetadataStatisticsFiles.json")).mustSucceed(t).decodeJSON(t)
	if at(t, m, "statistics", 0, "statistics_path") != "s3://a/b/stats.puffin" || num(t, m, "statistics", 0, "file_footer_size_in_bytes") != "42" ||
		at(t, m, "statistics", 0, "blob_metadata", 0, "type") != "ndv" {
		t.Errorf("statistics = %v", m["statistics"])
	}

	m = runCLI(t, nil, "-o", "json", "inspect", "metadata", vector(t, "metadata/valid/TableMetadataV3ValidMinimal.json")).mustSucceed(t).decodeJSON(t)
	if num(t, m, "format_version") != "3" || num(t, m, "next_row_id") != "0" || m["current_snapshot_id"] != nil {
		t.Errorf("v3 minimal = %v", m)
	}
}

func TestInspectInvalidMetadataExit1(t *testing.T) {
	cases := map[string]string{
		"TableMetadataUnsupportedVersion.json":       "newer than icectl supports",
		"TableMetadataV2MissingSchemas.json":         "schemas",
		"TableMetadataV2MissingLastPartitionId.json": "last-partition-id",
		"TableMetadataV1MissingSchemaType.json":      "type",
	}
	for name, want := range cases {
		path := vector(t, "metadata/invalid/"+name)
		r := runCLI(t, nil, "inspect", "metadata", path)
		if r.code != ExitFailure {
			t.Errorf("%s: exit %d, want 1", name, r.code)
		}
		if r.stdout != "" || !strings.HasPrefix(r.stderr, "icectl: "+path+": ") || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: stderr %q, want the path and %q", name, r.stderr, want)
		}
	}
	r := runCLI(t, nil, "inspect", "metadata", filepath.Join(t.TempDir(), "missing.json"))
	if r.code != ExitFailure || !strings.Contains(r.stderr, "missing.json") {
		t.Errorf("missing file: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestInspectManifestList(t *testing.T) {
	path := vector(t, "avro/snap-2354745328521181395-1-179b4fb1-0366-4f7d-ad35-99ee8da0abf5.avro")
	m := runCLI(t, nil, "-o", "json", "inspect", "manifest", path).mustSucceed(t).decodeJSON(t)
	if m["kind"] != "manifest_list" || num(t, m, "header", "snapshot_id") != "2354745328521181395" ||
		num(t, m, "header", "parent_snapshot_id") != "7817332053627255703" || num(t, m, "header", "sequence_number") != "2" {
		t.Errorf("header = %v", m["header"])
	}
	entries := at(t, m, "entries").([]any)
	if len(entries) != 2 {
		t.Fatalf("%d entries, want 2", len(entries))
	}
	for i, want := range [][4]string{{"7863", "1", "0", "51793"}, {"7862", "0", "1", "0"}} {
		got := [4]string{num(t, entries[i], "manifest_length"), num(t, entries[i], "added_files_count"),
			num(t, entries[i], "deleted_files_count"), num(t, entries[i], "added_rows_count")}
		if got != want {
			t.Errorf("entry %d: length/added/deleted files/added rows = %v, want %v", i, got, want)
		}
	}

	out := runCLI(t, nil, "inspect", "manifest", path).mustSucceed(t).stdout
	if got := textField(t, out, "rows added/existing/deleted"); got != "51793 / 0 / 0" {
		t.Errorf("text rows = %q", got)
	}
	if got := textField(t, out, "length"); got != "7.7 KiB (7863 bytes)" {
		t.Errorf("text length = %q", got)
	}

	m = runCLI(t, nil, "-o", "json", "inspect", "manifest", vector(t, "avro/duckdb_v3_manifest_list.avro")).mustSucceed(t).decodeJSON(t)
	if num(t, m, "header", "format_version") != "3" || at(t, m, "entries", 1, "content") != "deletes" ||
		num(t, m, "entries", 0, "first_row_id") != "0" || num(t, m, "entries", 1, "added_snapshot_id") != "226306597092543916" {
		t.Errorf("duckdb v3 list = %v", m)
	}
}

func TestInspectManifest(t *testing.T) {
	path := vector(t, "avro/179b4fb1-0366-4f7d-ad35-99ee8da0abf5-m0.avro")
	m := runCLI(t, nil, "-o", "json", "inspect", "manifest", path).mustSucceed(t).decodeJSON(t)
	if m["kind"] != "manifest" || at(t, m, "header", "content") != "data" || num(t, m, "header", "format_version") != "2" {
		t.Errorf("header = %v", m["header"])
	}
	e := at(t, m, "entries", 0)
	if at(t, e, "status") != "deleted" || num(t, e, "snapshot_id") != "2354745328521181395" ||
		num(t, e, "sequence_number") != "1" || num(t, e, "file_sequence_number") != "1" || num(t, e, "data_file", "record_count") != "60175" {
		t.Errorf("entry = %v", e)
	}
	if len(at(t, m, "entries").([]any)) != 1 {
		t.Errorf("entries = %v", m["entries"])
	}

	out := runCLI(t, nil, "inspect", "manifest", vector(t, "avro/179b4fb1-0366-4f7d-ad35-99ee8da0abf5-m1.avro")).mustSucceed(t).stdout
	if !regexp.MustCompile(`(?m)^entry 0 added data \S+\.parquet$`).MatchString(out) {
		t.Errorf("no entry heading:\n%s", out)
	}
	for key, want := range map[string]string{"record count": "51793", "file size": "1.2 MiB (1225526 bytes)", "sequence number": "-"} {
		if got := textField(t, out, key); got != want {
			t.Errorf("text %s = %q, want %q", key, got, want)
		}
	}
	// Bounds decoded by the schema: l_returnflag is a string column.
	if !regexp.MustCompile(`(?m)^\s+l_returnflag\s+9\s.*"A"\s+"R"$`).MatchString(out) {
		t.Errorf("column bounds not decoded:\n%s", out)
	}
}

func TestInspectManifestRejectsOtherAvro(t *testing.T) {
	r := runCLI(t, nil, "inspect", "manifest", vector(t, "dv/empty-position-index.bin"))
	if r.code != ExitFailure || !strings.Contains(r.stderr, "not an Avro object container file") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// Every prefix-truncated vector fails with exit 1 and one line: never a
// panic, never a partial success.
func TestInspectTruncatedFiles(t *testing.T) {
	vectors := map[string]string{
		"metadata/valid/TableMetadataV2Valid.json":                                  "metadata",
		"avro/manifest-list-v2-1.avro":                                              "manifest",
		"avro/179b4fb1-0366-4f7d-ad35-99ee8da0abf5-m1.avro":                         "manifest",
		"puffin/single-blob-dv.puffin":                                              "puffin",
		"puffin/sample-metric-data-uncompressed.bin":                                "puffin",
		"dv/small-and-large-values-position-index.bin":                              "dv",
		"avro/snap-7817332053627255703-1-787a5996-87e9-4d93-b258-066d524e82cc.avro": "manifest",
	}
	for rel, kind := range vectors {
		data, err := os.ReadFile(vector(t, rel))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{0, 1, 4, len(data) / 3, len(data) / 2, len(data) - 8, len(data) - 1} {
			path := writeTemp(t, "truncated", data[:n])
			for _, out := range []string{"text", "json"} {
				r := runCLI(t, nil, "-o", out, "inspect", kind, path)
				if r.code != ExitFailure {
					t.Errorf("%s cut to %d bytes (%s): exit %d", rel, n, out, r.code)
				}
			}
		}
	}
}

// TestInspectDVFromFilesDeletes: each DV as icectl files --deletes prints
// it (FILE@OFFSET) is what inspect dv accepts, copied as it is; inspect dv
// on a whole Puffin file (--all) decodes every DV in it.
func TestInspectDVFromFilesDeletes(t *testing.T) {
	fx := dvFixture(t, true)
	fx.run(t, "dv", "merge", "db.t").mustSucceed(t)
	want := map[string]string{"a": "[1 2]", "b": "[3]", "c": "[4]"} // data file -> deleted positions
	text := fx.run(t, "files", "db.t", "--deletes").mustSucceed(t).stdout
	puffins := map[string]int{}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(text), "\n")[1:] {
		cells := strings.Fields(line)
		if len(cells) < 2 || cells[1] != "deletion-vector" {
			continue
		}
		ref, dataFile := cells[0], cells[len(cells)-1]
		r := runCLI(t, nil, "inspect", "dv", ref, "-o", "json")
		if r.code != ExitOK {
			t.Fatalf("inspect dv %s: exit %d: %s", ref, r.code, r.stderr)
		}
		m := r.decodeJSON(t)
		name := strings.TrimSuffix(filepath.Base(dataFile), ".parquet")
		if m["referenced_data_file"] != dataFile || fmt.Sprint(at(t, m, "positions")) != want[name] {
			t.Errorf("inspect dv %s: %v", ref, m)
		}
		runCLI(t, nil, "inspect", "dv", ref).mustSucceed(t) // text too
		puffins[strings.TrimPrefix(m["file"].(string), "file://")]++
		seen++
	}
	if seen != len(want) {
		t.Fatalf("%d DVs listed, want %d:\n%s", seen, len(want), text)
	}
	for path, n := range puffins {
		m := runCLI(t, nil, "inspect", "dv", "--all", path, "-o", "json").mustSucceed(t).decodeJSON(t)
		if dvs, _ := m["deletion_vectors"].([]any); len(dvs) != n {
			t.Errorf("inspect dv --all %s: %d DVs, want %d: %v", path, len(dvs), n, m)
		}
		if out := runCLI(t, nil, "inspect", "dv", "--all", path).mustSucceed(t).stdout; strings.Count(out, "referenced data file") != n {
			t.Errorf("inspect dv --all %s (text):\n%s", path, out)
		}
	}
	// An offset where no blob starts names those that do.
	for path := range puffins {
		if r := runCLI(t, nil, "inspect", "dv", path+"@1"); r.code != ExitFailure || !strings.Contains(r.stderr, "deletion vectors start at 4") {
			t.Errorf("inspect dv %s@1: exit %d, %q", path, r.code, r.stderr)
		}
	}
}
