package rest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogtest"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// The REST server behind a testenv.SigV4Gate, which checks each request's
// AWS Signature Version 4 from AWS's algorithm (not with the SDK signer
// under test) and answers 403 as Glue and S3 Tables do.

const (
	sigv4Key    = "AKIDICECTLSIGV4TEST"
	sigv4Secret = "sigv4-secret-0123456789abcdefghij"
)

// sigv4Config is serverConfig signed for service in region through a gate
// that accepts keys (by default sigv4Key), without the OAuth2 credential
// (AWS's endpoints take SigV4 alone) unless the server needs one.
func sigv4Config(t *testing.T, service, region string, keys ...testenv.SigV4Key) (catalog.Config, *testenv.SigV4Gate) {
	t.Helper()
	cfg := serverConfig(t)
	if len(keys) == 0 {
		keys = []testenv.SigV4Key{{ID: sigv4Key, Secret: sigv4Secret}}
	}
	gate := testenv.NewSigV4Gate(t, cfg.URI, region, service, keys...)
	if !testenv.RESTNeedsToken(t, cfg.URI) {
		delete(cfg.Props, PropCredential)
	}
	cfg.URI = gate.URL
	cfg.Props[PropSigV4Enabled] = "true"
	cfg.Props[PropSigningName] = service
	cfg.Props[PropSigningRegion] = region
	cfg.Props[PropRESTAccessKeyID] = keys[0].ID
	cfg.Props[PropRESTSecretAccessKey] = keys[0].Secret
	cfg.Props[PropRESTSessionToken] = keys[0].Token
	return cfg, gate
}

