package catalog

import (
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/spec"
)

func TestParseIdent(t *testing.T) {
	for in, want := range map[string]string{"db.orders": "[db] orders", "a.b.t": "[a b] t"} {
		id, err := ParseIdent(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := strings.Join([]string{"[" + strings.Join(id.Namespace, " ") + "]", id.Name}, " "); got != want {
			t.Errorf("%s -> %s, want %s", in, got, want)
		}
		if id.String() != in {
			t.Errorf("String() = %s, want %s", id.String(), in)
		}
	}
	for _, bad := range []string{"", "t", "db.", ".t", "a..t"} {
		if _, err := ParseIdent(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestMetadataVersion(t *testing.T) {
	cases := map[string]int{
		"s3://b/t/metadata/00012-6e5c0f1b-3a4d-4b5e-8f9a-0b1c2d3e4f50.metadata.json":      12,
		"/t/metadata/00003-6e5c0f1b-3a4d-4b5e-8f9a-0b1c2d3e4f50.gz.metadata.json":         3,
		"file:///t/metadata/v7.metadata.json":                                             7,
		"file:///t/metadata/v8.gz.metadata.json":                                          8,
		"s3://warehouse/t/metadata/v4-6e5c0f1b-3a4d-4b5e-8f9a-0b1c2d3e4f50.metadata.json": 4,
		"/t/metadata/123456-6e5c0f1b-3a4d-4b5e-8f9a-0b1c2d3e4f50.metadata.json":           123456,
	}
	for loc, want := range cases {
		if got, ok := MetadataVersion(loc); !ok || got != want {
			t.Errorf("%s: %d, %v; want %d", loc, got, ok, want)
		}
	}
	for _, bad := range []string{"/t/metadata/snap-1.avro", "/t/metadata/x-1.metadata.json", "/t/v.metadata.json", "/t/-abc.metadata.json", "/t/v3x.metadata.json"} {
		if v, ok := MetadataVersion(bad); ok {
			t.Errorf("%s: parsed as %d", bad, v)
		}
	}
}

func TestNewMetadataLocation(t *testing.T) {
	md := &spec.TableMetadata{Location: "s3://b/t/", Properties: map[string]string{}}
	loc := NewMetadataLocation(md, 7)
	if !strings.HasPrefix(loc, "s3://b/t/metadata/00007-") || !strings.HasSuffix(loc, ".metadata.json") || strings.HasSuffix(loc, ".gz.metadata.json") {
		t.Errorf("location %s", loc)
	}
	if v, ok := MetadataVersion(loc); !ok || v != 7 {
		t.Errorf("version of %s = %d", loc, v)
	}
	md.Properties[PropMetadataCompression] = "gzip"
	md.Properties[PropMetadataPath] = "s3://other/meta/"
	if loc := NewMetadataLocation(md, 1); !strings.HasPrefix(loc, "s3://other/meta/00001-") || !strings.HasSuffix(loc, ".gz.metadata.json") {
		t.Errorf("gzip location with metadata path %s", loc)
	}
}

func FuzzMetadataVersion(f *testing.F) {
	f.Add("00001-6e5c0f1b-3a4d-4b5e-8f9a-0b1c2d3e4f50.metadata.json")
	f.Add("v3.gz.metadata.json")
	f.Add("99999999999999999999-x.metadata.json")
	f.Fuzz(func(t *testing.T, s string) {
		if v, ok := MetadataVersion(s); ok && v < 0 {
			t.Errorf("%q: negative version %d", s, v)
		}
	})
}

func FuzzParseIdent(f *testing.F) {
	f.Add("db.orders")
	f.Add("a.b.t")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseIdent(s)
		if err == nil && id.String() != s {
			t.Errorf("%q round-trips to %q", s, id.String())
		}
	})
}
