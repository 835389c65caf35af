package manifest

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/hamba/avro/v2"
	"github.com/icectl/icectl/iceberg/spec"
)

// readAllEntries decodes every entry of a manifest with opts.
func readAllEntries(data []byte, opts ...ReadOption) ([]Entry, error) {
	mr, err := OpenManifest(bytes.NewReader(data), opts...)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for {
		e, err := mr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
}

// projected is what WithoutMetrics must return for a fully decoded entry.
func projected(e Entry) Entry {
	df := &e.DataFile
	df.ColumnSizes, df.ValueCounts, df.NullValueCounts, df.NaNValueCounts, df.SplitOffsets = nil, nil, nil, nil, nil
	df.LowerBounds = onlyFilePathBound(df.LowerBounds)
	df.UpperBounds = onlyFilePathBound(df.UpperBounds)
	return e
}

func onlyFilePathBound(m map[int][]byte) map[int][]byte {
	v, ok := m[spec.FieldIDFilePath]
	if !ok {
		return nil
	}
	return map[int][]byte{spec.FieldIDFilePath: v}
}

// compareProjected checks every field of a projected decode against the
// full decode of the same manifest.
func compareProjected(t *testing.T, what string, data []byte) {
	t.Helper()
	full, err := readAllEntries(data)
	if err != nil {
		t.Fatalf("%s: full decode: %v", what, err)
	}
	proj, err := readAllEntries(data, WithoutMetrics())
	if err != nil {
		t.Fatalf("%s: projected decode: %v", what, err)
	}
	if len(full) != len(proj) {
		t.Fatalf("%s: %d entries projected, %d in full", what, len(proj), len(full))
	}
	for i := range full {
		want := projected(full[i])
		got := proj[i]
		if !reflect.DeepEqual(got.Status, want.Status) || !reflect.DeepEqual(got.SnapshotID, want.SnapshotID) ||
			!reflect.DeepEqual(got.SequenceNumber, want.SequenceNumber) ||
			!reflect.DeepEqual(got.FileSequenceNumber, want.FileSequenceNumber) {
			t.Errorf("%s entry %d: header fields differ: got %+v, want %+v", what, i, got, want)
		}
		gv, wv := reflect.ValueOf(got.DataFile), reflect.ValueOf(want.DataFile)
		for f := 0; f < gv.NumField(); f++ {
			if !reflect.DeepEqual(gv.Field(f).Interface(), wv.Field(f).Interface()) {
				t.Errorf("%s entry %d: data_file.%s = %#v projected, want %#v", what, i,
					gv.Type().Field(f).Name, gv.Field(f).Interface(), wv.Field(f).Interface())
			}
		}
		df := got.DataFile
		if df.ColumnSizes != nil || df.ValueCounts != nil || df.NullValueCounts != nil || df.NaNValueCounts != nil || df.SplitOffsets != nil {
			t.Errorf("%s entry %d: metrics decoded in projected mode: %+v", what, i, df)
		}
		for _, m := range []map[int][]byte{df.LowerBounds, df.UpperBounds} {
			for id := range m {
				if id != spec.FieldIDFilePath {
					t.Errorf("%s entry %d: bound of column %d kept in projected mode", what, i, id)
				}
			}
		}
	}
}

func TestWithoutMetricsConformance(t *testing.T) {
	n := 0
	for name, data := range conformanceFiles(t) {
		if isList(name) {
			continue
		}
		compareProjected(t, name, data)
		n++
	}
	if n == 0 {
		t.Fatal("no conformance manifests")
	}
}

func TestWithoutMetricsGenerated(t *testing.T) {
	schema, ps := allTypesTable()
	for _, version := range []int{2, 3} {
		for _, content := range []ManifestContent{ManifestContentData, ManifestContentDeletes} {
			es := sampleEntries(version, content)
			for i := range es {
				df := &es[i].DataFile
				if df.Content == ContentPositionDeletes {
					// A file-scoped position delete without referenced_data_file:
					// planning tells it by its equal file_path bounds.
					df.ReferencedDataFile = nil
					path := []byte("s3://b/t/data/scoped.parquet")
					df.LowerBounds = map[int][]byte{spec.FieldIDFilePath: path, spec.FieldIDFilePath - 1: {0, 0, 0, 0, 0, 0, 0, 0}}
					df.UpperBounds = map[int][]byte{spec.FieldIDFilePath: path, spec.FieldIDFilePath - 1: {9, 0, 0, 0, 0, 0, 0, 0}, 2: {7}}
				}
			}
			es[0].DataFile.FileFormat = "A-FORMAT-LONGER-THAN-EIGHT"
			data, _ := writeManifest(t, WriterOptions{Version: version, Schema: schema, Spec: ps, SnapshotID: 7, Content: content}, es)
			what := "v" + string(rune('0'+version)) + map[ManifestContent]string{ManifestContentData: " data", ManifestContentDeletes: " deletes"}[content]
			compareProjected(t, what, data)

			proj, err := readAllEntries(data, WithoutMetrics())
			if err != nil {
				t.Fatal(err)
			}
			if got := proj[0].DataFile.FileFormat; got != "A-FORMAT-LONGER-THAN-EIGHT" {
				t.Errorf("%s: file format %q", what, got)
			}
			if content == ManifestContentDeletes {
				scoped := 0
				for _, e := range proj {
					if e.DataFile.Content == ContentPositionDeletes &&
						string(e.DataFile.LowerBounds[spec.FieldIDFilePath]) == "s3://b/t/data/scoped.parquet" &&
						string(e.DataFile.UpperBounds[spec.FieldIDFilePath]) == "s3://b/t/data/scoped.parquet" {
						scoped++
					}
				}
				if scoped == 0 {
					t.Errorf("%s: file_path bounds of position deletes lost", what)
				}
			}
		}
	}
}

func TestFormatBase(t *testing.T) {
	rd, err := formatBase(avro.MustParse(`"string"`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in   []byte
		want string
		err  bool
	}{
		{in: append([]byte{14}, "PARQUET"...), want: "PARQUET"},
		{in: append([]byte{6}, "orc"...), want: "orc"},
		{in: append([]byte{22}, "CUSTOM-LONG"...), want: "CUSTOM-LONG"},
		{in: []byte{0}, want: ""},
		{in: []byte{1}, err: true},                     // length -1
		{in: append([]byte{14}, "PARQ"...), err: true}, // truncated
	} {
		r := avro.NewReader(bytes.NewReader(c.in), 16)
		got := rd(r)
		if (r.Error != nil) != c.err || (!c.err && got != c.want) {
			t.Errorf("formatBase(%q) = %q, %v; want %q, error %v", c.in, got, r.Error, c.want, c.err)
		}
	}
}

// FuzzReadManifestWithoutMetrics checks that a projected read never
// disagrees with a full read of the same bytes.
func FuzzReadManifestWithoutMetrics(f *testing.F) {
	for name, d := range conformanceFiles(f) {
		if !isList(name) {
			f.Add(d)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		proj, perr := readAllEntries(data, WithoutMetrics())
		full, ferr := readAllEntries(data)
		if ferr != nil || perr != nil {
			return // a projected read skips metrics a full read may find corrupt
		}
		if len(full) != len(proj) {
			t.Fatalf("%d entries projected, %d in full", len(proj), len(full))
		}
		for i := range full {
			if !reflect.DeepEqual(projected(full[i]), proj[i]) {
				t.Fatalf("entry %d differs:\nprojected %+v\nfull      %+v", i, proj[i], projected(full[i]))
			}
		}
	})
}
