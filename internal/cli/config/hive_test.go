package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog/caturi"
)

// The Hive Metastore example of docs/configuration.md, as a PyIceberg
// user writes it, resolves to a Hive catalog; the same from PyIceberg's
// environment variables resolves the same; type hive with a URI that is
// not a metastore's is refused.
func TestHivePyIcebergFile(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## Hive Metastore")
	if !ok {
		t.Fatal("docs/configuration.md has no section \"Hive Metastore\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	m := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindStringSubmatch(section)
	if m == nil {
		t.Fatal("no yaml example in the Hive Metastore section")
	}
	c := resolve(t, Flags{Catalog: "hive"}, lookup(t, "", m[1]))
	if c.Type != "hive" || c.Kind != caturi.Hive || c.URI != "thrift://metastore.example.com:9083" || c.Warehouse != "s3://bucket/warehouse" || c.Props["s3.endpoint"] != "http://localhost:9000" {
		t.Errorf("resolved %+v", c)
	}
	env := []string{"PYICEBERG_CATALOG__HIVE__TYPE=hive", "PYICEBERG_CATALOG__HIVE__URI=thrift://metastore.example.com:9083",
		"PYICEBERG_CATALOG__HIVE__WAREHOUSE=s3://bucket/warehouse", "PYICEBERG_CATALOG__HIVE__S3__ENDPOINT=http://localhost:9000"}
	e := resolve(t, Flags{Catalog: "hive"}, lookup(t, "", "", env...))
	if e.Type != c.Type || e.URI != c.URI || e.Warehouse != c.Warehouse || e.Props["s3.endpoint"] != c.Props["s3.endpoint"] {
		t.Errorf("from the environment: %+v, from the file: %+v", e, c)
	}
	s, err := LoadSources(lookup(t, "", "catalog:\n  h:\n    type: hive\n    uri: https://rest.example.com\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(Flags{Catalog: "h"}, s); err == nil || !strings.Contains(err.Error(), "thrift://") {
		t.Errorf("type hive with an https uri: %v, want a refusal naming thrift://", err)
	}
}
