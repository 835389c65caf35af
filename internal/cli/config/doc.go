// Package config resolves which catalog a command talks to, from command
// flags, environment variables and configuration files.
//
// Two file formats are read: icectl's own ~/.icectl.yaml (or $ICECTL_CONFIG)
// and PyIceberg's .pyiceberg.yaml, so existing PyIceberg users bring their
// catalogs. Both have the same shape:
//
//	default-catalog: prod
//	catalog:
//	  prod:
//	    uri: https://rest.example.com
//	    warehouse: s3://bucket/wh
//	    credential: client-id:client-secret
//	    s3.endpoint: http://localhost:9000
//
// Environment variables follow PyIceberg's rule, with the prefix
// PYICEBERG_ or ICECTL_: the name is lower-cased, split on "__" into at
// most three parts, and within each part "_" becomes "-". So
// PYICEBERG_CATALOG__PROD__S3__ACCESS_KEY_ID sets s3.access-key-id of
// catalog prod, and ICECTL_DEFAULT_CATALOG sets default-catalog.
//
// Catalog URIs from every source go through caturi.Parse, one grammar for
// all (SQLAlchemy's, as PyIceberg users write it, plus iceberg-go's file:
// DSN and bare .db paths); a malformed one is a *caturi.Error naming the
// source it came from.
//
// The package never prints secrets: anything meant for output goes through
// Catalog.Redacted, and Catalog.Scrub removes secret values from text such
// as error messages. It does no network IO.
package config
