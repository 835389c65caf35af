package fileio

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"
)

func noEnv(string) string { return "" }

func TestParseGCSConfig(t *testing.T) {
	c, err := ParseGCSConfig(map[string]string{
		GCSServiceHost: "http://127.0.0.1:4443/", GCSOAuth2Token: "ya29.secret",
		GCSOAuth2TokenExpiresAt: "1767225600000", GCSProjectID: "p", GCSRequesterPays: "true",
	}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint != "http://127.0.0.1:4443" || c.NoAuth || c.Token != "ya29.secret" || c.UserProject != "p" ||
		!c.TokenExpiresAt.Equal(time.UnixMilli(1767225600000)) {
		t.Errorf("parsed %+v", c)
	}
	for _, s := range []string{c.String(), fmt.Sprintf("%v %+v %#v", c, c, c)} {
		if strings.Contains(s, "ya29") {
			t.Errorf("the token is printed: %s", s)
		}
	}
	// PyIceberg's emulator settings: gcs.oauth2.token=anon is no authentication.
	if c, _ := ParseGCSConfig(map[string]string{GCSOAuth2Token: "anon"}, noEnv); !c.NoAuth || c.Token != "" {
		t.Errorf("anon: %+v", c)
	}
	env := func(k string) string {
		if k == "STORAGE_EMULATOR_HOST" {
			return "localhost:9023"
		}
		return ""
	}
	if c, _ := ParseGCSConfig(map[string]string{GCSEndpoint: "http://h:1/storage/v1/"}, noEnv); c.Endpoint != "http://h:1" {
		t.Errorf("gcs.endpoint with the API path: %q", c.Endpoint)
	}
	if c, _ := ParseGCSConfig(nil, env); c.Endpoint != "http://localhost:9023" || !c.NoAuth {
		t.Errorf("STORAGE_EMULATOR_HOST: %+v", c)
	}
	for _, bad := range []map[string]string{
		{GCSNoAuth: "maybe"},
		{GCSOAuth2TokenExpiresAt: "tomorrow"},
		{GCSRequesterPays: "true"},
		{GCSWriteChunkSize: "1000000"},
	} {
		_, err := ParseGCSConfig(bad, noEnv)
		if err == nil || !strings.HasPrefix(err.Error(), "gcs config: ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseGCSConfig(%v) = %v, want a one-line gcs config error", bad, err)
		}
	}
}

func TestParseGCSPaths(t *testing.T) {
	loc, err := parseGCSObject("gs://bkt/a/b.parquet")
	if err != nil || loc.bucket != "bkt" || loc.key != "a/b.parquet" {
		t.Errorf("parseGCSObject = %+v, %v", loc, err)
	}
	for _, p := range []string{"gs://", "gs:///k", "gs://bkt", "gs://bkt/dir/", "s3://bkt/k"} {
		if _, err := parseGCSObject(p); err == nil {
			t.Errorf("parseGCSObject(%q) succeeded", p)
		}
	}
}

func TestParseAzurePaths(t *testing.T) {
	for path, want := range map[string]azureLocation{
		"abfss://ctr@acct.dfs.core.windows.net/wh/t/data/f.parquet": {"abfss", "ctr", "acct.dfs.core.windows.net", "wh/t/data/f.parquet"},
		"abfs://ctr@Acct.dfs.core.windows.net/a?x=1":                {"abfs", "ctr", "acct.dfs.core.windows.net", "a"},
		"wasbs://ctr@acct.blob.core.windows.net/a/b":                {"wasbs", "ctr", "acct.blob.core.windows.net", "a/b"},
		"wasb://ctr@acct.blob.core.chinacloudapi.cn/a":              {"wasb", "ctr", "acct.blob.core.chinacloudapi.cn", "a"},
	} {
		got, err := parseAzureObject(path)
		if err != nil || got != want {
			t.Errorf("parseAzureObject(%q) = %+v, %v; want %+v", path, got, err, want)
		}
		if back := got.path(got.key); !strings.EqualFold(strings.TrimSuffix(path, "?x=1"), back) {
			t.Errorf("path(%q) = %q", path, back)
		}
	}
	for _, p := range []string{"abfss://acct.dfs.core.windows.net/x", "abfss:///x", "abfss://@acct/x", "abfss://ctr@/x", "abfss://ctr@acct.dfs.core.windows.net/", "wasb://ctr@acct/dir/", "gs://b/k"} {
		_, err := parseAzureObject(p)
		if err == nil {
			t.Errorf("parseAzureObject(%q) succeeded", p)
		}
	}
	_, err := parseAzure("abfss://acct.dfs.core.windows.net/x")
	if err == nil || !strings.Contains(err.Error(), "write abfss://CONTAINER@ACCOUNT.dfs.core.windows.net/PATH") {
		t.Errorf("no container: %v, want the form to write", err)
	}
}

