package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/crafted"
)

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// headers returns the header metadata of a real manifest and a real
// manifest list, for crafted files that get past the header checks.
func headers(t testing.TB) (manifestMeta, listMeta map[string]string) {
	t.Helper()
	schema, ps := allTypesTable()
	d, _ := writeManifest(t, WriterOptions{Version: 2, Schema: schema, Spec: ps, SnapshotID: 7}, sampleEntries(2, ManifestContentData))
	mr, err := OpenManifest(bytes.NewReader(d))
	if err != nil {
		t.Fatal(err)
	}
	lr, err := OpenManifestList(bytes.NewReader(conformanceFiles(t)["manifest-list-v2-1.avro"]))
	if err != nil {
		t.Fatal(err)
	}
	manifestMeta, listMeta = mr.Meta().Metadata, lr.Header().Metadata
	manifestMeta["avro.codec"], listMeta["avro.codec"] = "deflate", "deflate"
	return manifestMeta, listMeta
}

// drainScan reads data with an EntryScanner and returns the first error.
func drainScan(data []byte) error {
	s := NewEntryScanner(NewScanCache())
	defer s.Close()
	_, _, err := scanAll(s, data, ManifestFile{})
	return err
}

// A block that inflates a thousand times its size is refused once the
// output passes the proportion rule, before it is inflated whole: by every
// reader, with an error saying why, allocating a fraction of a 64 MiB bomb.
func TestInflateBombRefused(t *testing.T) {
	mm, lm := headers(t)
	bomb := crafted.DeflateZeros(64 << 20)
	for name, c := range map[string]struct {
		data  []byte
		drain func([]byte) error
	}{
		"manifest":      {crafted.AvroContainer(mm, crafted.Block{Count: 1, Data: bomb}), drainManifest},
		"manifest list": {crafted.AvroContainer(lm, crafted.Block{Count: 1, Data: bomb}), drainList},
		"entry scanner": {crafted.AvroContainer(mm, crafted.Block{Count: 1, Data: bomb}), drainScan},
		// Many small blocks add up: the rule is per file, not per block.
		"many blocks": {crafted.AvroContainer(mm, repeat(crafted.Block{Count: 1, Data: crafted.DeflateZeros(900 << 10)}, 20)...), drainManifest},
	} {
		var err error
		n := allocated(func() { err = c.drain(c.data) })
		if err == nil || !strings.Contains(err.Error(), "times its compressed size") {
			t.Errorf("%s: error %v, want a refusal of a file out of proportion", name, err)
		}
		// A few times the proportion rule's limit (the output buffer
		// grows by doubling), and well under the 64 MiB of the bomb.
		if limit := uint64(InflateAllowance + MaxInflateRatio*len(c.data)); n > 3*limit || n > 48<<20 {
			t.Errorf("%s: reading a %d-byte bomb allocated %d bytes", name, len(c.data), n)
		}
	}
}

func repeat(b crafted.Block, n int) []crafted.Block {
	out := make([]crafted.Block, n)
	for i := range out {
		out[i] = b
	}
	return out
}

// Errors about a block name its codec.
func TestBlockErrorNamesCodec(t *testing.T) {
	mm, lm := headers(t)
	garbage := crafted.Block{Count: 1, Data: []byte{0xff, 0xfe, 0xfd, 0xfc}}
	for name, err := range map[string]error{
		"manifest":      drainManifest(crafted.AvroContainer(mm, garbage)),
		"manifest list": drainList(crafted.AvroContainer(lm, garbage)),
		"entry scanner": drainScan(crafted.AvroContainer(mm, garbage)),
	} {
		if err == nil || !strings.Contains(err.Error(), "decompress avro block (deflate)") {
			t.Errorf("%s: %v, want the codec named", name, err)
		}
	}
}

// Readers sharing a budget fail, rather than hold more than it together,
// and give back what they held when closed.
func TestBudgetShared(t *testing.T) {
	mm, _ := headers(t)
	data := crafted.AvroContainer(mm, crafted.Block{Count: 1, Data: crafted.DeflateZeros(900 << 10)})
	budget := NewBudget(3 << 19) // 1.5 MiB: room for one such block
	a, err := OpenManifest(bytes.NewReader(data), WithBudget(budget))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = a.Next() // holds the inflated block, whatever it decodes to
	if budget.Held() == 0 {
		t.Fatal("a reader holding a block charged nothing to the budget")
	}
	b, err := OpenManifest(bytes.NewReader(data), WithBudget(budget))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Next(); err == nil || !strings.Contains(err.Error(), "budget") {
		t.Errorf("second reader: %v, want a budget error", err)
	}
	b.Close()
	a.Close()
	if h := budget.Held(); h != 0 {
		t.Errorf("closed readers still hold %d bytes of the budget", h)
	}
	c, err := OpenManifest(bytes.NewReader(data), WithBudget(budget))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Next(); err != nil && strings.Contains(err.Error(), "budget") {
		t.Errorf("after the others closed: %v", err)
	}
	// Scanners of one cache share its budget the same way.
	cache := NewScanCache()
	s := NewEntryScanner(cache)
	_, _, _ = scanAll(s, data, ManifestFile{})
	if cache.Budget().Held() == 0 {
		t.Error("a scanner's block is not charged to its cache's budget")
	}
	s.Close()
	if h := cache.Budget().Held(); h != 0 {
		t.Errorf("a closed scanner still holds %d bytes", h)
	}
}

// A real manifest reads to the end within the proportion rule.
func TestRealManifestsWithinProportion(t *testing.T) {
	for name, d := range conformanceFiles(t) {
		drain := drainManifest
		if isList(name) {
			drain = drainList
		}
		if err := drain(d); err != nil && !errors.Is(err, io.EOF) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A manifest of many files without metrics, with regular paths, in the
// partitions of one string column, compresses far more than manifests
// with column metrics (40 times here, more with longer paths) and must still be read: a
// file icectl writes is never taken for a bomb.
func TestRegularManifestNotABomb(t *testing.T) {
	schema := &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "cat", Type: spec.StringType{}},
	}}
	ps := spec.PartitionSpec{ID: 0, Fields: []spec.PartitionField{{SourceID: 2, FieldID: 1000, Name: "cat", Transform: spec.ParseTransform("identity")}}}
	var es []Entry
	for p := range 100 {
		cat := fmt.Sprintf("c%03d", p)
		for i := range 1000 {
			es = append(es, Entry{Status: StatusAdded, DataFile: DataFile{Content: ContentData, FileFormat: "PARQUET",
				FilePath: fmt.Sprintf("s3://analytics-prod-lake/warehouse/analytics.db/events_by_category/data/cat=%s/f%05d.parquet", cat, i), Partition: []any{cat},
				RecordCount: 1000, FileSizeInBytes: 1 << 20}})
		}
	}
	data, _ := writeManifest(t, WriterOptions{Version: 2, Content: ManifestContentData, Schema: schema, Spec: ps, SnapshotID: 7}, es)
	if err := drainManifest(data); err != nil {
		t.Fatalf("a regular manifest of %d files (%d bytes): %v", len(es), len(data), err)
	}
}
