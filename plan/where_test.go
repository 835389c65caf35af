package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/plan/where"
)

func TestWhereSelectsPartitions(t *testing.T) {
	var data []table.FileEntry
	for i := range 5 {
		data = append(data, dataFile(path(i), 0, []any{"a"}, mib, 10, 1))
		data = append(data, dataFile(path(10+i), 0, []any{"b"}, mib, 10, 1))
	}
	o := smallOptions()
	o.Where = "cat = 'b'"
	p := mustPlan(t, testInput(data, nil), o)
	if len(p.Groups) != 1 || p.Groups[0].Partition["cat"] != "b" || p.Totals.SelectedByWhere != 5 {
		t.Fatalf("where cat = 'b': %+v", p.Totals)
	}
}

func TestWhereUnevaluableIsAnError(t *testing.T) {
	data := []table.FileEntry{
		dataFile(path(0), 1, []any{"a", int32(20000)}, mib, 10, 1),
		dataFile(path(1), 0, []any{"a"}, mib, 10, 1),
	}
	o := smallOptions()
	o.Where = "ts >= '2024-10-01'"
	r := resolve(o)
	_, err := New(testInput(data, nil), r, testNow)
	var ue *where.UnevaluableError
	if !errors.As(err, &ue) || ue.SpecID != 0 || ue.Column != "ts" || !strings.Contains(err.Error(), path(1)) {
		t.Fatalf("error = %v, want one naming column ts, spec 0 and the file", err)
	}
	// Only spec 1 files: fine.
	if _, err := New(testInput(data[:1], nil), r, testNow); err != nil {
		t.Fatal(err)
	}
	// A plan parsed back from JSON re-compiles its where expression.
	r.filter = nil
	if _, err := New(testInput(data, nil), r, testNow); !errors.As(err, &ue) {
		t.Fatalf("uncompiled where: %v", err)
	}
}
