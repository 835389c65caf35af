package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// TestSigV4REST runs icectl, as a process configured by a .pyiceberg.yaml
// written as Glue's users write it, against the REST server behind a
// testenv.SigV4Gate that checks every request's AWS signature (from AWS's
// algorithm, not the SDK's signer) and refuses a wrong one with 403 as
// Glue does. The signing keys come from the AWS chain (the environment,
// with a session token); the table's files stay on the server's S3 with
// its own keys. Reads, commits and expiry go through the gate, and the
// table then scans in iceberg-go (straight from the server) to the rows
// it held before. With a wrong secret the same commands fail on one line
// saying what to check, and change nothing.
func TestSigV4REST(t *testing.T) {
	t.Parallel()
	readerBin(t)
	bin := testenv.Icectl(t)
	b := restBackend(t)
	key := testenv.SigV4Key{ID: "ASIAICECTLE2E", Secret: "e2e-sigv4-secret-0123456789", Token: "e2e//session+token="}
	gate := testenv.NewSigV4Gate(t, b.cfg.URI, "eu-west-1", "glue", key)

	// The table is written through the gate too, by icectl's library
	// with the keys as Java's properties.
	signed := b
	signed.cfg.URI = gate.URL
	signed.cfg.Props = map[string]string{
		"rest.sigv4-enabled": "true", "rest.signing-name": "glue", "rest.signing-region": "eu-west-1",
		"rest.access-key-id": key.ID, "rest.secret-access-key": key.Secret, "rest.session-token": key.Token,
	}
	needsToken := testenv.RESTNeedsToken(t, b.cfg.URI)
	for k, v := range b.cfg.Props {
		if k != "credential" || needsToken {
			signed.cfg.Props[k] = v
		}
	}
	cat := signed.open(t)
	const name = "sigv4_orders"
	w := newWriter(t, signed, cat, name, 2)
	for i := range int64(6) {
		d := w.data(t, mkRows("eu", span(i*10, i*10+10)...))
		w.commit(t, []manifest.DataFile{d})
	}
	before := goScanTable(t, b, name, false)
	if before.RowCount != 60 {
		t.Fatalf("iceberg-go reads %d rows, want 60", before.RowCount)
	}

	home := t.TempDir()
	yaml := fmt.Sprintf(`catalog:
  glue:
    type: rest
    uri: %s
    warehouse: %s
    rest.sigv4-enabled: true
    rest.signing-name: glue
    rest.signing-region: eu-west-1
`, gate.URL, b.cfg.Warehouse)
	keys := []string{"s3.endpoint", "s3.access-key-id", "s3.secret-access-key", "s3.path-style-access", "client.region"}
	if needsToken {
		keys = append(keys, "credential")
	}
	for _, k := range keys {
		yaml += fmt.Sprintf("    %s: %s\n", k, b.cfg.Props[k])
	}
	if err := os.WriteFile(filepath.Join(home, ".pyiceberg.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(secret string, args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{
			"HOME=" + home, "PATH=" + os.Getenv("PATH"),
			"AWS_ACCESS_KEY_ID=" + key.ID, "AWS_SECRET_ACCESS_KEY=" + secret, "AWS_SESSION_TOKEN=" + key.Token,
			"AWS_CONFIG_FILE=" + filepath.Join(home, "no-aws-config"),
			"AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "no-aws-credentials"),
			"AWS_EC2_METADATA_DISABLED=true",
		}
		return testenv.Run(t, cmd)
	}
	table := b.ns + "." + name
	load := func() *catalog.Table {
		t.Helper()
		tbl, err := b.open(t).LoadTable(context.Background(), catalog.Ident{Namespace: []string{b.ns}, Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return tbl
	}

	// A wrong secret: every command fails on one line naming what to
	// check, and the table stays as it was.
	start := load().MetadataLocation
	for _, args := range [][]string{
		{"health", "--catalog", "glue", table},
		{"compact", "--catalog", "glue", table, "--min-input-files", "2"},
		{"expire", "--catalog", "glue", table, "--retain-last", "1", "--older-than", "0s"},
	} {
		const wrong = "not-the-secret-000"
		_, stderr, code := run(wrong, args...)
		msg := strings.TrimSpace(stderr)
		if code != 1 || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "403") ||
			!strings.Contains(msg, "signature we calculated does not match") || !strings.Contains(msg, "rest.signing-region") {
			t.Errorf("%s with a wrong secret: exit %d, stderr %q; want exit 1 and one line with the 403 and what to check", args[0], code, msg)
		}
		if strings.Contains(msg, wrong) || strings.Contains(msg, key.Secret) || strings.Contains(msg, key.Token) {
			t.Errorf("%s: stderr shows a secret: %q", args[0], msg)
		}
	}
	if now := load().MetadataLocation; now != start {
		t.Fatalf("refused commands moved the table from %s to %s", start, now)
	}

	// The right keys: reads, a compaction and an expiry, all signed.
	for _, args := range [][]string{
		{"health", "--catalog", "glue", table},
		{"table", "show", "--catalog", "glue", table},
		{"compact", "--catalog", "glue", table, "--min-input-files", "2"},
		{"expire", "--catalog", "glue", table, "--retain-last", "1", "--older-than", "0s"},
		{"snapshots", "--catalog", "glue", table},
	} {
		if stdout, stderr, code := run(key.Secret, args...); code != 0 {
			t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, stdout, stderr)
		}
	}
	after := load()
	if len(after.Metadata.Snapshots) != 1 {
		t.Errorf("%d snapshots after expire --retain-last 1, want 1", len(after.Metadata.Snapshots))
	}
	if op := after.Metadata.CurrentSnapshot().Summary["operation"]; op != "replace" {
		t.Errorf("current snapshot's operation %q, want the compaction's replace", op)
	}
	got := goScanTable(t, b, name, false)
	if got.RowCount != before.RowCount || got.Checksum != before.Checksum {
		t.Errorf("iceberg-go after: %d rows checksum %s, before: %d rows checksum %s", got.RowCount, got.Checksum, before.RowCount, before.Checksum)
	}

	commits, refused := 0, 0
	for _, r := range gate.Log() {
		switch {
		case r.Refusal != "":
			refused++
			if r.KeyID != key.ID || r.Refusal != "InvalidSignatureException" {
				t.Errorf("%s %s refused as %s (key %s): only the wrong secret's requests should be", r.Method, r.Path, r.Refusal, r.KeyID)
			}
		case !r.SignedBody || !r.Token || r.KeyID != key.ID:
			t.Errorf("%s %s forwarded: body signed %v, token %v, key %s", r.Method, r.Path, r.SignedBody, r.Token, r.KeyID)
		case r.Method == "POST" && strings.Contains(r.Path, "/tables/"+name):
			commits++
		}
	}
	if refused != 3 || commits < 8 { // the writer's six, the compaction, the expiry
		t.Errorf("the gate refused %d requests (want 3, one per wrong-secret command) and forwarded %d commits (want at least 8)", refused, commits)
	}
}
