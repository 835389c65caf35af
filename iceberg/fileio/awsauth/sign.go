package awsauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Header names a signed request carries besides Authorization.
const (
	// HeaderContentSHA256 holds the hex SHA-256 of the body. Java's
	// RESTSigV4AuthSession sends it on every request, the empty body's
	// hash included; the signature covers it, so a body changed on the
	// way no longer matches.
	HeaderContentSHA256 = "X-Amz-Content-Sha256"
	// HeaderOriginalAuthorization is where a request's own Authorization
	// (an OAuth2 bearer token) moves, signed, when SigV4 takes the
	// Authorization header: Java's and PyIceberg's relocation.
	HeaderOriginalAuthorization = "Original-Authorization"
)

// Errors of NewSigner and Sign.
var (
	ErrNoCredentials = errors.New("no AWS credentials")
	ErrNoRegion      = errors.New("no signing region")
)

// Signer signs HTTP requests with AWS Signature Version 4 for one service
// (the signing name) in one region. It is safe for concurrent use.
type Signer struct {
	creds   aws.CredentialsProvider
	region  string
	service string
	signer  *v4.Signer
	now     func() time.Time
}

// NewSigner resolves s (Load) for signing requests to service. region,
// when set, is the signing region; otherwise s.Region or the chain's
// region is, and there must be one.
func NewSigner(ctx context.Context, s Settings, service, region string) (*Signer, error) {
	cfg, err := Load(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("load AWS config: %w", err)
	}
	if region == "" {
		region = cfg.Region
	}
	if region == "" {
		return nil, ErrNoRegion
	}
	if cfg.Credentials == nil {
		return nil, ErrNoCredentials
	}
	return &Signer{creds: cfg.Credentials, region: region, service: service, signer: v4.NewSigner(), now: time.Now}, nil
}

// Region returns the signing region.
func (s *Signer) Region() string { return s.region }

// Service returns the signing name.
func (s *Signer) Service() string { return s.service }

// Sign signs req, whose body is body (nil for none), in place: it sets
// X-Amz-Date, X-Amz-Content-Sha256, X-Amz-Security-Token for session
// credentials and Authorization, moving an Authorization already there to
// Original-Authorization, where the signature covers it. Credentials are
// retrieved per request from the cache, which fetches them again from the
// chain when they expire.
func (s *Signer) Sign(ctx context.Context, req *http.Request, body []byte) error {
	creds, err := s.creds.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNoCredentials, err)
	}
	if auth := req.Header.Get("Authorization"); auth != "" {
		req.Header.Del("Authorization")
		req.Header.Set(HeaderOriginalAuthorization, auth)
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	req.Header.Set(HeaderContentSHA256, hash)
	if err := s.signer.SignHTTP(ctx, creds, req, hash, s.service, s.region, s.now().UTC()); err != nil {
		return fmt.Errorf("sigv4 sign: %w", err)
	}
	return nil
}
