package fileio

import (
	"fmt"
	"net/url"
	"strings"
)

// Azure property names. Java's ADLSFileIO suffixes the per-account ones
// with the account's host (adls.sas-token.acct.dfs.core.windows.net);
// icectl also takes the bare account name as the suffix. PyIceberg's
// unsuffixed names apply to the account adls.account-name names (or to
// every account when it is unset).
const (
	ADLSSASTokenPrefix         = "adls.sas-token."
	ADLSConnectionStringPrefix = "adls.connection-string."
	ADLSSharedKeyAccountName   = "adls.auth.shared-key.account.name"
	ADLSSharedKeyAccountKey    = "adls.auth.shared-key.account.key"
	ADLSWriteBlockSize         = "adls.write.block-size-bytes"

	ADLSAccountName          = "adls.account-name"
	ADLSAccountKey           = "adls.account-key"
	ADLSSASToken             = "adls.sas-token"
	ADLSConnectionString     = "adls.connection-string"
	ADLSTenantID             = "adls.tenant-id"
	ADLSClientID             = "adls.client-id"
	ADLSClientSecret         = "adls.client-secret"
	ADLSBlobStorageAuthority = "adls.blob-storage-authority"
	ADLSBlobStorageScheme    = "adls.blob-storage-scheme"

	// icectl's own: deletions in flight, and blobs a listing page (for tests).
	ADLSDeleteConcurrency = "adls.delete.concurrency"
	ADLSListPageSize      = "adls.list-page-size"
)

// Azurite's well-known development account (UseDevelopmentStorage=true).
const (
	devStoreAccount = "devstoreaccount1"
	devStoreKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	devStoreBlobURL = "http://127.0.0.1:10000/devstoreaccount1"
)

// azureCredKind says how requests to one account are authorised.
type azureCredKind int

const (
	azureDefaultChain azureCredKind = iota // azidentity's DefaultAzureCredential
	azureSharedKey
	azureSAS
	azureClientSecret
)

// azureAccount is how to reach one storage account: the Blob service URL
// and the credential. Its String method redacts the secrets.
type azureAccount struct {
	name       string
	serviceURL string // https://acct.blob.core.windows.net/ or an emulator's
	kind       azureCredKind
	key        string // shared key
	sas        string // SAS token, without '?'
	tenant     string // client secret credential
	clientID   string
	secret     string
	source     string // the property or variable the credential came from
}

func (a azureAccount) String() string {
	kinds := map[azureCredKind]string{azureDefaultChain: "default-chain", azureSharedKey: "shared-key", azureSAS: "sas", azureClientSecret: "client-secret"}
	return fmt.Sprintf("azureAccount{name=%s url=%s credential=%s from=%s}", a.name, a.serviceURL, kinds[a.kind], a.source)
}

// GoString keeps %#v from printing the secrets.
func (a azureAccount) GoString() string { return a.String() }

// AzureConfig is the Azure configuration: the properties, read per account
// when a location first names it.
type AzureConfig struct {
	props        map[string]string
	getenv       func(string) string
	BlockSize    int
	Deleters     int
	ListPageSize int32
}

// ParseAzureConfig checks the Azure properties that do not depend on the
// account. getenv reads AZURE_STORAGE_CONNECTION_STRING,
// AZURE_STORAGE_ACCOUNT and AZURE_STORAGE_KEY (Azure CLI's names).
func ParseAzureConfig(props map[string]string, getenv func(string) string) (AzureConfig, error) {
	c := AzureConfig{props: props, getenv: getenv}
	if (props[ADLSSharedKeyAccountName] == "") != (props[ADLSSharedKeyAccountKey] == "") {
		return AzureConfig{}, fmt.Errorf("azure config: shared-key authentication needs both %s and %s", ADLSSharedKeyAccountName, ADLSSharedKeyAccountKey)
	}
	if props[ADLSAccountKey] != "" && props[ADLSAccountName] == "" {
		return AzureConfig{}, fmt.Errorf("azure config: %s is set without %s", ADLSAccountKey, ADLSAccountName)
	}
	if s := props[ADLSBlobStorageScheme]; s != "" && s != "http" && s != "https" {
		return AzureConfig{}, fmt.Errorf("azure config: %s=%q: want http or https", ADLSBlobStorageScheme, s)
	}
	var err error
	block, err := intProp(props, ADLSWriteBlockSize, defaultPartSize, 64<<10, 4000<<20)
	if err != nil {
		return AzureConfig{}, azureConfigErr(err)
	}
	c.BlockSize = block
	if c.Deleters, err = intProp(props, ADLSDeleteConcurrency, defaultGCSDeletes, 1, 256); err != nil {
		return AzureConfig{}, azureConfigErr(err)
	}
	page, err := intProp(props, ADLSListPageSize, defaultListPage, 1, 5000)
	if err != nil {
		return AzureConfig{}, azureConfigErr(err)
	}
	c.ListPageSize = int32(page)
	return c, nil
}

