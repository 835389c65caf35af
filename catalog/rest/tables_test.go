package rest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
)

func TestCreateTableRequest(t *testing.T) {
	f := newFakeServer(t)
	c := f.open(t, nil)
	md, err := spec.ParseMetadata([]byte(tableJSON))
	if err != nil {
		t.Fatal(err)
	}
	md.Properties["owner"] = "me"
	f.handle("POST /v1/namespaces/db/tables", reply(200, loadResult("mem://wh/db/t", "")))
	tbl, err := c.CreateTable(context.Background(), dbT, md)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.MetadataLocation != "mem://wh/db/t/metadata/00000-a.metadata.json" || tbl.Metadata.TableUUID == "" || tbl.IO == nil {
		t.Errorf("created table %+v", tbl)
	}
	r := f.requests()[0]
	if r.Header.Get("X-Iceberg-Access-Delegation") != "vended-credentials" {
		t.Error("create table does not ask for vended credentials")
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.Body), &body); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"name":         `"t"`,
		"location":     `"mem://wh/db/t"`,
		"stage-create": `false`,
		"properties":   `{"format-version":"2","owner":"me"}`,
	} {
		if string(body[k]) != want {
			t.Errorf("create table %s = %s, want %s", k, body[k], want)
		}
	}
	var schema spec.Schema
	if err := json.Unmarshal(body["schema"], &schema); err != nil || len(schema.Fields) != 1 || schema.Fields[0].Name != "x" {
		t.Errorf("create table schema %s (%v)", body["schema"], err)
	}
	for _, k := range []string{"partition-spec", "write-order"} {
		if _, ok := body[k]; !ok {
			t.Errorf("create table request has no %s", k)
		}
	}

	f.handle("POST /v1/namespaces/db/tables", reply(409, `{"error": {"message": "exists", "type": "AlreadyExistsException", "code": 409}}`))
	if _, err := c.CreateTable(context.Background(), dbT, md); !errors.Is(err, catalog.ErrAlreadyExists) {
		t.Errorf("409: %v, want ErrAlreadyExists", err)
	}
	// A location from DefaultLocation is left to the server.
	f.config = `{"defaults": {"warehouse": "s3://wh/"}, "overrides": {}}`
	c = f.open(t, nil)
	loc, err := c.DefaultLocation(context.Background(), dbT)
	if err != nil || loc != "s3://wh/db/t" {
		t.Fatalf("DefaultLocation = %q, %v; want s3://wh/db/t", loc, err)
	}
	md.Location = loc
	f.handle("POST /v1/namespaces/db/tables", reply(200, loadResult("mem://wh/db/t", "")))
	if _, err := c.CreateTable(context.Background(), dbT, md); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	if b := reqs[len(reqs)-1].Body; strings.Contains(b, `"location"`) {
		t.Errorf("create table with the default location sent it: %s", b)
	}
	if _, err := c.CreateTable(context.Background(), dbT, nil); err == nil {
		t.Error("CreateTable(nil metadata) succeeded")
	}
}

