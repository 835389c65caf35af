package rest

import (
	"fmt"
	"strconv"
	"time"
)

// Catalog properties read by this client. The names are those of the Java
// client (OAuth2Properties, RESTCatalogProperties, RESTSessionCatalog).
const (
	PropURI                = "uri"
	PropWarehouse          = "warehouse"
	PropPrefix             = "prefix"
	PropNamespaceSeparator = "namespace-separator"
	PropCredential         = "credential"        // "client_id:client_secret", or the secret alone
	PropToken              = "token"             // a static bearer token
	PropOAuth2ServerURI    = "oauth2-server-uri" // default <uri>/v1/oauth/tokens
	PropScope              = "scope"             // default "catalog"
	PropAudience           = "audience"
	PropResource           = "resource"
	PropPageSize           = "rest-page-size" // asked of servers that paginate listings
	PropConnectTimeoutMS   = "rest.client.connection-timeout-ms"
	// PropSocketTimeoutMS bounds one whole request, from sending it to
	// reading the last byte of the response.
	PropSocketTimeoutMS = "rest.client.socket-timeout-ms"
)

// Defaults of the options above.
const (
	defaultScope          = "catalog"
	defaultSeparator      = "%1F" // 0x1F, URL-encoded as the spec writes it
	defaultConnectTimeout = 10 * time.Second
	defaultRequestTimeout = 120 * time.Second
)

// secretProps are catalog properties that must not reach a FileIO or an
// error message.
var secretProps = []string{PropCredential, PropToken, PropRESTSecretAccessKey, PropRESTSessionToken}

// durationMSProp reads a positive millisecond duration property.
func durationMSProp(props map[string]string, key string, def time.Duration) (time.Duration, error) {
	v, ok := props[key]
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("rest catalog property %s=%q: want a positive number of milliseconds", key, v)
	}
	return time.Duration(n) * time.Millisecond, nil
}

// mergeProps returns the union of the maps, later ones winning.
func mergeProps(maps ...map[string]string) map[string]string {
	out := make(map[string]string)
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
