package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/icectl/icectl/catalog"
)

var _ catalog.Registrar = (*Catalog)(nil)

// RegisterTable asks the server to register loc as table id (POST
// .../namespaces/{ns}/register); the server reads the file.
func (c *Catalog) RegisterTable(ctx context.Context, id catalog.Ident, loc string) (*catalog.Table, error) {
	op := "rest catalog: register table " + id.String()
	if err := id.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	nsp, err := c.namespacePath(id.Namespace)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	body, err := json.Marshal(struct {
		Name             string `json:"name"`
		MetadataLocation string `json:"metadata-location"`
	}{id.Name, loc})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	status, resp, err := c.send(ctx, call{method: http.MethodPost, path: c.v1("namespaces", nsp, "register"), body: body, header: accessDelegation})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if status != http.StatusOK {
		return nil, c.responseError(op, opCreate, catalog.ErrNoSuchNamespace, status, resp)
	}
	return c.tableFromResult(ctx, op, id, resp)
}