func azureConfigErr(err error) error {
	return fmt.Errorf("azure config: %s", strings.TrimPrefix(err.Error(), "s3 config: "))
}

// String describes the configuration without secrets.
func (c AzureConfig) String() string {
	var keys []string
	for k := range c.props {
		if strings.HasPrefix(k, "adls.") {
			keys = append(keys, k)
		}
	}
	return fmt.Sprintf("AzureConfig{block-size=%d deleters=%d adls-properties=%d}", c.BlockSize, c.Deleters, len(keys))
}

// GoString keeps %#v from printing the secrets.
func (c AzureConfig) GoString() string { return c.String() }

// perAccount returns the value of a Java-style per-account property for the
// host (acct.dfs.core.windows.net), its twin (the blob host of a dfs one and
// back: a wasbs:// location reaches the account Java's properties name by
// its dfs host) or the bare account name, and the property's name.
func (c AzureConfig) perAccount(prefix, host, account string) (string, string) {
	twin := host
	if name, suffix, ok := strings.Cut(host, "."); ok {
		if rest, ok := strings.CutPrefix(suffix, "dfs."); ok {
			twin = name + ".blob." + rest
		} else if rest, ok := strings.CutPrefix(suffix, "blob."); ok {
			twin = name + ".dfs." + rest
		}
	}
	for _, k := range []string{prefix + host, prefix + twin, prefix + account} {
		if v := c.props[k]; v != "" {
			return v, k
		}
	}
	return "", ""
}

// account resolves the service URL and credential of the account of host.
// The first of these wins: a connection string (Java's per-account
// property, PyIceberg's, AZURE_STORAGE_CONNECTION_STRING) for its
// endpoint and any key or SAS it holds; a SAS token (per-account, then
// PyIceberg's); a shared key (Java's, PyIceberg's, AZURE_STORAGE_KEY); a
// service principal (adls.tenant-id, adls.client-id, adls.client-secret);
// else Azure's default credential chain.
func (c AzureConfig) account(host string) (azureAccount, error) {
	name, _, _ := strings.Cut(host, ".")
	a := azureAccount{name: name, serviceURL: defaultBlobURL(host, name)}
	pyName := c.props[ADLSAccountName]
	pyApplies := pyName == "" || strings.EqualFold(pyName, name)

	connStr, connFrom := c.perAccount(ADLSConnectionStringPrefix, host, name)
	if connStr == "" && pyApplies && c.props[ADLSConnectionString] != "" {
		connStr, connFrom = c.props[ADLSConnectionString], ADLSConnectionString
	}
	if connStr == "" && c.getenv("AZURE_STORAGE_CONNECTION_STRING") != "" {
		connStr, connFrom = c.getenv("AZURE_STORAGE_CONNECTION_STRING"), "AZURE_STORAGE_CONNECTION_STRING"
	}
	if connStr != "" {
		cs, err := parseConnectionString(connStr)
		if err != nil {
			return azureAccount{}, fmt.Errorf("azure config: %s: %w", connFrom, err)
		}
		// A connection string of another account (a global one) does not apply.
		if cs.account == "" || strings.EqualFold(cs.account, name) || connFrom != "AZURE_STORAGE_CONNECTION_STRING" && connFrom != ADLSConnectionString {
			if cs.blobURL != "" {
				a.serviceURL = cs.blobURL
			} else if cs.suffix != "" {
				a.serviceURL = fmt.Sprintf("%s://%s.blob.%s/", cs.protocol, name, cs.suffix)
			}
			switch {
			case cs.sas != "":
				a.kind, a.sas, a.source = azureSAS, cs.sas, connFrom
			case cs.key != "":
				a.kind, a.key, a.source = azureSharedKey, cs.key, connFrom
				if cs.account != "" {
					a.name = cs.account
				}
			}
		}
	} else if auth := c.props[ADLSBlobStorageAuthority]; auth != "" {
		scheme := c.props[ADLSBlobStorageScheme]
		if scheme == "" {
			scheme = "https"
		}
		if strings.HasPrefix(auth, ".") {
			a.serviceURL = scheme + "://" + name + auth + "/"
		} else {
			a.serviceURL = scheme + "://" + auth + "/" + name + "/" // emulator: account in the path
		}
	}
	if a.source != "" {
		return a, nil
	}
	if sas, from := c.perAccount(ADLSSASTokenPrefix, host, name); sas != "" {
		a.kind, a.sas, a.source = azureSAS, strings.TrimPrefix(sas, "?"), from
		return a, nil
	}
	if sas := c.props[ADLSSASToken]; sas != "" && pyApplies {
		a.kind, a.sas, a.source = azureSAS, strings.TrimPrefix(sas, "?"), ADLSSASToken
		return a, nil
	}
	if n := c.props[ADLSSharedKeyAccountName]; n != "" && strings.EqualFold(n, name) {
		a.kind, a.key, a.source = azureSharedKey, c.props[ADLSSharedKeyAccountKey], ADLSSharedKeyAccountKey
		return a, nil
	}
	if k := c.props[ADLSAccountKey]; k != "" && strings.EqualFold(pyName, name) {
		a.kind, a.key, a.source = azureSharedKey, k, ADLSAccountKey
		return a, nil
	}
	if n, k := c.getenv("AZURE_STORAGE_ACCOUNT"), c.getenv("AZURE_STORAGE_KEY"); k != "" && strings.EqualFold(n, name) {
		a.kind, a.key, a.source = azureSharedKey, k, "AZURE_STORAGE_KEY"
		return a, nil
	}
	if c.props[ADLSClientSecret] != "" {
		if c.props[ADLSTenantID] == "" || c.props[ADLSClientID] == "" {
			return azureAccount{}, fmt.Errorf("azure config: %s needs %s and %s", ADLSClientSecret, ADLSTenantID, ADLSClientID)
		}
		a.kind, a.source = azureClientSecret, ADLSClientSecret
		a.tenant, a.clientID, a.secret = c.props[ADLSTenantID], c.props[ADLSClientID], c.props[ADLSClientSecret]
		return a, nil
	}
	a.kind, a.source = azureDefaultChain, "Azure's default credential chain"
	return a, nil
}

