package maintain

import (
	"strings"
	"testing"

	"github.com/icectl/icectl/health"
)

// TestPolicyOutputSpec: compact.output-spec is off unless set; with
// "current" a table with data in older specs is due for compaction, which
// maintain runs with --output-spec current; without it the same table is
// not (health still reports it).
func TestPolicyOutputSpec(t *testing.T) {
	p, err := ParsePolicy("p.yaml", []byte(`tables:
  "db.moved":
    compact:
      output-spec: current
  "db.kept":
    compact:
      output-spec: none
`))
	if err != nil {
		t.Fatal(err)
	}
	oldData := func(st *TableState) {
		st.Health.OtherSpecData = health.SpecData{Files: 3, Bytes: 3 << 20}
	}
	for _, c := range []struct {
		table, wantSpec, wantDue string
	}{{"db.moved", "current", "compact"}, {"db.kept", "", ""}, {"db.other", "", ""}} {
		r, err := p.Resolve(ident(c.table), nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.OutputSpec != c.wantSpec {
			t.Errorf("%s: output spec %q, want %q", c.table, r.OutputSpec, c.wantSpec)
		}
		st := state(t, c.table, 2, nil, oldData)
		st.Policy = r
		tp := planTable(&st)
		if got := dueVerbs(tp); got != c.wantDue {
			t.Errorf("%s: due %q, want %q", c.table, got, c.wantDue)
		}
		if c.wantDue != "" {
			if !strings.Contains(tp.Due[0].Reason, "3 data files") {
				t.Errorf("%s: reason %q", c.table, tp.Due[0].Reason)
			}
			r := &runner{}
			if o := r.compactOptions(tp); o.Plan.OutputSpec != "current" {
				t.Errorf("%s: compact runs with output spec %q", c.table, o.Plan.OutputSpec)
			}
		}
	}
	if _, err := ParsePolicy("p.yaml", []byte("defaults:\n  compact:\n    output-spec: 3\n")); err == nil || !strings.Contains(err.Error(), "p.yaml:3: ") {
		t.Errorf("output-spec 3: %v", err)
	}
}
