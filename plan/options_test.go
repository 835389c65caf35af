package plan

import (
	"math"
	"strings"
	"testing"
)

func TestResolveDefaults(t *testing.T) {
	r, err := Options{}.Resolve(testMetadata())
	if err != nil {
		t.Fatal(err)
	}
	target := int64(512 << 20)
	if r.TargetFileSize != target || r.MinFileSize != target*3/4 || r.MaxFileSize != int64(float64(target)*1.8) {
		t.Errorf("sizes = %d/%d/%d", r.TargetFileSize, r.MinFileSize, r.MaxFileSize)
	}
	if r.WriteMaxFileSize != target+(r.MaxFileSize-target)/2 {
		t.Errorf("write max = %d", r.WriteMaxFileSize)
	}
	if r.MinInputFiles != 5 || r.DeleteFileThreshold != math.MaxInt32 || r.DeleteRatioThreshold != 0.3 ||
		r.MaxFileGroupSize != 100<<30 || r.MaxFilesToRewrite != nil || r.JobOrder != JobOrderNone || r.RewriteAll {
		t.Errorf("defaults = %+v", r)
	}
}

func TestResolveTableProperty(t *testing.T) {
	md := testMetadata()
	md.Properties[PropertyTargetFileSize] = "134217728"
	r, err := Options{}.Resolve(md)
	if err != nil || r.TargetFileSize != 128<<20 || r.MinFileSize != 96<<20 {
		t.Fatalf("got %+v, %v", r, err)
	}
	r, err = Options{TargetFileSize: 64 << 20}.Resolve(md)
	if err != nil || r.TargetFileSize != 64<<20 {
		t.Fatalf("explicit target lost to the property: %+v, %v", r, err)
	}
	md.Properties[PropertyTargetFileSize] = "big"
	if _, err := (Options{}).Resolve(md); err == nil || !strings.Contains(err.Error(), PropertyTargetFileSize) {
		t.Fatalf("bad property: %v", err)
	}
}

func TestResolveErrors(t *testing.T) {
	zero, neg, hundred := 0, -1, int64(100*mib)
	cases := []struct {
		name string
		o    Options
		want string
	}{
		{"negative target", Options{TargetFileSize: -1}, "target file size"},
		{"min not below target", Options{TargetFileSize: 100 * mib, MinFileSize: &hundred}, "must be greater than min"},
		{"max not above target", Options{TargetFileSize: 100 * mib, MaxFileSize: 100 * mib}, "must be less than max"},
		{"negative min", Options{MinFileSize: new(int64(-1))}, "min file size"},
		{"min input files", Options{MinInputFiles: -3}, "min input files"},
		{"delete threshold", Options{DeleteFileThreshold: &neg}, "delete file threshold"},
		{"ratio above 1", Options{DeleteRatioThreshold: 1.5}, "delete ratio"},
		{"ratio negative", Options{DeleteRatioThreshold: -0.1}, "delete ratio"},
		{"group size", Options{MaxFileGroupSize: -1}, "max file group size"},
		{"max files zero", Options{MaxFilesToRewrite: &zero}, "max files to rewrite"},
		{"job order", Options{JobOrder: "random"}, "invalid job order"},
		{"where syntax", Options{Where: "cat = "}, "where"},
		{"where column", Options{Where: "nope = 1"}, `no column "nope"`},
	}
	for _, c := range cases {
		_, err := c.o.Resolve(testMetadata())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	// Zero is a valid delete-file threshold and min size, as in Java.
	if r, err := (Options{DeleteFileThreshold: &zero, MinFileSize: new(int64(0))}).Resolve(testMetadata()); err != nil || r.DeleteFileThreshold != 0 || r.MinFileSize != 0 {
		t.Errorf("zero thresholds: %+v, %v", r, err)
	}
}

func TestParseJobOrder(t *testing.T) {
	for _, s := range []string{"none", "BYTES-ASC", "bytes-desc", "files-asc", "files-desc", ""} {
		if _, err := ParseJobOrder(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
}
