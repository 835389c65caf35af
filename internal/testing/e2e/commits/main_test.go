package commits

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/internal/testing/testenv"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Finish(m.Run()))
}

// result is what one icectl process printed and how it exited.
type result struct {
	args           []string
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("icectl %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// baseEnv is the environment of an icectl process: nothing of the
// developer's own (no ~/.icectl.yaml, no AWS or PYICEBERG variables).
func baseEnv(t *testing.T, extra ...string) []string {
	return append([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, extra...)
}

// icectl runs the binary and checks the output contract of a failure: one
// "icectl: " line on stderr.
func icectl(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, testenv.Icectl(t), args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, &out, &errOut
	err := cmd.Run()
	r := result{args: args, stdout: out.String(), stderr: errOut.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("run icectl: %v", err)
	}
	if r.code != 0 && (!strings.HasPrefix(r.stderr, "icectl: ") || strings.Count(r.stderr, "\n") != 1) {
		t.Errorf("%s\nstderr is not one \"icectl: \" line", r)
	}
	return r
}

// propsOutput is the part of `table set-properties -o json` the tests read.
type propsOutput struct {
	Committed                bool              `json:"committed"`
	MetadataLocation         string            `json:"metadata_location"`
	PreviousMetadataLocation *string           `json:"previous_metadata_location"`
	Properties               map[string]string `json:"properties"`
}

func decodeProps(t *testing.T, r result) propsOutput {
	t.Helper()
	var out propsOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("%s\nstdout is not the JSON result: %v", r, err)
	}
	return out
}

// uniqueName returns a name no other test run uses, for catalog names and
// namespaces on shared servers.
func uniqueName(t *testing.T, prefix string) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b)
}
