// Package rest is a catalog.Catalog client for the Apache Iceberg REST
// catalog protocol (open-api/rest-catalog-open-api.yaml): configuration
// discovery, namespaces, tables, commits with requirements, OAuth2 client
// credentials or a static bearer token, and vended storage credentials.
//
// A commit is one HTTP attempt. Its outcome maps onto the catalog errors:
// 409 is catalog.ErrCommitConflict; 500, 502, 503, 504, a timeout or a
// connection lost after the request was written is
// catalog.ErrCommitStateUnknown, because the server may have applied it.
//
// The client must never print, log or put into an error message a token,
// a client secret or a vended credential.
package rest
