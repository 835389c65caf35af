package orphan

import (
	"strings"
	"testing"
)

func TestSplitURI(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uriParts
	}{
		{"s3://bucket/wh/t/data/x.parquet", uriParts{"s3", "bucket", "/wh/t/data/x.parquet"}},
		{"S3A://Bucket/a", uriParts{"s3a", "Bucket", "/a"}},
		{"s3://bucket", uriParts{"s3", "bucket", ""}},
		{"file:///tmp/t/x", uriParts{"file", "", "/tmp/t/x"}},
		{"file:/tmp/t/x", uriParts{"file", "", "/tmp/t/x"}},
		{"/tmp/t/x", uriParts{"", "", "/tmp/t/x"}},
		{"C:/t/x", uriParts{"", "", "C:/t/x"}},
		{"s3://b/k?x=1#frag%20", uriParts{"s3", "b", "/k?x=1#frag%20"}},
		{"hdfs://nn:8020/wh//t/", uriParts{"hdfs", "nn:8020", "/wh//t/"}},
	} {
		if got := splitURI(c.in); got != c.want {
			t.Errorf("splitURI(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestPathKey(t *testing.T) {
	for in, want := range map[string]string{
		"/wh/t/data/x":    "/wh/t/data/x",
		"/wh//t///data/x": "/wh/t/data/x",
		"/wh/t/":          "/wh/t",
		"/":               "/",
		"":                "",
	} {
		if got := pathKey(in); got != want {
			t.Errorf("pathKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMatcher(t *testing.T) {
	def := NewMatcher(nil, nil)
	custom := NewMatcher(map[string]string{"gs": "s3"}, map[string]string{"old-nn:8020": "nn:8020"})
	for _, c := range []struct {
		m    Matcher
		a, b string
		same bool
	}{
		{def, "s3://b/t/x", "s3a://b/t/x", true},
		{def, "s3n://b/t/x", "s3a://b/t/x", true},
		{def, "S3://b/t/x", "s3://b/t/x", true},
		{def, "s3://b/t/x", "gs://b/t/x", false},
		{custom, "s3://b/t/x", "gs://b/t/x", true},
		{def, "s3://b/t/x", "s3://other/t/x", false},
		{def, "hdfs://nn:8020/t/x", "hdfs://old-nn:8020/t/x", false},
		{custom, "hdfs://nn:8020/t/x", "hdfs://old-nn:8020/t/x", true},
		// A plain path matches any scheme and authority (Java: a null
		// scheme or authority matches).
		{def, "/t/x", "s3://b/t/x", true},
		{def, "file:///t/x", "/t/x", true},
		{def, "file:/t/x", "file:///t/x", true},
	} {
		if got := c.m.Same(c.a, c.b); got != c.same {
			t.Errorf("Same(%q, %q) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}

func TestParseEquivalences(t *testing.T) {
	got, err := ParseEquivalences([]string{"s3a,s3n=s3", " gs = s3 "})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got["s3a"] != "s3" || got["s3n"] != "s3" || got["gs"] != "s3" {
		t.Errorf("got %v", got)
	}
	for _, bad := range []string{"s3a", "=s3", "s3a=", "s3a,,s3n=s3"} {
		if _, err := ParseEquivalences([]string{bad}); err == nil {
			t.Errorf("ParseEquivalences(%q) succeeded", bad)
		}
	}
}

func TestListingRoot(t *testing.T) {
	for in, want := range map[string]string{
		"s3://b/wh/t":    "s3://b/wh/t/",
		"s3://b/wh/t/":   "s3://b/wh/t/",
		"s3://b/wh/t//":  "s3://b/wh/t/",
		"s3://b":         "s3://b/",
		"/tmp/t":         "/tmp/t/",
		"file:///tmp/t/": "file:///tmp/t/",
	} {
		got, err := listingRoot(in)
		if err != nil || got != want {
			t.Errorf("listingRoot(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "/", "s3://", "s3:///t"} {
		if got, err := listingRoot(bad); err == nil {
			t.Errorf("listingRoot(%q) = %q, want an error", bad, got)
		}
	}
}

func FuzzPathKey(f *testing.F) {
	for _, s := range []string{"s3://b/wh//t/", "file:///x", "/a//b///c/", "C:/x", "s3a://B/k?x#y", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		u := splitURI(p)
		k := pathKey(u.path)
		if pathKey(k) != k {
			t.Errorf("pathKey not idempotent: %q -> %q -> %q", u.path, k, pathKey(k))
		}
		if len(k) > 1 && (strings.Contains(k, "//") || strings.HasSuffix(k, "/")) {
			t.Errorf("pathKey(%q) = %q", u.path, k)
		}
		// The key names the same path up to slashes.
		if strings.ReplaceAll(k, "/", "") != strings.ReplaceAll(u.path, "/", "") {
			t.Errorf("pathKey(%q) = %q changed more than slashes", u.path, k)
		}
		if !NewMatcher(nil, nil).Same(p, p) {
			t.Errorf("%q does not match itself", p)
		}
	})
}

// TestAzureEquivalences: abfs, abfss, wasb and wasbs name the same blob,
// the account's blob and dfs endpoints one account; another account or
// container is another file.
func TestAzureEquivalences(t *testing.T) {
	m := NewMatcher(nil, nil)
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"abfss://c@a.dfs.core.windows.net/t/x", "wasbs://c@a.blob.core.windows.net/t/x", true},
		{"abfs://c@a.dfs.core.windows.net/t/x", "abfss://c@a.dfs.core.windows.net/t/x", true},
		{"wasb://c@a.blob.core.chinacloudapi.cn/t/x", "abfss://c@a.dfs.core.chinacloudapi.cn/t/x", true},
		{"abfss://c@a.dfs.core.windows.net/t/x", "wasbs://c@other.blob.core.windows.net/t/x", false},
		{"abfss://c@a.dfs.core.windows.net/t/x", "abfss://d@a.dfs.core.windows.net/t/x", false},
		{"abfss://c@a.dfs.core.windows.net/t/x", "s3://c@a.dfs.core.windows.net/t/x", false},
	} {
		if got := m.Same(c.a, c.b); got != c.same {
			t.Errorf("Same(%s, %s) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}
