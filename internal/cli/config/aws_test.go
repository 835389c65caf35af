package config

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// awsDocExamples returns the .pyiceberg.yaml examples of
// docs/configuration.md's Glue and S3 Tables section, as written there.
func awsDocExamples(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## AWS Glue and S3 Tables (SigV4)")
	if !ok {
		t.Fatal("docs/configuration.md has no section \"AWS Glue and S3 Tables (SigV4)\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var out []string
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(section, -1) {
		out = append(out, m[1])
	}
	if len(out) != 2 {
		t.Fatalf("%d yaml examples in the section, want Glue's and S3 Tables'", len(out))
	}
	return out
}

// The documented files, exactly as Glue's and S3 Tables' PyIceberg users
// write them, resolve to the settings the REST catalog signs with; the
// same settings as PyIceberg environment variables resolve the same.
func TestAWSPyIcebergFiles(t *testing.T) {
	want := []struct {
		name, uri, warehouse string
		props                map[string]string
	}{
		{"glue", "https://glue.us-east-1.amazonaws.com/iceberg", "111122223333",
			map[string]string{"rest.sigv4-enabled": "true", "rest.signing-name": "glue", "rest.signing-region": "us-east-1"}},
		{"s3tables", "https://s3tables.us-east-1.amazonaws.com/iceberg", "arn:aws:s3tables:us-east-1:111122223333:bucket/amzn-s3-demo-table-bucket",
			map[string]string{"rest.sigv4-enabled": "true", "rest.signing-name": "s3tables", "rest.signing-region": "us-east-1"}},
	}
	for i, yaml := range awsDocExamples(t) {
		w := want[i]
		c := resolve(t, Flags{Catalog: w.name}, lookup(t, "", yaml))
		if c.Type != "rest" || c.URI != w.uri || c.Warehouse != w.warehouse || !maps.Equal(c.Props, w.props) {
			t.Errorf("%s: type %q uri %q warehouse %q props %v; want rest %s %s %v", w.name, c.Type, c.URI, c.Warehouse, c.Props, w.uri, w.warehouse, w.props)
		}
		up := "PYICEBERG_CATALOG__" + strings.ToUpper(w.name) + "__"
		env := []string{up + "TYPE=rest", up + "URI=" + w.uri, up + "WAREHOUSE=" + w.warehouse,
			up + "REST__SIGV4_ENABLED=true", up + "REST__SIGNING_NAME=" + w.props["rest.signing-name"], up + "REST__SIGNING_REGION=us-east-1"}
		e := resolve(t, Flags{Catalog: w.name}, lookup(t, "", "", env...))
		if e.Type != c.Type || e.URI != c.URI || e.Warehouse != c.Warehouse || !maps.Equal(e.Props, c.Props) {
			t.Errorf("%s from the environment: %+v, from the file: %+v", w.name, e, c)
		}
	}
}

// Every value is the text as written, as PyIceberg's strictyaml reads it:
// an account id with a leading zero is not a number.
func TestFileValuesAsWritten(t *testing.T) {
	c := resolve(t, Flags{Catalog: "glue"}, lookup(t, "", `catalog:
  glue:
    uri: https://glue.eu-west-1.amazonaws.com/iceberg
    warehouse: 012345678901
    rest.sigv4-enabled: True
    rest.client.socket-timeout-ms: 1.50e3
    empty:
`))
	if c.Warehouse != "012345678901" || c.Props["rest.sigv4-enabled"] != "True" || c.Props["rest.client.socket-timeout-ms"] != "1.50e3" || c.Props["empty"] != "" {
		t.Errorf("values not as written: warehouse %q, props %v", c.Warehouse, c.Props)
	}
	if _, err := ParseFile([]byte("- a\n- b\n"), "list.yaml"); err == nil {
		t.Error("a file that is a list: no error")
	}
}
