package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	promodel "github.com/prometheus/common/model"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/claim"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/metastore"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/testenv"
	"github.com/icectl/icectl/maintain"
	"github.com/icectl/icectl/upgrade"
)

// A fleet of tables in every state maintain meets, built straight through
// the library (small files, a few rows each): maintain brings every table
// with work due to health, leaves the healthy ones alone, and no reader
// sees a row change.

// fleetTable is one table of the fleet and what maintain must do to it.
type fleetTable struct {
	name string
	kind string
	v    int
	// due is whether maintain has work on it.
	due bool
}

// Kinds of fleet tables.
const (
	kindHealthy   = "healthy"   // one data file: nothing due
	kindSmall     = "small"     // six small files in a partition: compact
	kindPosDel    = "posdel"    // six small position-delete files: rewrite-position-deletes on v2, dv merge on v3
	kindOld       = "old"       // snapshots past history.expire.max-snapshot-age-ms: expire
	kindManifests = "manifests" // eleven small manifests: rewrite-manifests
	kindNoGC      = "nogc"      // small files and old snapshots, gc.enabled=false: compact only
	kindNoCompact = "nocompact" // small files, compaction off by policy: nothing due
)

// batchDefaults is the defaults section of the tests' policies: the
// fleet's tables are written in a burst of commits a second before
// maintain runs, so the streaming policy (a table with
// stream.commits-per-hour writer commits in the last hour) would take
// them for streamed tables and hold their rewrites; these tests are about
// the verbs' own rules (maintain/stream_test.go and the Flink test cover
// the streaming policy).
const batchDefaults = `defaults:
  stream:
    enabled: false
`

// batchPolicy is batchDefaults alone.
func batchPolicy(t *testing.T) *maintain.Policy {
	t.Helper()
	pol, err := maintain.ParsePolicy("policy.yaml", []byte(batchDefaults))
	if err != nil {
		t.Fatal(err)
	}
	return pol
}

// fleetPolicy turns compaction off for the nocompact table.
const fleetPolicy = batchDefaults + `tables:
  "*.nocompact_*":
    compact:
      enabled: false
`

// fleetMix is how many tables of each kind a fleet of 50 has.
var fleetMix = []struct {
	kind string
	n    int
}{{kindHealthy, 14}, {kindSmall, 12}, {kindPosDel, 10}, {kindOld, 8}, {kindManifests, 4}, {kindNoGC, 1}, {kindNoCompact, 1}}

// buildFleet creates the tables of mix (scaled so that it has about n
// tables) in namespace b.ns: format versions and partitioning alternate.
func buildFleet(t *testing.T, b backend, cat catalog.Catalog, n int) []fleetTable {
	t.Helper()
	ctx := context.Background()
	if err := cat.CreateNamespace(ctx, []string{b.ns}, nil); err != nil {
		t.Fatalf("create namespace %s: %v", b.ns, err)
	}
	var out []fleetTable
	i := 0
	for _, m := range fleetMix {
		count := max(1, m.n*n/50)
		for j := range count {
			v := 2 + i%2
			parted := j%3 != 2 || m.kind == kindManifests
			ft := fleetTable{name: fmt.Sprintf("%s_%02d", m.kind, j), kind: m.kind, v: v, due: m.kind != kindHealthy && m.kind != kindNoCompact}
			buildFleetTable(t, b, cat, ft, parted)
			out = append(out, ft)
			i++
		}
	}
	return out
}

func buildFleetTable(t *testing.T, b backend, cat catalog.Catalog, ft fleetTable, parted bool) {
	t.Helper()
	props := map[string]string{"write.delete.mode": "merge-on-read"}
	switch ft.kind {
	case kindOld, kindNoGC:
		// Every snapshot but the current one is past retention at once.
		props[maintain.PropMaxSnapshotAgeMS] = "1"
	}
	if ft.kind == kindNoGC {
		props[maintain.PropGCEnabled] = "false"
	}
	v := ft.v
	if ft.kind == kindPosDel {
		v = 2 // v3 tables with position deletes are upgraded from v2
	}
	w := newFleetWriter(t, b, cat, ft.name, v, parted, props)
	part := func(region string) []any {
		if parted {
			return []any{region}
		}
		return nil
	}
	data := func(region string, ids ...int64) manifest.DataFile {
		return w.dataIn(t, part(region), mkRows(region, ids...))
	}
	switch ft.kind {
	case kindHealthy:
		w.commit(t, []manifest.DataFile{data("eu", span(0, 20)...)})
	case kindSmall, kindNoGC, kindNoCompact:
		for k := range int64(6) {
			w.commit(t, []manifest.DataFile{data("eu", span(k*4, k*4+4)...)})
		}
	case kindPosDel:
		d1, d2 := data("eu", span(0, 20)...), data("eu", span(20, 35)...)
		w.commit(t, []manifest.DataFile{d1, d2})
		// One row deleted at a time, as a streaming writer's deletes land.
		for k := range int64(6) {
			target := d1.FilePath
			if k%2 == 1 {
				target = d2.FilePath
			}
			w.commit(t, nil, w.positionDeletes(t, part("eu"), map[string][]int64{target: {k}}))
		}
		if ft.v == 3 {
			if _, err := upgrade.Run(context.Background(), cat, w.tbl, upgrade.Options{To: 3, AssignRowIDs: true, Commit: noWait()}); err != nil {
				t.Fatalf("upgrade %s: %v", ft.name, err)
			}
		}
	case kindOld:
		for k := range int64(3) {
			w.commit(t, []manifest.DataFile{data("eu", span(k*4, k*4+4)...)})
		}
	case kindManifests:
		for k := range int64(11) {
			w.commit(t, []manifest.DataFile{data(fmt.Sprintf("r%02d", k), k)})
		}
	}
}

