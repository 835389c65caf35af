package maintain

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/metastore"
)

const samplePolicy = `# a policy
defaults:
  expire:
    max-snapshot-age: 7d
  orphan:
    older-than: 4d
namespaces:
  raw:
    compact:
      enabled: false
  raw.eu:
    compact:
      enabled: true
      min-input-files: 3
tables:
  "raw.eu.big_*":
    compact:
      target-file-size: 1GiB
  raw.eu.big_orders:
    expire:
      min-snapshots-to-keep: 10
      clean-expired-metadata: true
    orphan:
      enabled: true
`

func ident(s string) metastore.Ident {
	id, err := metastore.ParseIdent(s)
	if err != nil {
		panic(err)
	}
	return id
}

func TestPolicyPrecedence(t *testing.T) {
	p, err := ParsePolicy("p.yaml", []byte(samplePolicy))
	if err != nil {
		t.Fatal(err)
	}
	// No policy, no properties: the built-in defaults.
	r, err := (&Policy{}).Resolve(ident("a.t"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.MaxSnapshotAge != 5*24*time.Hour || r.MinSnapshotsToKeep != 1 || r.Enabled[VerbOrphan] || !r.Enabled[VerbCompact] || r.CleanExpiredMetadata ||
		r.TargetFileSize != 512<<20 || r.OrphanOlderThan != 3*24*time.Hour {
		t.Errorf("built-in defaults: %+v", r)
	}

	// The file's defaults; a table property above them.
	r, _ = p.Resolve(ident("a.t"), nil)
	if r.MaxSnapshotAge != 7*24*time.Hour || r.OrphanOlderThan != 4*24*time.Hour {
		t.Errorf("file defaults: %v %v", r.MaxSnapshotAge, r.OrphanOlderThan)
	}
	r, _ = p.Resolve(ident("a.t"), map[string]string{PropMaxSnapshotAgeMS: "3600000", PropTargetFileSize: "1000"})
	if r.MaxSnapshotAge != time.Hour || r.TargetFileSize != 1000 || r.Sources["expire.max-snapshot-age"] != "table property "+PropMaxSnapshotAgeMS {
		t.Errorf("table property over file defaults: %v %d %v", r.MaxSnapshotAge, r.TargetFileSize, r.Sources)
	}

	// Namespaces: deeper above shallower; table patterns above both and
	// above table properties; flags above everything.
	if r, _ := p.Resolve(ident("raw.t"), nil); r.Enabled[VerbCompact] || !strings.Contains(r.Off[VerbCompact], "raw") {
		t.Errorf("raw.t: compaction %v (%s)", r.Enabled[VerbCompact], r.Off[VerbCompact])
	}
	r, _ = p.Resolve(ident("raw.eu.big_orders"), map[string]string{PropTargetFileSize: "1000", PropMinSnapshotsToKeep: "2"})
	if !r.Enabled[VerbCompact] || r.MinInputFiles != 3 || r.TargetFileSize != 1<<30 || r.MinSnapshotsToKeep != 10 || !r.Enabled[VerbOrphan] || !r.CleanExpiredMetadata {
		t.Errorf("raw.eu.big_orders: %+v", r)
	}
	off := false
	p.Flags.Compact.Enabled = &off
	if r, _ := p.Resolve(ident("raw.eu.big_orders"), nil); r.Enabled[VerbCompact] || r.Off[VerbCompact] != "off by flag" {
		t.Errorf("flag: %v %q", r.Enabled[VerbCompact], r.Off[VerbCompact])
	}

	// gc.enabled=false wins over everything.
	on := true
	p.Flags.Expire.Enabled = &on
	r, _ = p.Resolve(ident("raw.eu.big_orders"), map[string]string{PropGCEnabled: "false"})
	if r.Enabled[VerbExpire] || r.Enabled[VerbOrphan] || r.Off[VerbExpire] != "gc.enabled=false" {
		t.Errorf("gc.enabled=false: %+v", r)
	}
	if _, err := p.Resolve(ident("a.t"), map[string]string{PropMinSnapshotsToKeep: "many"}); err == nil ||
		!strings.Contains(err.Error(), PropMinSnapshotsToKeep) {
		t.Errorf("malformed property: %v", err)
	}
}

// TestPolicyPositionDeletes: rewrite-position-deletes' settings, with
// write.delete.target-file-size-bytes as their table property layer.
func TestPolicyPositionDeletes(t *testing.T) {
	r, err := (&Policy{}).Resolve(ident("a.t"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Enabled[VerbRewritePositionDeletes] || r.DeleteTargetSize != 64<<20 || r.PosDeleteMinFiles != 5 {
		t.Errorf("built-in defaults: %v %d %d", r.Enabled[VerbRewritePositionDeletes], r.DeleteTargetSize, r.PosDeleteMinFiles)
	}
	p, err := ParsePolicy("p.yaml", []byte(`defaults:
  rewrite-position-deletes:
    target-size: 8MiB
    min-input-files: 3
tables:
  "db.off":
    rewrite-position-deletes:
      enabled: false
  "db.big":
    rewrite-position-deletes:
      target-size: 128MiB
`))
	if err != nil {
		t.Fatal(err)
	}
	r, _ = p.Resolve(ident("db.t"), nil)
	if r.DeleteTargetSize != 8<<20 || r.PosDeleteMinFiles != 3 {
		t.Errorf("file defaults: %d %d", r.DeleteTargetSize, r.PosDeleteMinFiles)
	}
	r, _ = p.Resolve(ident("db.t"), map[string]string{PropDeleteTargetSize: "1000"})
	if r.DeleteTargetSize != 1000 || r.Sources["rewrite-position-deletes.target-size"] != "table property "+PropDeleteTargetSize {
		t.Errorf("table property over file defaults: %d %v", r.DeleteTargetSize, r.Sources)
	}
	if r, _ = p.Resolve(ident("db.big"), map[string]string{PropDeleteTargetSize: "1000"}); r.DeleteTargetSize != 128<<20 {
		t.Errorf("table pattern over table property: %d", r.DeleteTargetSize)
	}
	if r, _ = p.Resolve(ident("db.off"), nil); r.Enabled[VerbRewritePositionDeletes] || !strings.Contains(r.Off[VerbRewritePositionDeletes], "db.off") {
		t.Errorf("db.off: %v %q", r.Enabled[VerbRewritePositionDeletes], r.Off[VerbRewritePositionDeletes])
	}
	// gc.enabled=false does not stop a rewrite: it deletes no file.
	if r, _ = p.Resolve(ident("db.t"), map[string]string{PropGCEnabled: "false"}); !r.Enabled[VerbRewritePositionDeletes] {
		t.Error("gc.enabled=false turned rewrite-position-deletes off")
	}
	if _, err := p.Resolve(ident("db.t"), map[string]string{PropDeleteTargetSize: "big"}); err == nil ||
		!strings.Contains(err.Error(), PropDeleteTargetSize) {
		t.Errorf("malformed property: %v", err)
	}
	if _, err := ParsePolicy("p.yaml", []byte("defaults:\n  rewrite-position-deletes:\n    min-input-files: 0\n")); err == nil ||
		!strings.Contains(err.Error(), "p.yaml:3: ") {
		t.Errorf("min-input-files 0: %v", err)
	}
}

func TestPolicyErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"defaults:\n  compact:\n    enabled: yes please\n", "p.yaml:3: "},
		{"defaults:\n  compact:\n    target: 1\n", `p.yaml:3: unknown key "target"`},
		{"defaults:\n  vacuum: {}\n", `p.yaml:2: unknown key "vacuum"`},
		{"tables:\n  \"[x\":\n    expire: {enabled: false}\n", "p.yaml:2: table pattern"},
		{"defaults:\n  expire:\n    max-snapshot-age: soon\n", "p.yaml:3: "},
		{"defaults:\n  orphan:\n    older-than: 1h\n", "p.yaml:3: \"1h\": want a duration of at least 1d"},
		{"defaults:\n  compact:\n    delete-ratio: 2\n", "p.yaml:3: "},
		{"defaults:\n  compact: {}\n  compact: {}\n", `p.yaml:3: key "compact" given twice`},
		{"- a\n- b\n", "p.yaml:1: "},
		{"defaults:\n  compact:\n  enabled: [\n", "p.yaml: "},
	} {
		_, err := ParsePolicy("p.yaml", []byte(c.doc))
		if err == nil || !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line containing %q", c.doc, err, c.want)
		}
	}
	if p, err := ParsePolicy("empty.yaml", []byte("# nothing\n")); err != nil || p == nil {
		t.Errorf("empty policy: %v", err)
	}
}