// defaultBlobURL is the Blob endpoint of a location's host: the dfs
// endpoint's blob twin (acct.dfs.core.windows.net serves the same data as
// acct.blob.core.windows.net), over https.
func defaultBlobURL(host, account string) string {
	_, suffix, ok := strings.Cut(host, ".")
	if !ok {
		return "https://" + account + ".blob.core.windows.net/"
	}
	if rest, ok := strings.CutPrefix(suffix, "dfs."); ok {
		suffix = "blob." + rest
	}
	return "https://" + account + "." + suffix + "/"
}

// connectionString is what icectl uses of an Azure connection string.
type connectionString struct {
	account, key, sas string
	blobURL           string // BlobEndpoint, or Java's plain endpoint URL
	protocol, suffix  string
}

// parseConnectionString reads "Key=Value;..." (Azure's form) or a plain
// endpoint URL (what Java's adls.connection-string.<account> holds).
func parseConnectionString(s string) (connectionString, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") {
		if _, err := url.Parse(s); err != nil {
			return connectionString{}, fmt.Errorf("endpoint %q: %w", s, err)
		}
		return connectionString{blobURL: strings.TrimRight(s, "/") + "/"}, nil
	}
	cs := connectionString{protocol: "https"}
	for part := range strings.SplitSeq(s, ";") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return connectionString{}, fmt.Errorf("not a connection string (Key=Value;...) or an endpoint URL")
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "accountname":
			cs.account = v
		case "accountkey":
			cs.key = v
		case "sharedaccesssignature":
			cs.sas = strings.TrimPrefix(v, "?")
		case "blobendpoint":
			cs.blobURL = strings.TrimRight(v, "/") + "/"
		case "defaultendpointsprotocol":
			cs.protocol = v
		case "endpointsuffix":
			cs.suffix = v
		case "usedevelopmentstorage":
			if strings.EqualFold(v, "true") {
				cs.account, cs.key, cs.blobURL = devStoreAccount, devStoreKey, devStoreBlobURL+"/"
			}
		}
	}
	if cs.account != "" && cs.blobURL == "" && cs.suffix == "" {
		cs.suffix = "core.windows.net"
	}
	return cs, nil
}