func openCfg(t *testing.T, cfg catalog.Config) *Catalog {
	t.Helper()
	c, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open REST catalog through the SigV4 gate: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// checkAllSigned fails unless the gate forwarded every request it saw,
// each signed over its body with key.
func checkAllSigned(t *testing.T, gate *testenv.SigV4Gate, key string) map[string]int {
	t.Helper()
	methods := map[string]int{}
	for _, r := range gate.Log() {
		if r.Refusal != "" || !r.SignedBody || r.KeyID != key {
			t.Errorf("%s %s: refusal %q, body signed %v, key %q (want %s)", r.Method, r.Path, r.Refusal, r.SignedBody, r.KeyID, key)
		}
		methods[r.Method]++
	}
	return methods
}

func TestServerSigV4Lifecycle(t *testing.T) {
	for _, svc := range []struct{ name, region string }{{"glue", "eu-west-1"}, {"s3tables", "us-east-2"}} {
		t.Run(svc.name, func(t *testing.T) {
			cfg, gate := sigv4Config(t, svc.name, svc.region)
			c := openCfg(t, cfg)
			ctx := context.Background()
			// A nested namespace: its separator (%1F) is escaped in the
			// path, which SigV4 encodes once more.
			parent := uniqueName(t, "sigv4_")
			if err := c.CreateNamespace(ctx, []string{parent}, nil); err != nil {
				t.Fatal(err)
			}
			id := catalog.Ident{Namespace: []string{parent, "inner"}, Name: "t"}
			tbl := catalogtest.NewTable(t, c, id, map[string]string{"owner": "sigv4"})
			reqs, ups := catalogtest.AppendSnapshot(tbl.Metadata, 7001)
			committed, err := c.CommitTable(ctx, tbl, reqs, ups)
			if err != nil {
				t.Fatalf("commit through the gate: %v", err)
			}
			if _, err := c.ListTables(ctx, id.Namespace); err != nil {
				t.Fatalf("list tables: %v", err)
			}
			// The server behind the gate has the commit.
			direct, err := openServer(t).LoadTable(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if direct.MetadataLocation != committed.MetadataLocation || direct.Metadata.CurrentSnapshot() == nil {
				t.Errorf("server has %s, the signed commit returned %s", direct.MetadataLocation, committed.MetadataLocation)
			}
			if err := c.DropTable(ctx, id); err != nil {
				t.Fatalf("drop table: %v", err)
			}
			methods := checkAllSigned(t, gate, sigv4Key)
			if methods["GET"] == 0 || methods["POST"] < 3 || methods["DELETE"] == 0 {
				t.Errorf("requests through the gate by method: %v, want GETs, POSTs (namespace, table, commit) and a DELETE", methods)
			}
		})
	}
}

// A wrong secret, region or signing name is refused by the gate with the
// error AWS gives, which icectl shows on one line with what to check; the
// server behind sees nothing.
func TestServerSigV4Refused(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(cfg *catalog.Config)
		aws    string // AWS's message, as the gate sends it
	}{
		{"wrong secret", func(cfg *catalog.Config) { cfg.Props[PropRESTSecretAccessKey] = "not-the-secret-0000" }, "signature we calculated does not match"},
		{"wrong region", func(cfg *catalog.Config) { cfg.Props[PropSigningRegion] = "us-west-2" }, "scoped to a valid region"},
		{"wrong signing name", func(cfg *catalog.Config) { cfg.Props[PropSigningName] = "execute-api" }, "scoped to correct service: 'glue'"},
		{"default signing name", func(cfg *catalog.Config) { delete(cfg.Props, PropSigningName) }, "scoped to correct service: 'glue'"},
		{"unknown key", func(cfg *catalog.Config) { cfg.Props[PropRESTAccessKeyID] = "AKIDNOBODY" }, "security token included in the request is invalid"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, gate := sigv4Config(t, "glue", "eu-west-1")
			c.change(&cfg)
			_, err := Open(context.Background(), cfg)
			if !errors.Is(err, ErrForbidden) {
				t.Fatalf("open: %v, want ErrForbidden", err)
			}
			msg := err.Error()
			for _, want := range []string{"403", c.aws, PropSigningRegion, PropSigningName, "AWS credentials"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if strings.Contains(msg, "\n") || strings.Contains(msg, "not-the-secret") {
				t.Errorf("error %q is not one secret-free line", msg)
			}
			if n := len(gate.Forwarded()); n != 0 {
				t.Errorf("the gate forwarded %d requests", n)
			}
		})
	}
}

// A commit refused mid-session (the key rotated away) and a commit whose
// body was changed after signing change nothing on the server.
func TestServerSigV4RefusedCommitChangesNothing(t *testing.T) {
	for _, name := range []string{"key revoked", "body tampered"} {
		t.Run(name, func(t *testing.T) {
			cfg, gate := sigv4Config(t, "s3tables", "us-east-1")
			c := openCfg(t, cfg)
			ctx := context.Background()
			id := catalog.Ident{Namespace: []string{uniqueName(t, "sigv4_")}, Name: "t"}
			tbl := catalogtest.NewTable(t, c, id, nil)
			if name == "key revoked" {
				gate.SetKeys(testenv.SigV4Key{ID: "AKIDSOMEONEELSE", Secret: "x"})
			} else {
				gate.TamperNext(func(b []byte) []byte { return bytes.Replace(b, []byte(`"main"`), []byte(`"evil"`), 1) })
			}
			reqs, ups := catalogtest.AppendSnapshot(tbl.Metadata, 7002)
			_, err := c.CommitTable(ctx, tbl, reqs, ups)
			if !errors.Is(err, ErrForbidden) || errors.Is(err, catalog.ErrCommitStateUnknown) {
				t.Fatalf("commit: %v, want ErrForbidden (refused, not unknown)", err)
			}
			direct, err := openServer(t).LoadTable(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if direct.MetadataLocation != tbl.MetadataLocation || len(direct.Metadata.Snapshots) != 0 {
				t.Errorf("server's table moved to %s (%d snapshots) after a refused commit", direct.MetadataLocation, len(direct.Metadata.Snapshots))
			}
			log := gate.Log()
			last := log[len(log)-1]
			if last.Method != "POST" || last.Refusal != map[string]string{"key revoked": "UnrecognizedClientException", "body tampered": "InvalidSignatureException"}[name] {
				t.Errorf("last request %+v", last)
			}
		})
	}
}

// Temporary credentials carry X-Amz-Security-Token; without it the gate
// refuses them as AWS does.
func TestServerSigV4SessionToken(t *testing.T) {
	key := testenv.SigV4Key{ID: "ASIAICECTLSESSION", Secret: "session-secret-abcdef0123456789", Token: "FwoGZXIvYXdzEXAMPLE//session+token="}
	cfg, gate := sigv4Config(t, "glue", "eu-west-1", key)
	c := openCfg(t, cfg)
	if _, err := c.ListNamespaces(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	checkAllSigned(t, gate, key.ID)
	for _, r := range gate.Log() {
		if !r.Token {
			t.Errorf("%s %s went without X-Amz-Security-Token", r.Method, r.Path)
		}
	}
	delete(cfg.Props, PropRESTSessionToken)
	if _, err := Open(context.Background(), cfg); !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), "security token") {
		t.Errorf("session credentials without the token: %v, want 403 invalid security token", err)
	}
}

// SigV4 over OAuth2: the token request to the catalog's own URI is signed
// too, and the bearer token moves to Original-Authorization, under the
// signature, as Java and PyIceberg send it.
func TestServerSigV4OverOAuth2(t *testing.T) {
	cfg, gate := sigv4Config(t, "execute-api", "us-east-1")
	cfg.Props[PropCredential] = serverConfig(t).Props[PropCredential]
	delete(cfg.Props, PropSigningName) // the default is execute-api
	c := openCfg(t, cfg)
	if _, err := c.ListNamespaces(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	checkAllSigned(t, gate, sigv4Key)
	log := gate.Log()
	if len(log) < 3 || !strings.HasSuffix(log[0].Path, "/oauth/tokens") {
		t.Fatalf("requests %+v, want the token request first", log)
	}
	for _, r := range log[1:] {
		if !strings.HasPrefix(r.Original, "Bearer ") {
			t.Errorf("%s %s: Original-Authorization %q, want the bearer token", r.Method, r.Path, r.Original)
		}
	}
}

// Credentials come from the AWS chain when no keys are given, and are
// fetched again as they expire: a credential_process profile whose
// credentials have expired is asked anew for each request, so a rotation
// between two requests of one open catalog is followed.
func TestServerSigV4CredentialRefresh(t *testing.T) {
	dir := t.TempDir()
	credsFile := filepath.Join(dir, "creds.json")
	writeCreds := func(id, secret, token string) {
		t.Helper()
		expired := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
		doc := fmt.Sprintf(`{"Version":1,"AccessKeyId":%q,"SecretAccessKey":%q,"SessionToken":%q,"Expiration":%q}`, id, secret, token, expired)
		if err := os.WriteFile(credsFile, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	confFile := filepath.Join(dir, "config")
	conf := fmt.Sprintf("[profile sigv4test]\ncredential_process = cat %s\nregion = eu-west-1\n", credsFile)
	if err := os.WriteFile(confFile, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	isolateAWSEnv(t)
	t.Setenv("AWS_CONFIG_FILE", confFile)

	k1 := testenv.SigV4Key{ID: "ASIAFIRST", Secret: "first-secret-0123456789", Token: "first-token"}
	k2 := testenv.SigV4Key{ID: "ASIASECOND", Secret: "second-secret-0123456789", Token: "second-token"}
	cfg, gate := sigv4Config(t, "glue", "eu-west-1", k1)
	for _, k := range []string{PropRESTAccessKeyID, PropRESTSecretAccessKey, PropRESTSessionToken, PropSigningRegion} {
		delete(cfg.Props, k) // the region comes from the profile too
	}
	cfg.Props[fileio.ClientProfileName] = "sigv4test"
	delete(cfg.Props, fileio.ClientRegion)
	writeCreds(k1.ID, k1.Secret, k1.Token)
	c := openCfg(t, cfg)
	ctx := context.Background()
	if _, err := c.ListNamespaces(ctx, nil); err != nil {
		t.Fatal(err)
	}
	gate.SetKeys(k2)
	writeCreds(k2.ID, k2.Secret, k2.Token)
	if _, err := c.ListNamespaces(ctx, nil); err != nil {
		t.Fatalf("after rotation: %v", err)
	}
	log := gate.Log()
	if first, last := log[0], log[len(log)-1]; first.KeyID != k1.ID || last.KeyID != k2.ID || last.Refusal != "" || !last.Token {
		t.Errorf("first request by %s, last by %s (refusal %q, token %v): want %s then %s", first.KeyID, last.KeyID, last.Refusal, last.Token, k1.ID, k2.ID)
	}
}

// isolateAWSEnv keeps the machine's AWS settings out of a test.
func isolateAWSEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
}
