package rest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/fileio/awsauth"
)

// SigV4 properties: AWS's Iceberg REST endpoints (Glue at
// https://glue.<region>.amazonaws.com/iceberg, S3 Tables at
// https://s3tables.<region>.amazonaws.com/iceberg) take requests signed
// with AWS Signature Version 4. The names are Java's (AwsProperties) and
// PyIceberg's.
const (
	PropSigV4Enabled  = "rest.sigv4-enabled"
	PropSigningName   = "rest.signing-name"   // glue, s3tables; default execute-api
	PropSigningRegion = "rest.signing-region" // default client.region, then the AWS chain's
	// Java's static signing keys; PyIceberg's are client.access-key-id,
	// client.secret-access-key and client.session-token, taken when these
	// are not given.
	PropRESTAccessKeyID     = "rest.access-key-id"
	PropRESTSecretAccessKey = "rest.secret-access-key"
	PropRESTSessionToken    = "rest.session-token"
)

// defaultSigningName is Java's REST_SIGNING_NAME_DEFAULT and PyIceberg's
// default: API Gateway (and Lambda behind it).
const defaultSigningName = "execute-api"

// newSigner returns the SigV4 signer props ask for, nil when
// rest.sigv4-enabled is not true. Credentials are, in order,
// rest.access-key-id (Java), client.access-key-id (PyIceberg), then the
// AWS chain the S3 FileIO uses (environment, the profile client.profile-name
// or AWS_PROFILE, web identity, container, instance metadata).
func newSigner(ctx context.Context, props map[string]string) (*awsauth.Signer, error) {
	on, err := boolProp(props, PropSigV4Enabled)
	if err != nil || !on {
		return nil, err
	}
	s := awsauth.Settings{
		AccessKeyID: props[PropRESTAccessKeyID], SecretAccessKey: props[PropRESTSecretAccessKey], SessionToken: props[PropRESTSessionToken],
		Profile: props[fileio.ClientProfileName], Region: props[fileio.ClientRegion],
	}
	if err := s.Check(PropRESTAccessKeyID, PropRESTSecretAccessKey, PropRESTSessionToken); err != nil {
		return nil, fmt.Errorf("rest catalog: %w", err)
	}
	if s.AccessKeyID == "" {
		s.AccessKeyID, s.SecretAccessKey, s.SessionToken = props[fileio.ClientAccessKeyID], props[fileio.ClientSecretAccessKey], props[fileio.ClientSessionToken]
		if err := s.Check(fileio.ClientAccessKeyID, fileio.ClientSecretAccessKey, fileio.ClientSessionToken); err != nil {
			return nil, fmt.Errorf("rest catalog: %w", err)
		}
	}
	name := strings.TrimSpace(props[PropSigningName])
	if name == "" {
		name = defaultSigningName
	}
	signer, err := awsauth.NewSigner(ctx, s, name, strings.TrimSpace(props[PropSigningRegion]))
	if errors.Is(err, awsauth.ErrNoRegion) {
		return nil, fmt.Errorf("rest catalog: %s=true but %w: set %s (or %s, AWS_REGION)",
			PropSigV4Enabled, err, PropSigningRegion, fileio.ClientRegion)
	}
	if err != nil {
		return nil, fmt.Errorf("rest catalog: SigV4: %w", err)
	}
	return signer, nil
}

// boolProp reads a boolean property as PyIceberg does (Python's
// strtobool: true, yes, on, 1 and their opposites, any case); absent or
// empty is false.
func boolProp(props map[string]string, key string) (bool, error) {
	v := strings.TrimSpace(props[key])
	switch strings.ToLower(v) {
	case "", "false", "f", "no", "n", "off", "0":
		return false, nil
	case "true", "t", "yes", "y", "on", "1":
		return true, nil
	}
	return false, fmt.Errorf("rest catalog property %s=%q: want true or false", key, v)
}

// sigv4Hint is what an answer refusing a signed request (401, 403) adds:
// which settings decide the signature.
func (c *Catalog) sigv4Hint() string {
	if c.signer == nil {
		return ""
	}
	return fmt.Sprintf("request signed with SigV4 as %s in %s: check the AWS credentials (%s, %s, AWS_PROFILE or AWS_ACCESS_KEY_ID), %s and %s",
		c.signer.Service(), c.signer.Region(), PropRESTAccessKeyID, fileio.ClientAccessKeyID, PropSigningRegion, PropSigningName)
}

// signError says what to set when signing failed for want of credentials.
func signError(err error) error {
	if errors.Is(err, awsauth.ErrNoCredentials) {
		return fmt.Errorf("SigV4: %w; set %s and %s (or %s and %s), AWS_PROFILE or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
			err, PropRESTAccessKeyID, PropRESTSecretAccessKey, fileio.ClientAccessKeyID, fileio.ClientSecretAccessKey)
	}
	return fmt.Errorf("SigV4: %w", err)
}