func TestLoadTableVendedCredentials(t *testing.T) {
	f := newFakeServer(t)
	c := f.open(t, map[string]string{fileio.S3Endpoint: "http://client:1", fileio.S3AccessKeyID: "client-key", fileio.S3SecretAccessKey: "client-secret"})
	f.handle("GET /v1/namespaces/db/tables/t", reply(200, loadResult("s3://bucket/wh/db/t", `
		"config": {"s3.endpoint": "http://table:2", "s3.access-key-id": "config-key", "s3.secret-access-key": "config-secret", "client.region": "eu-west-1"},
		"storage-credentials": [
			{"prefix": "s3://bucket/", "config": {"s3.access-key-id": "short", "s3.secret-access-key": "short-secret"}},
			{"prefix": "s3://bucket/wh/db/t", "config": {"s3.access-key-id": "longest", "s3.secret-access-key": "longest-secret", "s3.session-token": "st"}},
			{"prefix": "s3://bucket/wh/db/t/other/deeper", "config": {"s3.access-key-id": "no-match", "s3.secret-access-key": "x"}},
			{"prefix": "s3://other/", "config": {"s3.access-key-id": "other", "s3.secret-access-key": "x"}}
		]`)))
	tbl, err := c.LoadTable(context.Background(), dbT)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.requests()[0].Header.Get("X-Iceberg-Access-Delegation"); got != "vended-credentials" {
		t.Errorf("access delegation header %q", got)
	}
	s3, ok := tbl.IO.(*fileio.S3)
	if !ok {
		t.Fatalf("table IO is %T, want *fileio.S3", tbl.IO)
	}
	cfg := s3.Config()
	if cfg.AccessKeyID != "longest" || cfg.SecretAccessKey != "longest-secret" || cfg.SessionToken != "st" {
		t.Errorf("credentials %q/%q/%q, want the longest matching prefix", cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken)
	}
	if cfg.Endpoint != "http://table:2" || cfg.Region != "eu-west-1" {
		t.Errorf("endpoint %q region %q, want the table config over the catalog's", cfg.Endpoint, cfg.Region)
	}
}

func TestLongestPrefix(t *testing.T) {
	creds := []storageCredential{{Prefix: "s3://b/a"}, {Prefix: "s3://b/"}, {Prefix: "s3://b/a/t"}, {Prefix: "s3://b/a/t/x"}}
	for loc, want := range map[string]string{
		"s3://b/a/t":     "s3://b/a/t",
		"s3://b/a/t/y":   "s3://b/a/t",
		"s3://b/a/u":     "s3://b/a",
		"s3://b/z":       "s3://b/",
		"s3://c/a/t":     "",
		"s3://b/a/t/x/1": "s3://b/a/t/x",
	} {
		got := longestPrefix(creds, loc)
		if (got == nil) != (want == "") || got != nil && got.Prefix != want {
			t.Errorf("longestPrefix(%s) = %v, want %q", loc, got, want)
		}
	}
}

func TestLoadAndDropErrors(t *testing.T) {
	f := newFakeServer(t)
	c := f.open(t, nil)
	f.handle("GET /v1/namespaces/db/tables/t", reply(404, `{"error": {"message": "no table", "type": "NoSuchTableException", "code": 404}}`))
	if _, err := c.LoadTable(context.Background(), dbT); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Errorf("load 404: %v, want ErrNoSuchTable", err)
	}
	f.handle("GET /v1/namespaces/db/tables/t", reply(404, `{"error": {"message": "no ns", "type": "NoSuchNamespaceException", "code": 404}}`))
	if _, err := c.LoadTable(context.Background(), dbT); !errors.Is(err, catalog.ErrNoSuchNamespace) {
		t.Errorf("load 404 namespace: %v, want ErrNoSuchNamespace", err)
	}
	f.handle("GET /v1/namespaces/db/tables/t", reply(200, `{"metadata": {"format-version": 9}}`))
	if _, err := c.LoadTable(context.Background(), dbT); !errors.Is(err, spec.ErrUnsupportedFormatVersion) {
		t.Errorf("load v9: %v, want ErrUnsupportedFormatVersion", err)
	}
	f.handle("GET /v1/namespaces/db/tables/t", reply(200, `not json`))
	if _, err := c.LoadTable(context.Background(), dbT); err == nil {
		t.Error("load of a malformed response succeeded")
	}

	f.handle("DELETE /v1/namespaces/db/tables/t", reply(204, ``))
	if err := c.DropTable(context.Background(), dbT); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	if q := reqs[len(reqs)-1].Query; q != "purgeRequested=false" {
		t.Errorf("drop query %q, want purgeRequested=false", q)
	}
	f.handle("DELETE /v1/namespaces/db/tables/t", reply(404, `{"error": {"message": "gone", "type": "NoSuchTableException", "code": 404}}`))
	if err := c.DropTable(context.Background(), dbT); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Errorf("drop 404: %v, want ErrNoSuchTable", err)
	}
}