// newFleetWriter creates table b.ns.name in an existing namespace.
func newFleetWriter(t *testing.T, b backend, cat catalog.Catalog, name string, v int, parted bool, props map[string]string) *writer {
	t.Helper()
	ctx := context.Background()
	id := catalog.Ident{Namespace: []string{b.ns}, Name: name}
	loc, err := cat.(catalog.LocationProvider).DefaultLocation(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	ps := spec.PartitionSpec{ID: 0}
	if parted {
		ps.Fields = []spec.PartitionField{{SourceID: 5, FieldID: 1000, Name: "region", Transform: spec.Transform{Kind: spec.TransformIdentity}}}
	}
	md, err := spec.NewTableMetadata(tableSchema(), ps, spec.SortOrder{OrderID: 0}, loc, props, v)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, id, md)
	if err != nil {
		t.Fatalf("create table %s: %v", id, err)
	}
	return &writer{ctx: ctx, cat: cat, tbl: tbl, opts: noWait()}
}

// fleetSnapshot is what the test compares before and after a run: each
// table's metadata location and its rows as iceberg-go reads them.
type fleetSnapshot map[string]struct {
	metadata string
	head     int64 // main's head snapshot: claims commit metadata, never a snapshot
	rows     int64
	checksum string
}

func snapFleet(t *testing.T, b backend, cat catalog.Catalog, fleet []fleetTable) fleetSnapshot {
	t.Helper()
	out := fleetSnapshot{}
	for _, ft := range fleet {
		tbl := loadIdent(t, cat, b.ns, ft.name)
		g := goScanTable(t, b, ft.name, false)
		var head int64
		if sn := tbl.Metadata.CurrentSnapshot(); sn != nil {
			head = sn.SnapshotID
		}
		out[ft.name] = struct {
			metadata string
			head     int64 // main's head snapshot: claims commit metadata, never a snapshot
			rows     int64
			checksum string
		}{tbl.MetadataLocation, head, g.RowCount, g.Checksum}
	}
	return out
}

// checkFleetAfter compares the fleet after maintenance with before: the
// same rows everywhere, healthy tables untouched, due tables committed to.
func checkFleetAfter(t *testing.T, fleet []fleetTable, before, after fleetSnapshot) {
	t.Helper()
	for _, ft := range fleet {
		b, a := before[ft.name], after[ft.name]
		if a.rows != b.rows || a.checksum != b.checksum {
			t.Errorf("%s (%s, v%d): iceberg-go reads %d rows %s after maintain, %d rows %s before", ft.name, ft.kind, ft.v, a.rows, a.checksum, b.rows, b.checksum)
		}
		switch {
		case !ft.due && a.metadata != b.metadata:
			t.Errorf("%s (%s): nothing was due, but its metadata moved from %s to %s", ft.name, ft.kind, b.metadata, a.metadata)
		case ft.due && a.metadata == b.metadata:
			t.Errorf("%s (%s): work was due, but nothing was committed", ft.name, ft.kind)
		}
	}
}

// planFleet plans maintenance of the catalog as maintain would.
func planFleet(t *testing.T, cat catalog.Catalog, pol *maintain.Policy, selectors ...string) *maintain.Plan {
	t.Helper()
	ctx := context.Background()
	ids, err := maintain.ListTables(ctx, cat, selectors)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	return maintain.NewPlan(maintain.ReadStates(ctx, cat, ids, pol, now, 4), now)
}

// checkNothingDue fails for every table the plan still has work for.
func checkNothingDue(t *testing.T, p *maintain.Plan) {
	t.Helper()
	for _, tp := range p.Due {
		t.Errorf("%s still has work due after maintain: %+v", tp.Table, tp.Due)
	}
	for _, f := range p.Failed {
		t.Errorf("%s cannot be read: %s", f.Table, f.Error)
	}
}

// catalogState is every byte of a SQLite backend's fleet: the database
// files and every file under each table's location.
func catalogState(t *testing.T, b backend, cat catalog.Catalog, fleet []fleetTable) string {
	t.Helper()
	var s strings.Builder
	s.WriteString(sqliteDB(t, b))
	for _, ft := range fleet {
		s.WriteString(tableFiles(t, cat, catalog.Ident{Namespace: []string{b.ns}, Name: ft.name}))
	}
	return s.String()
}