const testKey = "a2V5LWJ5dGVzLWZvci10ZXN0cw=="

func TestAzureAccountResolution(t *testing.T) {
	const host = "acct.dfs.core.windows.net"
	cases := []struct {
		name   string
		props  map[string]string
		env    map[string]string
		host   string
		url    string
		kind   azureCredKind
		source string
	}{
		{"default chain", nil, nil, host, "https://acct.blob.core.windows.net/", azureDefaultChain, "Azure's default credential chain"},
		{"wasb host", nil, nil, "acct.blob.core.usgovcloudapi.net", "https://acct.blob.core.usgovcloudapi.net/", azureDefaultChain, "Azure's default credential chain"},
		{"java sas by host", map[string]string{"adls.sas-token." + host: "?sv=1&sig=x"}, nil, host, "https://acct.blob.core.windows.net/", azureSAS, "adls.sas-token." + host},
		{"java sas by dfs host, reached by its blob host (wasbs)", map[string]string{"adls.sas-token." + host: "sv=1&sig=x"}, nil, "acct.blob.core.windows.net",
			"https://acct.blob.core.windows.net/", azureSAS, "adls.sas-token." + host},
		{"java connection string by blob host, reached by its dfs host", map[string]string{"adls.connection-string.acct.blob.core.windows.net": "http://127.0.0.1:10000/acct",
			ADLSSharedKeyAccountName: "acct", ADLSSharedKeyAccountKey: testKey}, nil, host, "http://127.0.0.1:10000/acct/", azureSharedKey, ADLSSharedKeyAccountKey},
		{"java sas by account", map[string]string{"adls.sas-token.acct": "sv=1&sig=x", "adls.sas-token.other": "no"}, nil, host, "https://acct.blob.core.windows.net/", azureSAS, "adls.sas-token.acct"},
		{"java endpoint + shared key", map[string]string{
			"adls.connection-string.acct": "http://127.0.0.1:10000/acct",
			ADLSSharedKeyAccountName:      "acct", ADLSSharedKeyAccountKey: testKey,
		}, nil, host, "http://127.0.0.1:10000/acct/", azureSharedKey, ADLSSharedKeyAccountKey},
		{"pyiceberg key", map[string]string{ADLSAccountName: "acct", ADLSAccountKey: testKey}, nil, host, "https://acct.blob.core.windows.net/", azureSharedKey, ADLSAccountKey},
		{"pyiceberg key of another account", map[string]string{ADLSAccountName: "other", ADLSAccountKey: testKey}, nil, host, "https://acct.blob.core.windows.net/", azureDefaultChain, "Azure's default credential chain"},
		{"pyiceberg emulator authority", map[string]string{
			ADLSAccountName: "acct", ADLSAccountKey: testKey, ADLSBlobStorageAuthority: "127.0.0.1:10000", ADLSBlobStorageScheme: "http",
		}, nil, host, "http://127.0.0.1:10000/acct/", azureSharedKey, ADLSAccountKey},
		{"pyiceberg connection string", map[string]string{
			ADLSConnectionString: "DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=" + testKey + ";BlobEndpoint=http://127.0.0.1:10000/acct;",
		}, nil, host, "http://127.0.0.1:10000/acct/", azureSharedKey, ADLSConnectionString},
		{"connection string with SAS", map[string]string{
			ADLSConnectionString: "BlobEndpoint=https://acct.blob.core.windows.net/;SharedAccessSignature=sv=1&sig=x",
		}, nil, host, "https://acct.blob.core.windows.net/", azureSAS, ADLSConnectionString},
		{"env connection string of another account", nil, map[string]string{
			"AZURE_STORAGE_CONNECTION_STRING": "AccountName=other;AccountKey=" + testKey,
		}, host, "https://acct.blob.core.windows.net/", azureDefaultChain, "Azure's default credential chain"},
		{"env connection string", nil, map[string]string{
			"AZURE_STORAGE_CONNECTION_STRING": "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + testKey + ";EndpointSuffix=core.chinacloudapi.cn",
		}, host, "https://acct.blob.core.chinacloudapi.cn/", azureSharedKey, "AZURE_STORAGE_CONNECTION_STRING"},
		{"development storage", map[string]string{"adls.connection-string.devstoreaccount1": "UseDevelopmentStorage=true"}, nil,
			"devstoreaccount1.dfs.core.windows.net", "http://127.0.0.1:10000/devstoreaccount1/", azureSharedKey, "adls.connection-string.devstoreaccount1"},
		{"env key", nil, map[string]string{"AZURE_STORAGE_ACCOUNT": "acct", "AZURE_STORAGE_KEY": testKey}, host, "https://acct.blob.core.windows.net/", azureSharedKey, "AZURE_STORAGE_KEY"},
		{"service principal", map[string]string{ADLSTenantID: "t", ADLSClientID: "c", ADLSClientSecret: "s"}, nil, host, "https://acct.blob.core.windows.net/", azureClientSecret, ADLSClientSecret},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := ParseAzureConfig(c.props, func(k string) string { return c.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			a, err := cfg.account(c.host)
			if err != nil {
				t.Fatal(err)
			}
			if a.serviceURL != c.url || a.kind != c.kind || a.source != c.source {
				t.Errorf("account = %v, want url %s kind %d from %s", a, c.url, c.kind, c.source)
			}
			for _, s := range []string{a.String(), fmt.Sprintf("%v %+v %#v", a, a, a), cfg.String(), fmt.Sprintf("%#v", cfg)} {
				if strings.Contains(s, testKey) || strings.Contains(s, "sig=x") {
					t.Errorf("a secret is printed: %s", s)
				}
			}
		})
	}
}

