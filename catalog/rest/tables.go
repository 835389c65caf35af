package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
)

// accessDelegation asks the server to vend storage credentials with the
// table (REST header X-Iceberg-Access-Delegation).
var _ catalog.LocationProvider = (*Catalog)(nil)

var accessDelegation = http.Header{"X-Iceberg-Access-Delegation": {"vended-credentials"}}

// loadTableResult is the REST LoadTableResult.
type loadTableResult struct {
	MetadataLocation   *string             `json:"metadata-location"`
	Metadata           json.RawMessage     `json:"metadata"`
	Config             map[string]string   `json:"config"`
	StorageCredentials []storageCredential `json:"storage-credentials"`
}

type storageCredential struct {
	Prefix string            `json:"prefix"`
	Config map[string]string `json:"config"`
}

// CreateTable creates the table id with md's current schema, default
// partition spec, default sort order, properties and location (empty: the
// server picks one). The server assigns the table UUID and may renumber
// field ids; the returned table holds the metadata the server wrote.
func (c *Catalog) CreateTable(ctx context.Context, id catalog.Ident, md *spec.TableMetadata) (*catalog.Table, error) {
	op := "rest catalog: create table " + id.String()
	p, err := c.tablesPath(id.Namespace)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if id.Name == "" {
		return nil, fmt.Errorf("%s: empty table name", op)
	}
	// A caller that took DefaultLocation leaves the choice to the server,
	// which knows its own layout (weed mini, for one, adds the table UUID).
	omitLocation := md != nil && md.Location == c.defaultLocation(id)
	body, err := createTableBody(id.Name, md, omitLocation)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	status, resp, err := c.send(ctx, call{method: http.MethodPost, path: p, body: body, header: accessDelegation})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if status != http.StatusOK {
		return nil, c.responseError(op, opCreate, catalog.ErrNoSuchNamespace, status, resp)
	}
	return c.tableFromResult(ctx, op, id, resp)
}

func createTableBody(name string, md *spec.TableMetadata, omitLocation bool) ([]byte, error) {
	if md == nil {
		return nil, errors.New("no table metadata")
	}
	schema := md.CurrentSchema()
	if schema == nil {
		return nil, fmt.Errorf("metadata has no current schema %d", md.CurrentSchemaID)
	}
	req := struct {
		Name          string              `json:"name"`
		Location      string              `json:"location,omitempty"`
		Schema        *spec.Schema        `json:"schema"`
		PartitionSpec *spec.PartitionSpec `json:"partition-spec,omitempty"`
		WriteOrder    *spec.SortOrder     `json:"write-order,omitempty"`
		StageCreate   bool                `json:"stage-create"`
		Properties    map[string]string   `json:"properties"`
	}{Name: name, Schema: schema, PartitionSpec: md.DefaultSpec(), Properties: map[string]string{}}
	if !omitLocation {
		req.Location = md.Location
	}
	if o, ok := md.SortOrderByID(md.DefaultSortOrderID); ok {
		req.WriteOrder = o
	}
	for k, v := range md.Properties {
		req.Properties[k] = v
	}
	// The REST create request has no format-version field; servers read
	// it from this reserved property, as Java's RESTSessionCatalog sends it.
	if _, ok := req.Properties["format-version"]; !ok && md.FormatVersion > 0 {
		req.Properties["format-version"] = strconv.Itoa(md.FormatVersion)
	}
	return json.Marshal(req)
}

// DefaultLocation returns <warehouse>/<namespace levels>/<name>, for
// spec.NewTableMetadata, which needs a location. CreateTable does not send
// this location: the server picks the table's location itself.
func (c *Catalog) DefaultLocation(ctx context.Context, id catalog.Ident) (string, error) {
	if err := id.Validate(); err != nil {
		return "", err
	}
	loc := c.defaultLocation(id)
	if loc == "" {
		return "", fmt.Errorf("rest catalog: default location of %s: the catalog has no warehouse", id)
	}
	return loc, nil
}

func (c *Catalog) defaultLocation(id catalog.Ident) string {
	wh := strings.TrimRight(c.props[PropWarehouse], "/")
	if wh == "" || id.Name == "" {
		return ""
	}
	return wh + "/" + strings.Join(append(append([]string{}, id.Namespace...), id.Name), "/")
}

// LoadTable loads the current version of a table, asking the server for
// vended storage credentials, which configure the table's FileIO.
func (c *Catalog) LoadTable(ctx context.Context, id catalog.Ident) (*catalog.Table, error) {
	op := "rest catalog: load table " + id.String()
	p, err := c.tablePath(id)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	status, resp, err := c.send(ctx, call{method: http.MethodGet, path: p, header: accessDelegation})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if status != http.StatusOK {
		return nil, c.responseError(op, opRead, catalog.ErrNoSuchTable, status, resp)
	}
	return c.tableFromResult(ctx, op, id, resp)
}

func (c *Catalog) tableFromResult(ctx context.Context, op string, id catalog.Ident, body []byte) (*catalog.Table, error) {
	res, md, err := decodeLoadResult(body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	fio, err := c.tableFileIO(ctx, md.Location, res.Config, res.StorageCredentials)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return &catalog.Table{Ident: id, MetadataLocation: deref(res.MetadataLocation), Metadata: md, IO: fio}, nil
}

// decodeLoadResult decodes a LoadTableResult and its table metadata.
func decodeLoadResult(body []byte) (*loadTableResult, *spec.TableMetadata, error) {
	var res loadTableResult
	if err := json.Unmarshal(body, &res); err != nil {
		return nil, nil, fmt.Errorf("malformed response: %w", err)
	}
	if len(res.Metadata) == 0 || string(res.Metadata) == "null" {
		return nil, nil, fmt.Errorf("response has no metadata: %w", ErrUnexpected)
	}
	md, err := spec.ParseMetadata(res.Metadata)
	if err != nil {
		return nil, nil, err
	}
	return &res, md, nil
}

// tableFileIO returns the FileIO for a table: the catalog's properties,
// then the table's config, then the storage credential with the longest
// prefix of the table location (the REST spec says credentials take
// precedence over config).
func (c *Catalog) tableFileIO(ctx context.Context, location string, config map[string]string, creds []storageCredential) (fileio.FileIO, error) {
	cred := longestPrefix(creds, location)
	if len(config) == 0 && cred == nil {
		return c.fileIOs.For(ctx, location)
	}
	props := c.Properties()
	for k, v := range config {
		props[k] = v
	}
	if cred != nil {
		for k, v := range cred.Config {
			props[k] = v
		}
	}
	fio, err := fileio.Load(ctx, location, props)
	if err != nil {
		return nil, fmt.Errorf("file IO for %s: %w", location, err)
	}
	return fio, nil
}

// DropTable removes the table from the catalog without purging its files.
func (c *Catalog) DropTable(ctx context.Context, id catalog.Ident) error {
	op := "rest catalog: drop table " + id.String()
	p, err := c.tablePath(id)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	q := map[string][]string{"purgeRequested": {"false"}}
	status, resp, err := c.send(ctx, call{method: http.MethodDelete, path: p, query: q})
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if status != http.StatusNoContent && status != http.StatusOK {
		return c.responseError(op, opRead, catalog.ErrNoSuchTable, status, resp)
	}
	return nil
}
