// Package kubernetes holds the Kubernetes manifests of a sharded
// compaction (README.md) and the test that decodes each with the
// Kubernetes API types. It is a module of its own so that k8s.io stays out
// of icectl's go.mod; scripts/test runs it.
package kubernetes

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// decodeStrict decodes one YAML document into v, failing on a field the
// type does not have (a misspelt or misplaced key the API server would
// reject or, worse, drop).
func decodeStrict(doc []byte, v any) error {
	return yaml.UnmarshalStrict(doc, v)
}

// documents splits a multi-document YAML file.
func documents(data []byte) [][]byte {
	var out [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
		if strings.TrimSpace(stripComments(d)) != "" {
			out = append(out, []byte(d))
		}
	}
	return out
}

func stripComments(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// object decodes doc by its apiVersion and kind into the matching type.
func object(doc []byte) (any, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return nil, err
	}
	var v any
	switch head.APIVersion + "/" + head.Kind {
	case "batch/v1/Job":
		v = &batchv1.Job{}
	case "v1/ConfigMap":
		v = &corev1.ConfigMap{}
	case "v1/Secret":
		v = &corev1.Secret{}
	default:
		return nil, fmt.Errorf("unexpected apiVersion %q kind %q", head.APIVersion, head.Kind)
	}
	if err := decodeStrict(doc, v); err != nil {
		return nil, err
	}
	return v, nil
}

// loadAll decodes every manifest of the directory.
func loadAll(t *testing.T) map[string][]any {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	out := map[string][]any{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range documents(data) {
			v, err := object(doc)
			if err != nil {
				t.Errorf("%s, document %d: %v", f, i+1, err)
				continue
			}
			out[f] = append(out[f], v)
		}
	}
	return out
}

func jobs(all map[string][]any) map[string]*batchv1.Job {
	out := map[string]*batchv1.Job{}
	for _, objs := range all {
		for _, o := range objs {
			if j, ok := o.(*batchv1.Job); ok {
				out[j.Name] = j
			}
		}
	}
	return out
}

// TestManifestsDecode decodes every manifest strictly and checks what the
// sharded run depends on: the three Jobs, an Indexed worker Job whose
// completions match --shard, every container reading the catalog's
// ConfigMap and Secret, and every $(VAR) an argument uses defined there.
func TestManifestsDecode(t *testing.T) {
	all := loadAll(t)
	js := jobs(all)
	for _, name := range []string{"icectl-compact-plan", "icectl-compact-workers", "icectl-compact-commit"} {
		if js[name] == nil {
			t.Errorf("no Job %s", name)
		}
	}
	defined := map[string]bool{}
	refs := map[string]bool{}
	for _, objs := range all {
		for _, o := range objs {
			switch v := o.(type) {
			case *corev1.ConfigMap:
				refs["configmap/"+v.Name] = true
				for k := range v.Data {
					defined[k] = true
				}
			case *corev1.Secret:
				refs["secret/"+v.Name] = true
				for k := range v.StringData {
					defined[k] = true
				}
			}
		}
	}
	varRef := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	for name, j := range js {
		spec := j.Spec.Template.Spec
		if spec.RestartPolicy != corev1.RestartPolicyNever && spec.RestartPolicy != corev1.RestartPolicyOnFailure {
			t.Errorf("%s: restartPolicy %q: a Job's pods need Never or OnFailure", name, spec.RestartPolicy)
		}
		for _, c := range spec.Containers {
			if len(c.Args) == 0 || c.Args[0] != "compact" {
				t.Errorf("%s: container %s does not run icectl compact: %v", name, c.Name, c.Args)
			}
			for _, e := range c.EnvFrom {
				switch {
				case e.ConfigMapRef != nil && !refs["configmap/"+e.ConfigMapRef.Name]:
					t.Errorf("%s: ConfigMap %s is not among the manifests", name, e.ConfigMapRef.Name)
				case e.SecretRef != nil && !refs["secret/"+e.SecretRef.Name]:
					t.Errorf("%s: Secret %s is not among the manifests", name, e.SecretRef.Name)
				}
			}
			for _, a := range c.Args {
				for _, m := range varRef.FindAllStringSubmatch(a, -1) {
					if !defined[m[1]] {
						t.Errorf("%s: argument %q uses $(%s), which no ConfigMap or Secret defines", name, a, m[1])
					}
				}
			}
			if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
				t.Errorf("%s: container %s has no memory request or limit", name, c.Name)
			}
		}
	}
	w := js["icectl-compact-workers"]
	if w == nil {
		return
	}
	if w.Spec.CompletionMode == nil || *w.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("the worker Job is not Indexed: JOB_COMPLETION_INDEX would not be set")
	}
	args := w.Spec.Template.Spec.Containers[0].Args
	shard := ""
	for i, a := range args {
		if a == "--shard" && i+1 < len(args) {
			shard = args[i+1]
		}
	}
	if w.Spec.Completions == nil || fmt.Sprint(*w.Spec.Completions) != shard {
		t.Errorf("the worker Job has %v completions but runs --shard %q: they must be equal", w.Spec.Completions, shard)
	}
}

// TestStrictDecodingRefuses shows the decoding catches what it is for: a
// misspelt field and a wrong kind.
func TestStrictDecodingRefuses(t *testing.T) {
	data, err := os.ReadFile("workers-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(data, []byte("completionMode:"), []byte("completionMod:"), 1)
	if _, err := object(documents(bad)[0]); err == nil {
		t.Error("a misspelt field decoded without error")
	}
	bad = bytes.Replace(data, []byte("kind: Job"), []byte("kind: Jobs"), 1)
	if _, err := object(documents(bad)[0]); err == nil {
		t.Error("a wrong kind decoded without error")
	}
	bad = bytes.Replace(data, []byte("parallelism: 4"), []byte("parallelism: four"), 1)
	if _, err := object(documents(bad)[0]); err == nil {
		t.Error("a string for an integer field decoded without error")
	}
}