// writeFleetPolicy writes fleetPolicy to a file and returns its name.
func writeFleetPolicy(t *testing.T) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(name, []byte(fleetPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// maintainArgs are the CLI's catalog flags for backend b, and, unless
// args give a policy, one of batchDefaults alone (a file in the test's
// temp dir).
func maintainArgs(t testing.TB, b backend, args ...string) []string {
	t.Helper()
	out := []string{"maintain", "--catalog-uri", b.cfg.URI, "--catalog-name", b.cfg.Name}
	if !slices.Contains(args, "--policy") {
		// A file of the test's own: tests run in parallel, and a file
		// they shared could be read while another rewrote it.
		pf := filepath.Join(t.TempDir(), "batch-policy.yaml")
		if err := os.WriteFile(pf, []byte(batchDefaults), 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, "--policy", pf)
	}
	return append(out, args...)
}

// TestMaintainFleet is issue 23's fleet: 50 tables, v2 and v3, partitioned
// or not, through the command in-process against SQLite. The dry run
// changes no byte and its plan parses; one run brings every due table to
// health, leaves the rest untouched and every table reads the same; the
// gc.enabled=false table loses no file; the report parses as JSON and the
// metrics as Prometheus text; a second run finds nothing due.
func TestMaintainFleet(t *testing.T) {
	t.Parallel()
	readerBin(t)
	b := sqliteBackend(t)
	cat := b.open(t)
	fleet := buildFleet(t, b, cat, 50)
	if len(fleet) != 50 {
		t.Fatalf("fleet of %d tables, want 50", len(fleet))
	}
	policyFile := writeFleetPolicy(t)
	before := snapFleet(t, b, cat, fleet)
	var noGC fleetTable
	for _, ft := range fleet {
		if ft.kind == kindNoGC {
			noGC = ft
		}
	}
	noGCID := catalog.Ident{Namespace: []string{b.ns}, Name: noGC.name}
	noGCFiles := tableFiles(t, cat, noGCID)

	// The dry run: the plan, byte for byte nothing changed.
	state := catalogState(t, b, cat, fleet)
	out, errOut, code := runICECTL(t, maintainArgs(t, b, "--policy", policyFile, "--dry-run", "--output", "json")...)
	if code != 0 {
		t.Fatalf("dry run: exit %d: %s", code, errOut)
	}
	var plan struct {
		DryRun bool                  `json:"dry_run"`
		Due    []*maintain.TablePlan `json:"due"`
		Nodue  []*maintain.TablePlan `json:"nothing_due"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatalf("dry-run JSON: %v\n%s", err, out)
	}
	dueNames := map[string]bool{}
	for _, tp := range plan.Due {
		dueNames[tp.Table] = true
		if len(tp.Due) == 0 {
			t.Errorf("%s is due with no verb", tp.Table)
		}
	}
	for _, ft := range fleet {
		if dueNames[b.ns+"."+ft.name] != ft.due {
			t.Errorf("%s (%s, v%d): due %v in the plan, want %v", ft.name, ft.kind, ft.v, !ft.due, ft.due)
		}
	}
	if _, _, code := runICECTL(t, maintainArgs(t, b, "--policy", policyFile, "--dry-run")...); code != 0 {
		t.Fatalf("text dry run: exit %d", code)
	}
	if after := catalogState(t, b, cat, fleet); after != state {
		t.Fatalf("the dry run changed the catalog or the warehouse:\n%s", diffLines(state, after))
	}

	// The run.
	metrics := filepath.Join(t.TempDir(), "maintain.prom")
	out, errOut, code = runICECTL(t, maintainArgs(t, b, "--policy", policyFile, "--concurrency", "3", "--output", "json", "--metrics-file", metrics)...)
	if code != 0 {
		t.Fatalf("maintain: exit %d\n%s\n%s", code, errOut, out)
	}
	var rep maintain.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report JSON: %v\n%s", err, out)
	}
	if rep.Summary.Tables != 50 || rep.Summary.Done != len(dueNames) || rep.Summary.NothingDue != 50-len(dueNames) || !rep.Complete() {
		t.Errorf("summary %+v, want 50 tables, %d done", rep.Summary, len(dueNames))
	}
	t.Logf("summary %+v", rep.Summary)
	checkFleetAfter(t, fleet, before, snapFleet(t, b, cat, fleet))
	pol, err := maintain.ParsePolicy(policyFile, []byte(fleetPolicy))
	if err != nil {
		t.Fatal(err)
	}
	checkNothingDue(t, planFleet(t, cat, pol))
	// Every file the gc.enabled=false table had is still there, byte for
	// byte (the first line names the current metadata file, which moved).
	noGCAfter := tableFiles(t, cat, noGCID)
	for _, l := range strings.Split(noGCFiles, "\n")[1:] {
		if !strings.Contains(noGCAfter, l+"\n") {
			t.Errorf("gc.enabled=false table %s lost %s", noGC.name, l)
		}
	}
	checkMetrics(t, metrics, &rep)

	// Nothing left: the second run changes nothing and says so.
	state = catalogState(t, b, cat, fleet)
	out, errOut, code = runICECTL(t, maintainArgs(t, b, "--policy", policyFile, "--quiet")...)
	if code != 0 || out != "" || errOut != "" {
		t.Errorf("second run: exit %d, stdout %q, stderr %q; want 0 and silence", code, out, errOut)
	}
	if after := catalogState(t, b, cat, fleet); after != state {
		t.Errorf("a run with nothing due changed the catalog:\n%s", diffLines(state, after))
	}
}

// checkMetrics parses the metrics file with Prometheus' own parser and
// checks its figures against the report.
func checkMetrics(t *testing.T, path string, rep *maintain.Report) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(promodel.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("metrics do not parse: %v\n%s", err, data)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*.tmp")); len(left) > 0 {
		t.Errorf("temporary metrics files left: %v", left)
	}
	get := func(name string, labels map[string]string) (float64, bool) {
		f := fams["icectl_maintain_"+name]
		if f == nil {
			return 0, false
		}
		for _, m := range f.GetMetric() {
			match := true
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					match = false
				}
			}
			if match {
				return m.GetGauge().GetValue(), true
			}
		}
		return 0, false
	}
	if v, ok := get("run_tables", map[string]string{"status": "done"}); !ok || int(v) != rep.Summary.Done {
		t.Errorf("run_tables{status=done} = %v (%v), report %d", v, ok, rep.Summary.Done)
	}
	if v, ok := get("run_complete", nil); !ok || (v == 1) != rep.Complete() {
		t.Errorf("run_complete = %v", v)
	}
	checked := 0
	for _, tr := range rep.Tables {
		for _, vr := range tr.Verbs {
			l := map[string]string{"table": tr.Table, "verb": vr.Verb}
			if v, ok := get("verb_files_before", l); !ok || int64(v) != vr.FilesIn {
				t.Errorf("verb_files_before%v = %v (%v), report %d", l, v, ok, vr.FilesIn)
			}
			if v, ok := get("verb_bytes_after", l); !ok || int64(v) != vr.BytesOut {
				t.Errorf("verb_bytes_after%v = %v, report %d", l, v, vr.BytesOut)
			}
			if _, ok := get("verb_last_success_timestamp_seconds", l); ok != (vr.SucceededMS > 0) {
				t.Errorf("verb_last_success%v present %v, succeeded %d", l, ok, vr.SucceededMS)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Error("no verb in the report to check the metrics against")
	}
}

// runFleet runs maintain through the library on cat, as the command does.
func runFleet(t *testing.T, cat catalog.Catalog, pol *maintain.Policy, o maintain.Options) *maintain.Report {
	t.Helper()
	p := planFleet(t, cat, pol)
	if o.CommitOptions == nil {
		o.CommitOptions = func(map[string]string) commit.Options { return noWait() }
	}
	return maintain.Run(context.Background(), cat, p, o)
}

// fleetOn runs a small fleet through the library on another backend,
// each table under its claim: everything due is done, the rest untouched
// (no claim taken), the rows the same.
func fleetOn(t *testing.T, b backend) {
	readerBin(t)
	cat := b.open(t)
	fleet := buildFleet(t, b, cat, 10)
	before := snapFleet(t, b, cat, fleet)
	pol, err := maintain.ParsePolicy("policy.yaml", []byte(fleetPolicy))
	if err != nil {
		t.Fatal(err)
	}
	// The other tests' tables on a shared server are not this fleet's.
	p := planFleet(t, cat, pol, b.ns)
	// Under each table's claim, as the command runs it: the claim's
	// commits go through this catalog too.
	rep := maintain.Run(context.Background(), cat, p, maintain.Options{Concurrency: 2, Policy: pol,
		Claim:         maintain.CatalogClaims{Cat: cat, Options: claim.Options{Verb: "maintain"}},
		CommitOptions: func(map[string]string) commit.Options { return noWait() }})
	if !rep.Complete() {
		t.Errorf("run left work: %s %+v", rep.LeftText(), rep.Tables)
	}
	checkFleetAfter(t, fleet, before, snapFleet(t, b, cat, fleet))
	checkNothingDue(t, planFleet(t, cat, pol, b.ns))
	for _, ft := range fleet {
		checkReachableExist(t, loadIdent(t, cat, b.ns, ft.name))
	}
}

func TestMaintainFleetPostgres(t *testing.T) {
	t.Parallel()
	fleetOn(t, postgresBackend(t))
}

func TestMaintainFleetREST(t *testing.T) {
	t.Parallel()
	fleetOn(t, restBackend(t))
}

// TestMaintainByteBudget: a --max-rewrite-bytes that runs out halfway
// compacts what fits, exits 3 and names what is left; the next run does
// the rest.
func TestMaintainByteBudget(t *testing.T) {
	t.Parallel()
	readerBin(t)
	b := sqliteBackend(t)
	cat := b.open(t)
	ctx := context.Background()
	if err := cat.CreateNamespace(ctx, []string{b.ns}, nil); err != nil {
		t.Fatal(err)
	}
	var fleet []fleetTable
	for i := range 6 {
		ft := fleetTable{name: fmt.Sprintf("small_%d", i), kind: kindSmall, v: 2 + i%2, due: true}
		buildFleetTable(t, b, cat, ft, true)
		fleet = append(fleet, ft)
	}
	before := snapFleet(t, b, cat, fleet)
	p := planFleet(t, cat, batchPolicy(t))
	var total, first int64
	for i, tp := range p.Due {
		total += tp.EstimatedBytes()
		if i == 0 {
			first = tp.EstimatedBytes()
		}
	}
	// Room for half the tables.
	budget := fmt.Sprint(total / 2)
	out, errOut, code := runICECTL(t, maintainArgs(t, b, "--max-rewrite-bytes", budget)...)
	if code != 3 || !strings.Contains(errOut, "max-rewrite-bytes") || !strings.Contains(errOut, "the next run continues") {
		t.Fatalf("budgeted run: exit %d, stderr %q; want 3 naming the budget and what is left\n%s", code, errOut, out)
	}
	mid := snapFleet(t, b, cat, fleet)
	done := 0
	for _, ft := range fleet {
		// A table the budget left undone may still have been claimed (its
		// metadata changed, none of its snapshots).
		if mid[ft.name].head != before[ft.name].head {
			done++
			if !strings.Contains(out, b.ns+"."+ft.name+": done") {
				t.Errorf("%s was compacted but is not reported done:\n%s", ft.name, out)
			}
		} else if !strings.Contains(errOut, b.ns+"."+ft.name) {
			t.Errorf("%s is left but the error does not name it: %s", ft.name, errOut)
		}
	}
	if done == 0 || done == len(fleet) || first > total/2 {
		t.Fatalf("%d of %d tables done within half the bytes (first table %d of %d bytes)", done, len(fleet), first, total)
	}
	if _, errOut, code := runICECTL(t, maintainArgs(t, b)...); code != 0 {
		t.Fatalf("second run: exit %d: %s", code, errOut)
	}
	checkFleetAfter(t, fleet, before, snapFleet(t, b, cat, fleet))
	checkNothingDue(t, planFleet(t, cat, batchPolicy(t)))
}

// steppedClock is a clock that moves only when told to.
type steppedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *steppedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Write advances the clock by two hours whenever the runner logs that a
// table finished, so the one-hour budget runs out after the first table.
func (c *steppedClock) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(" in ")) {
		c.mu.Lock()
		c.now = c.now.Add(2 * time.Hour)
		c.mu.Unlock()
	}
	return len(p), nil
}

// smallFleet is four tables of small files on a SQLite catalog, v2 and
// v3, partitioned and not, each due for compaction.
func smallFleet(t *testing.T) (backend, catalog.Catalog, []fleetTable) {
	b := sqliteBackend(t)
	cat := b.open(t)
	if err := cat.CreateNamespace(context.Background(), []string{b.ns}, nil); err != nil {
		t.Fatal(err)
	}
	var fleet []fleetTable
	for i := range 4 {
		ft := fleetTable{name: fmt.Sprintf("small_%d", i), kind: kindSmall, v: 2 + i%2, due: true}
		buildFleetTable(t, b, cat, ft, i%2 == 0)
		fleet = append(fleet, ft)
	}
	return b, cat, fleet
}

// TestMaintainDurationBudget: once --max-duration has passed no table
// starts; the report says the budget stopped the run and what is left,
// and the next run does the rest.
func TestMaintainDurationBudget(t *testing.T) {
	t.Parallel()
	readerBin(t)
	b, cat, fleet := smallFleet(t)
	before := snapFleet(t, b, cat, fleet)
	clock := &steppedClock{now: time.Now()}
	rep := runFleet(t, cat, batchPolicy(t), maintain.Options{MaxDuration: time.Hour, Now: clock.Now, Log: clock})
	s := rep.Summary
	if s.Done != 1 || s.NotStarted != 3 || s.StoppedByBudget != "max-duration" || rep.Complete() ||
		!strings.Contains(rep.LeftText(), "max-duration") {
		t.Fatalf("budgeted run: %+v; %s", s, rep.LeftText())
	}
	rep = runFleet(t, cat, batchPolicy(t), maintain.Options{})
	if !rep.Complete() || rep.Summary.Done != 3 {
		t.Fatalf("next run: %+v", rep.Summary)
	}
	checkFleetAfter(t, fleet, before, snapFleet(t, b, cat, fleet))
}

// TestMaintainSkipsHeldTable: a table whose claim another run holds is
// skipped and reported, untouched; the rest are maintained.
func TestMaintainSkipsHeldTable(t *testing.T) {
	t.Parallel()
	b := sqliteBackend(t)
	cat := b.open(t)
	if err := cat.CreateNamespace(context.Background(), []string{b.ns}, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		buildFleetTable(t, b, cat, fleetTable{name: fmt.Sprintf("small_%d", i), kind: kindSmall, v: 3}, true)
	}
	held := b.ns + ".small_1"
	// Another run holds small_1's claim, taken through the catalog.
	other, err := claim.Take(context.Background(), cat, catalog.Ident{Namespace: []string{b.ns}, Name: "small_1"},
		claim.Options{Owner: "other-host:42", Verb: "compact"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Release(context.Background()) })
	before := loadIdent(t, cat, b.ns, "small_1").MetadataLocation
	rep := runFleet(t, cat, batchPolicy(t), maintain.Options{Claim: maintain.CatalogClaims{Cat: cat, Options: claim.Options{Verb: "maintain"}}})
	var got *maintain.TableReport
	for _, tr := range rep.Tables {
		if tr.Table == held {
			got = tr
		} else if tr.Status != maintain.StatusDone {
			t.Errorf("%s: %s, want done", tr.Table, tr.Status)
		}
	}
	if got == nil || got.Status != maintain.StatusSkipped || got.Held == nil || got.Held.Holder != "other-host:42 (compact)" {
		t.Fatalf("held table reported %+v", got)
	}
	if loadIdent(t, cat, b.ns, "small_1").MetadataLocation != before {
		t.Error("the held table was committed to")
	}
	// The held table is being maintained, by the other run: reported, and
	// not work left (the command exits 0).
	if !rep.Complete() || rep.Summary.Skipped != 1 || !slices.Equal(rep.Summary.Claimed, []string{held}) || rep.LeftText() != "" {
		t.Errorf("summary %+v: %s", rep.Summary, rep.LeftText())
	}
}

// overlapClaims makes two maintain runs overlap on the first table of
// their (equal) plans: the first run, once it holds that table's claim,
// works on it only after the second run has found it held.
type overlapClaims struct {
	maintain.CatalogClaims
	first   bool
	holding chan struct{} // closed by the first run once it holds its first claim
	skipped chan struct{} // closed by the second run once it met a held claim
	once    *sync.Once    // the first run's first claim
	seen    *sync.Once    // the second run's first held claim
	t       *testing.T
}

func (c overlapClaims) Do(ctx context.Context, id metastore.Ident, fn func(ctx context.Context) error) error {
	wait := func(ch chan struct{}, what string) {
		select {
		case <-ch:
		case <-time.After(5 * time.Minute):
			c.t.Errorf("overlap never happened: %s", what)
		}
	}
	if c.first {
		return c.CatalogClaims.Do(ctx, id, func(ctx context.Context) error {
			c.once.Do(func() {
				close(c.holding)
				wait(c.skipped, "the second run never found the first run's table held")
			})
			return fn(ctx)
		})
	}
	wait(c.holding, "the first run never took a claim")
	err := c.CatalogClaims.Do(ctx, id, fn)
	if _, _, held := c.Held(err); held {
		c.seen.Do(func() { close(c.skipped) })
	}
	return err
}

// TestMaintainOverlappingRuns: two maintain runs at once, without --wait
// (cron's default), share the fleet: a table one of them holds is skipped
// by the other and reported as claimed by another run, not as work left.
// Both runs are complete (the command exits 0), everything due is done
// and every row reads as before.
func TestMaintainOverlappingRuns(t *testing.T) {
	t.Parallel()
	readerBin(t)
	b, cat, fleet := smallFleet(t)
	before := snapFleet(t, b, cat, fleet)
	pol := batchPolicy(t)
	plans := [2]*maintain.Plan{planFleet(t, cat, pol), planFleet(t, cat, pol)}
	holding, skipped := make(chan struct{}), make(chan struct{})
	var once, seen sync.Once
	var reps [2]*maintain.Report
	var wg sync.WaitGroup
	for i := range 2 {
		claims := overlapClaims{CatalogClaims: maintain.CatalogClaims{Cat: cat, Options: claim.Options{Verb: "maintain", Owner: fmt.Sprintf("run-%d", i)}},
			first: i == 0, holding: holding, skipped: skipped, once: &once, seen: &seen, t: t}
		wg.Go(func() {
			reps[i] = maintain.Run(context.Background(), cat, plans[i], maintain.Options{Claim: claims, Policy: pol,
				CommitOptions: func(map[string]string) commit.Options { return noWait() }})
		})
	}
	wg.Wait()
	claimed := 0
	for i, rep := range reps {
		if !rep.Complete() || rep.LeftText() != "" {
			t.Errorf("run %d is not complete (the command would exit 3): %+v: %s", i, rep.Summary, rep.LeftText())
		}
		claimed += len(rep.Summary.Claimed)
		for _, tr := range rep.Tables {
			if tr.Status == maintain.StatusSkipped && tr.Held == nil {
				t.Errorf("run %d: %s skipped without a held claim: %+v", i, tr.Table, tr)
			}
		}
	}
	if claimed == 0 {
		t.Error("no run reported a table claimed by the other")
	}
	checkFleetAfter(t, fleet, before, snapFleet(t, b, cat, fleet))
	checkNothingDue(t, planFleet(t, cat, pol))
}

// maintainKills is how many runs TestMaintainKilled kills: 3 by default,
// $ICECTL_TEST_MAINTAIN_KILLS (issue 23 asks for 30) when set.
func maintainKills(t *testing.T) int {
	if s := os.Getenv("ICECTL_TEST_MAINTAIN_KILLS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("ICECTL_TEST_MAINTAIN_KILLS=%q: want a positive count", s)
		}
		return n
	}
	return 3
}

// TestMaintainKilled SIGKILLs maintain processes at random points of a
// run over a fresh fleet each time: the next run completes (exit 0),
// every table reads as before, every file a snapshot references exists and
// nothing is left due.
func TestMaintainKilled(t *testing.T) {
	readerBin(t)
	bin := testenv.Icectl(t)
	newFleet := func() (backend, catalog.Catalog, []fleetTable) {
		b := sqliteBackend(t)
		cat := b.open(t)
		return b, cat, buildFleet(t, b, cat, 10)
	}
	pf := writeFleetPolicy(t)
	pol, err := maintain.ParsePolicy(pf, []byte(fleetPolicy))
	if err != nil {
		t.Fatal(err)
	}
	// A killed run's claim lapses with its lease: a short one, and the next
	// run waits for it.
	t.Setenv("ICECTL_CLAIM_LEASE", "2s")
	b, _, _ := newFleet()
	run := testenv.Calibrate(t, exec.Command(bin, maintainArgs(t, b, "--policy", pf)...))
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 23))
	for i := range maintainKills(t) {
		b, cat, fleet := newFleet()
		before := snapFleet(t, b, cat, fleet)
		delay := time.Duration(rng.Int64N(int64(run)))
		finished := testenv.KillAfter(t, exec.Command(bin, maintainArgs(t, b, "--policy", pf)...), delay)
		out, errOut, code := runICECTL(t, maintainArgs(t, b, "--policy", pf, "--wait", "1m")...)
		if code != 0 {
			t.Fatalf("kill %d (after %s, finished %v): the next run exited %d\n%s\n%s", i, delay, finished, code, errOut, out)
		}
		checkFleetAfter(t, fleet, before, snapFleet(t, b, cat, fleet))
		checkNothingDue(t, planFleet(t, cat, pol))
		for _, ft := range fleet {
			checkReachableExist(t, loadIdent(t, cat, b.ns, ft.name))
		}
		if t.Failed() {
			t.Fatalf("kill %d after %s of a %s run (finished %v)", i, delay, run, finished)
		}
	}
}

// TestMaintainTwoRuns starts two maintain processes on one catalog at
// once: both succeed (no conflict failure from each other, no table
// maintained twice at once), and everything due is done.
func TestMaintainTwoRuns(t *testing.T) {
	t.Parallel()
	readerBin(t)
	bin := testenv.Icectl(t)
	b := sqliteBackend(t)
	cat := b.open(t)
	fleet := buildFleet(t, b, cat, 20)
	pf := writeFleetPolicy(t)
	pol, err := maintain.ParsePolicy(pf, []byte(fleetPolicy))
	if err != nil {
		t.Fatal(err)
	}
	before := snapFleet(t, b, cat, fleet)
	var outs [2]bytes.Buffer
	var cmds [2]*exec.Cmd
	for i := range cmds {
		cmds[i] = exec.Command(bin, maintainArgs(t, b, "--policy", pf, "--wait", "2m", "--output", "json")...)
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("run %d: %v\n%s", i, err, outs[i].String())
		}
	}
	checkFleetAfter(t, fleet, before, snapFleet(t, b, cat, fleet))
	checkNothingDue(t, planFleet(t, cat, pol))
}

// TestMaintainVsLoop runs `icectl maintain` over a fleet and, on a copy
// of it, the shell loop a cron job runs today: every single verb on every
// table (compact, dv merge, rewrite-manifests, expire), one process each.
// Both must leave nothing due. With ICECTL_BENCH_MAINTAIN_TABLES=200 it is
// scripts/bench.d/maintain: it logs both wall times (docs/benchmarks.md).
func TestMaintainVsLoop(t *testing.T) {
	t.Parallel()
	readerBin(t)
	bin := testenv.Icectl(t)
	n := 10
	if s := os.Getenv("ICECTL_BENCH_MAINTAIN_TABLES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("ICECTL_BENCH_MAINTAIN_TABLES=%q: want a positive count", s)
		}
	}
	var fleets [2]struct {
		b     backend
		cat   catalog.Catalog
		names []string
	}
	for i := range fleets {
		b := sqliteBackend(t)
		cat := b.open(t)
		for _, ft := range buildFleet(t, b, cat, n) {
			fleets[i].names = append(fleets[i].names, b.ns+"."+ft.name)
		}
		fleets[i].b, fleets[i].cat = b, cat
	}
	start := time.Now()
	if out, err := exec.Command(bin, maintainArgs(t, fleets[0].b, "--concurrency", "2")...).CombinedOutput(); err != nil {
		t.Fatalf("maintain: %v\n%s", err, out)
	}
	maintainTime := time.Since(start)
	var script strings.Builder
	lb := fleets[1].b
	script.WriteString("for t in " + strings.Join(fleets[1].names, " ") + "; do\n")
	for _, verb := range []string{"compact", "dv merge", "rewrite-position-deletes", "rewrite-manifests", "expire"} {
		// dv merge refuses v2 tables and rewrite-position-deletes v3 ones;
		// the loop does not know which are.
		fmt.Fprintf(&script, "  %s %s \"$t\" --catalog-uri %s --catalog-name %s >/dev/null 2>&1 || true\n", bin, verb, lb.cfg.URI, lb.cfg.Name)
	}
	script.WriteString("done\n")
	start = time.Now()
	if out, err := exec.Command("bash", "-c", script.String()).CombinedOutput(); err != nil {
		t.Fatalf("loop: %v\n%s", err, out)
	}
	loopTime := time.Since(start)
	t.Logf("%d tables: icectl maintain %.2fs, loop of single verbs %.2fs (%d processes)", len(fleets[0].names), maintainTime.Seconds(), loopTime.Seconds(), 5*len(fleets[1].names))
	// Every verb with its defaults is what maintain runs by default: both
	// leave nothing due.
	for _, f := range fleets {
		checkNothingDue(t, planFleet(t, f.cat, batchPolicy(t)))
	}
}

// TestMaintainQuietPrintsFailures: with --quiet, a run prints only the
// table that failed (a data file of it is gone), exits 3, and still
// maintains the other table.
func TestMaintainQuietPrintsFailures(t *testing.T) {
	t.Parallel()
	b := sqliteBackend(t)
	cat := b.open(t)
	if err := cat.CreateNamespace(context.Background(), []string{b.ns}, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"small_ok", "small_broken"} {
		buildFleetTable(t, b, cat, fleetTable{name: name, kind: kindSmall, v: 2}, true)
	}
	broken := loadIdent(t, cat, b.ns, "small_broken")
	fs, err := table.LiveFiles(context.Background(), broken.IO, broken.Metadata.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(localPath(t, fs.Data[0].Entry.DataFile.FilePath)); err != nil {
		t.Fatal(err)
	}
	okBefore := loadIdent(t, cat, b.ns, "small_ok").MetadataLocation
	out, errOut, code := runICECTL(t, maintainArgs(t, b, "--quiet")...)
	if code != 3 || !strings.Contains(out, b.ns+".small_broken: failed") || !strings.Contains(out, "compact: failed") ||
		strings.Contains(out, "small_ok") || !strings.Contains(errOut, "small_broken") {
		t.Errorf("quiet run: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	if loadIdent(t, cat, b.ns, "small_ok").MetadataLocation == okBefore {
		t.Error("the healthy table beside the broken one was not maintained")
	}
}

// posDelPolicy turns rewrite-position-deletes off for the *_off tables.
const posDelPolicy = batchDefaults + `tables:
  "*.*_off":
    rewrite-position-deletes:
      enabled: false
`

// deletedPositions are the positions each live data file of tbl has
// deleted, as icectl's delete index applies them: position-delete files
// and DVs alike, so a rewrite that changes how deletes are stored but not
// what they delete compares equal.
func deletedPositions(t *testing.T, tbl *catalog.Table) map[string][]uint64 {
	t.Helper()
	ctx := context.Background()
	fs, err := table.LiveFiles(ctx, tbl.IO, tbl.Metadata.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	ix := table.DeletesForTable(tbl.Metadata, fs)
	out := map[string][]uint64{}
	for _, d := range fs.Data {
		path := d.Entry.DataFile.FilePath
		a := ix.For(d)
		var all []uint64
		if a.DV != nil {
			bm, err := table.ReadDV(ctx, tbl.IO, &a.DV.Entry.DataFile)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, bm.ToArray()...)
		}
		for _, pd := range a.PositionDeletes {
			got, err := table.ReadPositionDeletes(ctx, tbl.IO, &pd.Entry.DataFile, func(p string) (bool, error) { return p == path, nil })
			if err != nil {
				t.Fatal(err)
			}
			if bm := got[path]; bm != nil {
				all = append(all, bm.ToArray()...)
			}
		}
		slices.Sort(all)
		out[path] = slices.Compact(all)
	}
	return out
}

// deleteFileCounts counts tbl's live position-delete files and DVs.
func deleteFileCounts(t *testing.T, tbl *catalog.Table) (pos, dvs int) {
	t.Helper()
	fs, err := table.LiveFiles(context.Background(), tbl.IO, tbl.Metadata.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range fs.Deletes {
		switch df := &d.Entry.DataFile; {
		case table.IsDV(df):
			dvs++
		case df.Content == manifest.ContentPositionDeletes:
			pos++
		}
	}
	return pos, dvs
}

// TestMaintainPositionDeletes: on v2 tables maintain merges many small
// position-delete files with rewrite-position-deletes, and on v3 ones it
// still runs dv merge; a v2 data file whose own deletes pass the delete
// ratio is compacted (its deletes applied). Rows read back identically
// through iceberg-go and every data file keeps exactly its deleted
// positions; the dry run changes no byte; the report, its JSON and the
// metrics name the new verb; a table whose policy turns the rewrite off is
// untouched, and one with gc.enabled=false is rewritten without losing a
// file from storage. A second plan finds nothing due.
func TestMaintainPositionDeletes(t *testing.T) {
	t.Parallel()
	readerBin(t)
	b := sqliteBackend(t)
	cat := b.open(t)
	ctx := context.Background()
	if err := cat.CreateNamespace(ctx, []string{b.ns}, nil); err != nil {
		t.Fatal(err)
	}
	fleet := []fleetTable{
		{name: "posdel_v2", kind: kindPosDel, v: 2, due: true},
		{name: "posdel_flat", kind: kindPosDel, v: 2, due: true},
		{name: "posdel_v3", kind: kindPosDel, v: 3, due: true},
		{name: "posdel_nogc", kind: kindPosDel, v: 2, due: true},
		{name: "posdel_off", kind: kindPosDel, v: 2},
		{name: "heavy_v2", kind: "heavy", v: 2, due: true},
	}
	for _, ft := range fleet {
		switch ft.name {
		case "posdel_nogc":
			w := newFleetWriter(t, b, cat, ft.name, 2, true, map[string]string{maintain.PropGCEnabled: "false"})
			d1 := w.dataIn(t, []any{"eu"}, mkRows("eu", span(0, 40)...))
			w.commit(t, []manifest.DataFile{d1})
			for k := range int64(6) {
				w.commit(t, nil, w.positionDeletes(t, []any{"eu"}, map[string][]int64{d1.FilePath: {3 * k}}))
			}
		case "heavy_v2":
			// Half of one data file deleted by a file-scoped delete file:
			// compaction rewrites it with the other small file of its
			// partition, applying both files' deletes.
			w := newFleetWriter(t, b, cat, ft.name, 2, true, nil)
			d1, d2 := w.dataIn(t, []any{"eu"}, mkRows("eu", span(0, 10)...)), w.dataIn(t, []any{"eu"}, mkRows("eu", span(10, 30)...))
			w.commit(t, []manifest.DataFile{d1, d2})
			heavy := w.positionDeletes(t, []any{"eu"}, map[string][]int64{d1.FilePath: {0, 2, 4, 6, 8}})
			heavy.ReferencedDataFile = &d1.FilePath
			light := w.positionDeletes(t, []any{"eu"}, map[string][]int64{d2.FilePath: {1}})
			light.ReferencedDataFile = &d2.FilePath
			w.commit(t, nil, heavy, light)
		default:
			buildFleetTable(t, b, cat, ft, ft.name != "posdel_flat")
		}
	}
	pf := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pf, []byte(posDelPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	pol, err := maintain.ParsePolicy(pf, []byte(posDelPolicy))
	if err != nil {
		t.Fatal(err)
	}
	before := snapFleet(t, b, cat, fleet)
	deletesBefore := map[string]map[string][]uint64{}
	for _, ft := range fleet {
		deletesBefore[ft.name] = deletedPositions(t, loadIdent(t, cat, b.ns, ft.name))
	}
	noGCFiles := tableFiles(t, cat, catalog.Ident{Namespace: []string{b.ns}, Name: "posdel_nogc"})

	wantDue := map[string]string{
		"posdel_v2": "rewrite-position-deletes", "posdel_flat": "rewrite-position-deletes", "posdel_v3": "dv-merge",
		"posdel_nogc": "rewrite-position-deletes", "posdel_off": "", "heavy_v2": "compact",
	}
	// The dry run: the plan, and not a byte changed.
	state := catalogState(t, b, cat, fleet)
	out, errOut, code := runICECTL(t, maintainArgs(t, b, "--policy", pf, "--dry-run", "--output", "json", b.ns)...)
	if code != 0 {
		t.Fatalf("dry run: exit %d: %s", code, errOut)
	}
	var plan struct {
		Due   []*maintain.TablePlan `json:"due"`
		Nodue []*maintain.TablePlan `json:"nothing_due"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatalf("dry-run JSON: %v\n%s", err, out)
	}
	for _, tp := range slices.Concat(plan.Due, plan.Nodue) {
		var verbs []string
		for _, d := range tp.Due {
			verbs = append(verbs, d.Verb)
		}
		name := strings.TrimPrefix(tp.Table, b.ns+".")
		if got := strings.Join(verbs, ","); got != wantDue[name] {
			t.Errorf("%s: due %q, want %q (%+v)", name, got, wantDue[name], tp.Due)
		}
		if name == "posdel_off" && (len(tp.Off) != 1 || tp.Off[0].Verb != maintain.VerbRewritePositionDeletes) {
			t.Errorf("posdel_off: off %+v, want rewrite-position-deletes switched off", tp.Off)
		}
	}
	if after := catalogState(t, b, cat, fleet); after != state {
		t.Fatalf("the dry run changed the catalog or the warehouse:\n%s", diffLines(state, after))
	}
	text, _, code := runICECTL(t, maintainArgs(t, b, "--policy", pf, "--dry-run", b.ns)...)
	if code != 0 || !strings.Contains(text, "rewrite-position-deletes") {
		t.Errorf("text dry run: exit %d, no rewrite-position-deletes in\n%s", code, text)
	}

	// The run.
	metrics := filepath.Join(t.TempDir(), "maintain.prom")
	out, errOut, code = runICECTL(t, maintainArgs(t, b, "--policy", pf, "--output", "json", "--metrics-file", metrics, b.ns)...)
	if code != 0 {
		t.Fatalf("maintain: exit %d\n%s\n%s", code, errOut, out)
	}
	var rep maintain.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report JSON: %v\n%s", err, out)
	}
	rewrites := 0
	for _, tr := range rep.Tables {
		for _, vr := range tr.Verbs {
			if vr.Verb != maintain.VerbRewritePositionDeletes {
				continue
			}
			rewrites++
			want := int64(6)
			if vr.Status != maintain.StatusDone || vr.Commits != 1 || vr.FilesIn != want || vr.FilesOut != 1 || vr.BytesIn <= 0 || vr.BytesOut <= 0 {
				t.Errorf("%s: rewrite-position-deletes reported %+v, want done, 6 files -> 1, one commit", tr.Table, vr)
			}
		}
	}
	if rewrites != 3 {
		t.Errorf("%d tables report rewrite-position-deletes, want 3", rewrites)
	}
	checkMetrics(t, metrics, &rep)
	if data, err := os.ReadFile(metrics); err != nil || !strings.Contains(string(data), `verb="rewrite-position-deletes"`) {
		t.Errorf("metrics name no rewrite-position-deletes verb (%v)", err)
	}

	checkFleetAfter(t, fleet, before, snapFleet(t, b, cat, fleet))
	for _, ft := range fleet {
		tbl := loadIdent(t, cat, b.ns, ft.name)
		pos, dvs := deleteFileCounts(t, tbl)
		switch ft.name {
		case "heavy_v2":
			// Rewritten with their deletes applied: no delete file left.
			if pos != 0 || dvs != 0 {
				t.Errorf("%s: %d position-delete files and %d DVs after compaction, want none", ft.name, pos, dvs)
			}
			continue
		case "posdel_v3":
			if pos != 0 || dvs != 2 {
				t.Errorf("%s: %d position-delete files and %d DVs after dv merge, want 0 and 2", ft.name, pos, dvs)
			}
		case "posdel_off":
			if pos != 6 {
				t.Errorf("%s: %d position-delete files, want the 6 it had", ft.name, pos)
			}
		default:
			if pos != 1 || dvs != 0 {
				t.Errorf("%s: %d position-delete files and %d DVs after the rewrite, want 1 and 0", ft.name, pos, dvs)
			}
		}
		if got := fmt.Sprint(deletedPositions(t, tbl)); got != fmt.Sprint(deletesBefore[ft.name]) {
			t.Errorf("%s: deleted positions after %s, before %s", ft.name, got, fmt.Sprint(deletesBefore[ft.name]))
		}
		checkReachableExist(t, tbl)
	}
	noGCAfter := tableFiles(t, cat, catalog.Ident{Namespace: []string{b.ns}, Name: "posdel_nogc"})
	for _, l := range strings.Split(noGCFiles, "\n")[1:] {
		if !strings.Contains(noGCAfter, l+"\n") {
			t.Errorf("gc.enabled=false table lost %s", l)
		}
	}
	checkNothingDue(t, planFleet(t, cat, pol, b.ns))
}