func TestParseAzureConfigErrors(t *testing.T) {
	for _, bad := range []map[string]string{
		{ADLSSharedKeyAccountName: "acct"},
		{ADLSAccountKey: testKey},
		{ADLSBlobStorageScheme: "ftp"},
		{ADLSWriteBlockSize: "12"},
	} {
		_, err := ParseAzureConfig(bad, noEnv)
		if err == nil || !strings.HasPrefix(err.Error(), "azure config: ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseAzureConfig(%v) = %v, want a one-line azure config error", bad, err)
		}
	}
	cfg, _ := ParseAzureConfig(map[string]string{ADLSConnectionString: "not a connection string"}, noEnv)
	if _, err := cfg.account("acct.dfs.core.windows.net"); err == nil || !strings.Contains(err.Error(), ADLSConnectionString) {
		t.Errorf("bad connection string: %v, want an error naming the property", err)
	}
}

func TestStoreErrorsMapped(t *testing.T) {
	err := gcsErr("open", "gs://b/k", fmt.Errorf("wrapped: %w", errors.New("boom\nsecond line")))
	if strings.Contains(err.Error(), "\n") || errors.Is(err, ErrNotFound) || errors.Is(err, fs.ErrPermission) {
		t.Errorf("gcsErr = %q", err)
	}
}
