package rest

import (
	"context"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
)

func TestSigV4PropsRefused(t *testing.T) {
	isolateAWSEnv(t)
	for _, c := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{PropSigV4Enabled: "yes please"}, "rest.sigv4-enabled"},
		{map[string]string{PropSigV4Enabled: "true", PropRESTAccessKeyID: "AKID", PropSigningRegion: "us-east-1"}, "rest.access-key-id and rest.secret-access-key must be given together"},
		{map[string]string{PropSigV4Enabled: "true", fileio.ClientSessionToken: "tok", PropSigningRegion: "us-east-1"}, "client.session-token needs"},
		{map[string]string{PropSigV4Enabled: "true", PropRESTAccessKeyID: "AKID", PropRESTSecretAccessKey: "s"}, "no signing region: set rest.signing-region"},
	} {
		_, err := Open(context.Background(), catalog.Config{URI: "http://127.0.0.1:1", Props: c.props})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("props %v: %v, want %q", c.props, err, c.want)
		}
	}
}

// The signing region is rest.signing-region, else client.region, else the
// chain's; the signing name defaults to execute-api as in Java and
// PyIceberg; rest.* keys win over client.* ones.
func TestSigV4PropsResolved(t *testing.T) {
	isolateAWSEnv(t)
	t.Setenv("AWS_REGION", "ap-south-1")
	for _, c := range []struct {
		props           map[string]string
		region, service string
	}{
		{map[string]string{}, "ap-south-1", "execute-api"},
		{map[string]string{fileio.ClientRegion: "eu-north-1", PropSigningName: "s3tables"}, "eu-north-1", "s3tables"},
		{map[string]string{fileio.ClientRegion: "eu-north-1", PropSigningRegion: "us-west-1", PropSigningName: "glue"}, "us-west-1", "glue"},
	} {
		props := map[string]string{PropSigV4Enabled: "Yes", fileio.ClientAccessKeyID: "AKID", fileio.ClientSecretAccessKey: "s"}
		for k, v := range c.props {
			props[k] = v
		}
		s, err := newSigner(context.Background(), props)
		if err != nil {
			t.Fatal(err)
		}
		if s.Region() != c.region || s.Service() != c.service {
			t.Errorf("props %v: signing %s in %s, want %s in %s", c.props, s.Service(), s.Region(), c.service, c.region)
		}
	}
	if s, err := newSigner(context.Background(), map[string]string{PropSigV4Enabled: "false"}); s != nil || err != nil {
		t.Errorf("rest.sigv4-enabled=false: signer %v, %v", s, err)
	}
}

// With no keys anywhere and nothing in the AWS chain, the first request
// fails before it is sent, saying what to set.
func TestSigV4NoCredentials(t *testing.T) {
	isolateAWSEnv(t)
	_, err := Open(context.Background(), catalog.Config{URI: "http://127.0.0.1:1", Props: map[string]string{PropSigV4Enabled: "true", PropSigningRegion: "us-east-1"}})
	if err == nil || !strings.Contains(err.Error(), "no AWS credentials") || !strings.Contains(err.Error(), "set rest.access-key-id") || strings.Contains(err.Error(), "\n") {
		t.Errorf("no credentials: %v", err)
	}
}
