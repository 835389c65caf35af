package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/caturi"
	"github.com/icectl/icectl/iceberg/fileio/awsauth"
)

// Catalog is a client of one REST catalog. It is safe for concurrent use.
type Catalog struct {
	name        string
	uri         string // base URI, no trailing slash
	prefix      string // path segment after /v1/, "" for none
	separator   string // URL-encoded namespace separator
	props       map[string]string
	idempotency bool // the server honours Idempotency-Key
	timeout     time.Duration
	http        *http.Client
	auth        *authenticator
	signer      *awsauth.Signer // nil unless rest.sigv4-enabled
	fileIOs     *catalog.FileIOs
}

// Option changes how Open builds the client.
type Option func(*options)

type options struct {
	client *http.Client
	now    func() time.Time
}

// WithHTTPClient makes the catalog use client (for its transport, TLS and
// proxy settings). Request deadlines still come from the catalog's
// properties.
func WithHTTPClient(client *http.Client) Option {
	return func(o *options) { o.client = client }
}

// Open connects to the REST catalog at cfg.URI: it authenticates when
// cfg.Props asks for it and reads the server's configuration (GET
// /v1/config), whose defaults and overrides are merged with cfg.Props
// (defaults < cfg.Props < overrides).
func Open(ctx context.Context, cfg catalog.Config, opts ...Option) (*Catalog, error) {
	o := options{now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	uri := strings.TrimRight(cfg.URI, "/")
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("rest catalog: URI %q: want http(s)://host[:port][/path]", caturi.Redact(cfg.URI))
	}
	client := mergeProps(cfg.Props)
	if cfg.Warehouse != "" {
		client[PropWarehouse] = cfg.Warehouse
	}
	connect, err := durationMSProp(client, PropConnectTimeoutMS, defaultConnectTimeout)
	if err != nil {
		return nil, err
	}
	timeout, err := durationMSProp(client, PropSocketTimeoutMS, defaultRequestTimeout)
	if err != nil {
		return nil, err
	}
	hc := o.client
	if hc == nil {
		hc = newHTTPClient(connect)
	}
	signer, err := newSigner(ctx, client)
	if err != nil {
		return nil, err
	}
	auth, err := newAuthenticator(hc, o.now, timeout, uri, client, signer)
	if err != nil {
		return nil, err
	}
	c := &Catalog{
		name:      cfg.Name,
		uri:       uri,
		separator: defaultSeparator,
		timeout:   timeout,
		http:      hc,
		auth:      auth,
		signer:    signer,
	}
	if c.name == "" {
		c.name = "rest"
	}
	if err := c.loadConfig(ctx, client); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// newHTTPClient returns a client with bounded connection set-up; the whole
// request is bounded per call by the catalog's timeout.
func newHTTPClient(connect time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = connect
	t.MaxIdleConnsPerHost = 8
	return &http.Client{
		Transport: t,
		// A redirect would resend a commit to another URL; the REST
		// protocol has none, so treat one as an answer.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Name returns the catalog's name.
func (c *Catalog) Name() string { return c.name }

// Close releases idle connections.
func (c *Catalog) Close() error {
	c.http.CloseIdleConnections()
	return nil
}

// Properties returns the merged catalog properties without secrets, for
// diagnostics.
func (c *Catalog) Properties() map[string]string {
	out := mergeProps(c.props)
	for _, k := range secretProps {
		delete(out, k)
	}
	return out
}

// configResponse is the REST CatalogConfig.
type configResponse struct {
	Defaults               map[string]string `json:"defaults"`
	Overrides              map[string]string `json:"overrides"`
	Endpoints              []string          `json:"endpoints"`
	IdempotencyKeyLifetime string            `json:"idempotency-key-lifetime"`
}

func (c *Catalog) loadConfig(ctx context.Context, client map[string]string) error {
	q := url.Values{}
	if wh := client[PropWarehouse]; wh != "" {
		q.Set("warehouse", wh)
	}
	const op = "rest catalog: get config"
	status, body, err := c.send(ctx, call{method: http.MethodGet, path: "v1/config", query: q})
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if status != http.StatusOK {
		return c.responseError(op, opRead, ErrUnexpected, status, body)
	}
	var cr configResponse
	if err := json.Unmarshal(body, &cr); err != nil {
		return fmt.Errorf("%s: malformed response: %w", op, err)
	}
	c.props = mergeProps(cr.Defaults, client, cr.Overrides)
	if u := strings.TrimRight(cr.Overrides[PropURI], "/"); u != "" {
		c.uri = u
	}
	c.prefix = strings.Trim(c.props[PropPrefix], "/")
	if sep := c.props[PropNamespaceSeparator]; sep != "" {
		c.separator = sep
	}
	if ps := c.props[PropPageSize]; ps != "" {
		if n, err := strconv.Atoi(ps); err != nil || n <= 0 {
			return fmt.Errorf("rest catalog property %s=%q: want a positive integer", PropPageSize, ps)
		}
	}
	c.idempotency = cr.IdempotencyKeyLifetime != ""
	// FileIO settings exclude the catalog's own secrets.
	fioProps := mergeProps(c.props)
	for _, k := range secretProps {
		delete(fioProps, k)
	}
	c.fileIOs = catalog.NewFileIOs(fioProps)
	return nil
}

// redact removes known secrets from s.
func (c *Catalog) redact(s string) string { return c.auth.redact(s) }

var _ catalog.Catalog = (*Catalog)(nil)

// OpenCatalog is Open for callers that want the interface (catalogs.Open):
// on error it returns a nil interface, never a nil *Catalog inside one.
func OpenCatalog(ctx context.Context, cfg catalog.Config, opts ...Option) (catalog.Catalog, error) {
	c, err := Open(ctx, cfg, opts...)
	if err != nil {
		return nil, err
	}
	return c, nil
}
