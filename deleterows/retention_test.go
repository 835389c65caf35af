package deleterows

import (
	"errors"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/fixture"
)

func TestRetentionWhere(t *testing.T) {
	s := &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}},
		{ID: 2, Name: "event ts", Type: spec.TimestampTzType{}},
		{ID: 3, Name: "day", Type: spec.DateType{}},
		{ID: 4, Name: "tsn", Type: spec.TimestampNsType{}},
		{ID: 5, Name: "name", Type: spec.StringType{}},
	}}
	now := time.Date(2024, 5, 1, 12, 30, 0, 0, time.UTC)
	for col, want := range map[string]string{
		"event ts": `"event ts" < TIMESTAMP '2024-01-31 12:30:00'`,
		"day":      `"day" < DATE '2024-01-31'`,
		"tsn":      `"tsn" < TIMESTAMP '2024-01-31 12:30:00'`,
	} {
		got, err := RetentionWhere(s, col, 91*24*time.Hour, now)
		if err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", col, got, err, want)
		}
	}
	for _, c := range []struct {
		col  string
		keep time.Duration
	}{{"id", time.Hour}, {"name", time.Hour}, {"nope", time.Hour}, {"day", 0}, {"day", -time.Hour}} {
		if _, err := RetentionWhere(s, c.col, c.keep, now); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%s keep %s: %v, want a refusal", c.col, c.keep, err)
		}
	}
}

// TestRetentionRun: a retention cutoff deletes the rows older than it
// and keeps nulls and newer rows.
func TestRetentionRun(t *testing.T) {
	e := newEnv(t, fixture.TableOptions{Props: map[string]string{"write.delete.mode": "merge-on-read"}, FormatVersion: 3})
	e.write(t, "old", []any{}, rowsOf(1, 4, "a", at("2024-01-01 00:00"))...)
	e.write(t, "mixed", []any{}, rowsOf(5, 9, "b", func(id int64) *int64 {
		switch id {
		case 5:
			return nil
		case 6, 7:
			return ts("2024-01-15 00:00")
		}
		return ts("2024-04-30 00:00")
	})...)
	w, err := RetentionWhere(e.Load(t).Metadata.CurrentSchema(), "ts", 90*24*time.Hour, time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	_, rep, err := e.run(t, w)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Deleted != 6 || rep.FilesRemoved != 1 || rep.RowsAfter != 3 {
		t.Errorf("report %+v", rep)
	}
	e.forget(1, 2, 3, 4, 6, 7)
	e.checkModel(t)
}
