package datafile

import (
	"bytes"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/spec"
)

// TestGeoLogicalTypes: geometry and geography columns are written with
// the Parquet GEOMETRY and GEOGRAPHY logical types, CRS and edge
// algorithm carried over, whichever encoder writes them (serial for a
// nested schema), and read back as the WKB bytes written.
func TestGeoLogicalTypes(t *testing.T) {
	geo := []spec.NestedField{
		{ID: 2, Name: "g", Type: spec.GeometryType{}},
		{ID: 3, Name: "gc", Type: spec.GeometryType{CRS: "srid:3857"}},
		{ID: 4, Name: "gg", Type: spec.GeographyType{CRS: "srid:4326", Algorithm: "karney"}},
	}
	want := map[string]string{"g": "Geometry", "gc": "Geometry(crs=srid:3857)", "gg": "Geography(crs=srid:4326, algorithm=karney)"}
	for _, nested := range []bool{false, true} {
		fields := append([]spec.NestedField{{ID: 1, Name: "id", Type: spec.LongType{}, Required: true}}, geo...)
		if nested {
			fields = append(fields, spec.NestedField{ID: 5, Name: "st", Type: &spec.StructType{Fields: []spec.NestedField{{ID: 6, Name: "x", Type: spec.LongType{}}}}})
		}
		s := &spec.Schema{Fields: fields}
		rows := `[{"id":1,"g":"AQEAAAAAAAAAAADwPwAAAAAAAABA","gc":null,"gg":"AQEAAAAAAAAAAAAIQAAAAAAAABBA"}]`
		rec := recordFromJSON(t, s, rows)
		data, _ := writeParquet(t, s, nil, rec)
		rec.Release()
		info, err := InspectParquet(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range info.Schema {
			if w, ok := want[n.Name]; ok && n.LogicalType != w {
				t.Errorf("nested=%v: column %s has logical type %q, want %q", nested, n.Name, n.LogicalType, w)
			}
		}
		got := rowsJSON(t, readParquet(t, data, ReadOptions{Schema: s})...)
		if len(got) != 1 || !strings.HasPrefix(got[0], `[1,"AQEAAAAAAAAAAADwPwAAAAAAAABA",null,"AQEAAAAAAAAAAAAIQAAAAAAAABBA"`) {
			t.Errorf("nested=%v: read back %s", nested, got)
		}
	}
}
