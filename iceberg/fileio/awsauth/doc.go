// Package awsauth is icectl's one way to AWS credentials and regions, and
// the SigV4 signing of requests to AWS's Iceberg REST endpoints (Glue,
// S3 Tables). The S3 FileIO and the REST catalog both load their
// credentials here, so a setting means the same to both: static keys when
// given, else the AWS SDK's default chain (environment, profile, web
// identity, container, instance metadata), quietly and with a short
// instance-metadata probe.
//
// It holds the AWS SDK out of the packages above it: catalog/rest signs
// through a Signer without naming an SDK type. It must never print, log or
// put into an error message a secret key or a session token.
package awsauth
