package e2e

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/icectl/icectl/verify"
)

// verifyDeletesCLI runs `icectl verify deletes` on b's table.
func verifyDeletesCLI(t *testing.T, b backend, name string, extra ...string) (int, string) {
	t.Helper()
	out, errOut, code := runICECTLOn(t, b, append([]string{"verify", "deletes", b.ns + "." + name}, extra...)...)
	if code != 0 && strings.Count(errOut, "\n") != 1 {
		t.Errorf("verify deletes: stderr is not one line: %q", errOut)
	}
	return code, out
}

func TestVerifyDeletes(t *testing.T) {
	t.Parallel()
	readerBin(t)
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, x *v2Table)
		kind   string
		text   string
		files  bool
	}{
		{name: "clean", files: true},
		{name: "incomplete_dv", kind: verify.ResurrectedRows, text: "lacks 2 position(s)", damage: func(t *testing.T, x *v2Table) {
			// What iceberg-go v0.7.0 writes after an upgrade: a DV that
			// leaves out the file's v2 position deletes (ids 1 and 3).
			x.w.commit(t, nil, x.w.dv(t, x.eu1, 5))
		}},
		{name: "duplicate_dv", kind: verify.DuplicateDV, text: "has 2 DVs", damage: func(t *testing.T, x *v2Table) {
			x.w.commit(t, nil, x.w.dv(t, x.us2, 1))
			x.w.commit(t, nil, x.w.dv(t, x.us2, 1, 2))
		}},
		{name: "cardinality", kind: verify.DVCardinality, text: "2 positions, expected 3", damage: func(t *testing.T, x *v2Table) {
			dv := x.w.dv(t, x.us2, 1, 2)
			dv.RecordCount = 3
			x.w.commit(t, nil, dv)
		}},
		{name: "other_partition", kind: verify.DanglingDV, text: "is in another partition", damage: func(t *testing.T, x *v2Table) {
			dv := x.w.dv(t, x.us2, 1)
			dv.Partition = []any{"eu"}
			x.w.commit(t, nil, dv)
		}},
		{name: "missing_file", kind: verify.MissingFile, text: "does not exist", files: true, damage: func(t *testing.T, x *v2Table) {
			// Storage lost a data file (simulated below icectl).
			if err := os.Remove(strings.TrimPrefix(x.us2.FilePath, "file://")); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := sqliteBackend(t)
			cat := b.open(t)
			x := upgradedTable(t, b, cat, "del")
			if c.damage != nil {
				c.damage(t, x)
			}
			tbl := loadIdent(t, cat, b.ns, "del")
			r, err := verify.Deletes(ctx, tbl.IO, tbl.Metadata, tbl.Metadata.CurrentSnapshot(), verify.DeletesOptions{CheckFiles: c.files})
			if err != nil {
				t.Fatal(err)
			}
			var extra []string
			if c.files {
				extra = []string{"--check-files"}
			}
			code, out := verifyDeletesCLI(t, b, "del", extra...)
			if c.kind == "" {
				if !r.OK() || code != 0 || r.FilesChecked == 0 {
					t.Errorf("clean table: exit %d, %+v\n%s", code, r, out)
				}
				return
			}
			if r.OK() || kinds(r.First)[c.kind] == 0 || !strings.Contains(r.First[0].Message, c.text) {
				t.Errorf("want a %s violation saying %q first, got %+v", c.kind, c.text, r.First)
			}
			if code != 1 || !strings.Contains(out, c.kind) {
				t.Errorf("icectl verify deletes: exit %d\n%s", code, out)
			}
		})
	}
}

// The incomplete DV brings rows back for every reader: iceberg-go reads
// the ids the v2 position deletes removed.
func TestIncompleteDVResurrectsRowsInIcebergGo(t *testing.T) {
	t.Parallel()
	readerBin(t)
	b := sqliteBackend(t)
	cat := b.open(t)
	x := upgradedTable(t, b, cat, "res")
	x.w.commit(t, nil, x.w.dv(t, x.eu1, 5))
	g := goScanTable(t, b, "res", false)
	ids := map[int64]bool{}
	for _, l := range decodeRows(t, g.Rows) {
		ids[l.id] = true
	}
	if !ids[1] || !ids[3] || ids[5] {
		t.Errorf("iceberg-go reads ids 1: %v, 3: %v, 5: %v; want the resurrected 1 and 3, not 5", ids[1], ids[3], ids[5])
	}
}
