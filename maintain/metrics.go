package maintain

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// WriteMetrics writes the run's figures to path in the Prometheus text
// exposition format, for node_exporter's textfile collector: to a
// temporary file beside it, synced, then renamed over it, so a scrape
// never reads half a file.
func WriteMetrics(path string, r *Report) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write metrics: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriter(tmp)
	if err = writeMetrics(w, r); err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if err == nil {
		err = tmp.Close()
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write metrics %s: %w", path, err)
	}
	return nil
}

// metric is one family: its help, and its samples as written.
type metric struct {
	name, help string
	samples    []string
}

func (m *metric) add(labels string, v float64) {
	m.samples = append(m.samples, fmt.Sprintf("%s%s %v", m.name, labels, v))
}

// labels renders name="value" pairs, escaped as the format asks.
func labels(kv ...string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		v := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(kv[i+1])
		fmt.Fprintf(&b, `%s="%s"`, kv[i], v)
	}
	b.WriteByte('}')
	return b.String()
}

func writeMetrics(w io.Writer, r *Report) error {
	newMetric := func(name, help string) *metric { return &metric{name: "icectl_maintain_" + name, help: help} }
	start := newMetric("run_start_timestamp_seconds", "When the run started.")
	dur := newMetric("run_duration_seconds", "How long the run took.")
	complete := newMetric("run_complete", "1 when the run left no work for the next one, else 0.")
	budget := newMetric("run_stopped_by_budget", "1 when a budget (max-duration or max-rewrite-bytes) left work for the next run.")
	tables := newMetric("run_tables", "Tables by status at the end of the run.")
	due := newMetric("table_verbs_due", "Verbs due on the table when the run planned it.")
	tstatus := newMetric("table_status", "1 for the table's status at the end of the run.")
	tdur := newMetric("table_duration_seconds", "How long the table's maintenance took.")
	fb := newMetric("verb_files_before", "Files the verb read to replace or deleted.")
	fa := newMetric("verb_files_after", "Files the verb wrote in their place.")
	bb := newMetric("verb_bytes_before", "Bytes of the files the verb read to replace or deleted.")
	ba := newMetric("verb_bytes_after", "Bytes of the files the verb wrote.")
	vdur := newMetric("verb_duration_seconds", "How long the verb ran.")
	fails := newMetric("verb_failures", "1 when the verb failed in this run, else 0.")
	success := newMetric("verb_last_success_timestamp_seconds", "When the verb last finished on the table without failing, in this run.")

	start.add("", float64(r.StartedMS)/1000)
	dur.add("", float64(r.DurationMS)/1000)
	complete.add("", boolFloat(r.Complete()))
	budget.add("", boolFloat(r.Summary.StoppedByBudget != ""))
	s := r.Summary
	for _, c := range []struct {
		status string
		n      int
	}{{StatusDone, s.Done}, {StatusPartial, s.Partial}, {StatusFailed, s.Failed}, {StatusSkipped, s.Skipped},
		{StatusNotStarted, s.NotStarted}, {StatusNothingDue, s.NothingDue}} {
		tables.add(labels("status", c.status), float64(c.n))
	}
	for _, t := range r.Tables {
		tl := labels("table", t.Table)
		due.add(tl, float64(len(t.Due)))
		tstatus.add(labels("table", t.Table, "status", t.Status), 1)
		tdur.add(tl, float64(t.DurationMS)/1000)
		for _, v := range t.Verbs {
			vl := labels("table", t.Table, "verb", v.Verb)
			fb.add(vl, float64(v.FilesIn))
			fa.add(vl, float64(v.FilesOut))
			bb.add(vl, float64(v.BytesIn))
			ba.add(vl, float64(v.BytesOut))
			vdur.add(vl, float64(v.DurationMS)/1000)
			fails.add(vl, boolFloat(v.Status == StatusFailed))
			if v.SucceededMS > 0 {
				success.add(vl, float64(v.SucceededMS)/1000)
			}
		}
	}
	for _, m := range []*metric{start, dur, complete, budget, tables, due, tstatus, tdur, fb, fa, bb, ba, vdur, fails, success} {
		if len(m.samples) == 0 {
			continue
		}
		if _, err := fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n%s\n", m.name, m.help, m.name, strings.Join(m.samples, "\n")); err != nil {
			return err
		}
	}
	return nil
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
