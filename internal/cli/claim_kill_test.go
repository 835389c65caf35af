package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/icectl/icectl/iceberg/claim"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/internal/testing/testenv"
	"github.com/icectl/icectl/maintain"
)

// The claim tests below run icectl as a process (testenv.Icectl), to kill
// or interrupt it while it holds a table's claim: claimPauseEnv makes it
// say so on stderr and wait there.

// binEnv is the environment of an icectl process: the demo's plus PATH.
func (d *demoTable) binEnv(extra ...string) []string {
	env := []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range d.env {
		env = append(env, k+"="+v)
	}
	return append(env, extra...)
}

// runBin runs the icectl binary on the demo catalog.
func (d *demoTable) runBin(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.Command(testenv.Icectl(t), append(args, d.flags...)...)
	cmd.Env = d.binEnv()
	out, errOut, code := testenv.Run(t, cmd)
	return result{stdout: out, stderr: errOut, code: code}
}

// holding is an icectl process paused while it holds a claim.
type holding struct {
	cmd    *exec.Cmd
	stderr strings.Builder
	copied chan struct{} // closed once stderr has all the process wrote
}

// wait waits for the process to exit and returns what Wait says.
func (h *holding) wait() error {
	<-h.copied
	return h.cmd.Wait()
}

// startHolding starts icectl ARGS on the demo catalog and returns once it
// holds the table's claim, paused (claimPauseEnv).
func (d *demoTable) startHolding(t *testing.T, args ...string) *holding {
	t.Helper()
	h := &holding{cmd: exec.Command(testenv.Icectl(t), append(args, d.flags...)...), copied: make(chan struct{})}
	h.cmd.Env = d.binEnv(claimPauseEnv + "=1")
	pipe, err := h.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// One goroutine reads stderr to the end; the test reads h.stderr only
	// after h.copied is closed.
	held := make(chan bool, 1)
	go func() {
		defer close(h.copied)
		r, found := bufio.NewReader(pipe), false
		for {
			line, err := r.ReadString('\n')
			h.stderr.WriteString(line)
			if !found && strings.HasPrefix(line, "icectl: test: holding a claim as ") {
				found = true
				held <- true
			}
			if err != nil {
				break
			}
		}
		if !found {
			held <- false
		}
	}()
	if !<-held {
		err := h.wait()
		t.Fatalf("icectl %v did not take the claim: %v\n%s", args, err, h.stderr.String())
	}
	t.Cleanup(func() { h.cmd.Process.Kill(); h.wait() })
	return h
}

// scanChecksum is the rows of the demo table, read with iceberg/scan.
func (d *demoTable) scanChecksum(t *testing.T) scan.ChecksumResult {
	t.Helper()
	ctx := context.Background()
	tbl, err := d.cat.LoadTable(ctx, d.id)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := scan.Checksum(ctx, tbl.IO, tbl.Metadata, tbl.Metadata.CurrentSnapshot(), scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// killHolding SIGKILLs a run that holds the claim and returns its owner
// ("host:pid"), after checking that its claim stays behind.
func (d *demoTable) killHolding(t *testing.T, args ...string) string {
	t.Helper()
	h := d.startHolding(t, args...)
	if err := h.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h.wait()
	info, err := claim.Show(context.Background(), d.cat, d.id)
	if err != nil || info == nil {
		t.Fatalf("claim after the kill: %+v, %v; want the killed run's", info, err)
	}
	host, _ := os.Hostname()
	if want := fmt.Sprintf("%s:%d", host, h.cmd.Process.Pid); info.Owner != want {
		t.Fatalf("the killed run's claim is %s's, want %s", info.Owner, want)
	}
	return info.Owner
}

// A run SIGKILLed while it holds its claim (compact, dv merge, maintain)
// is followed at once by a run on the same host: it takes the dead run's
// claim over, long before its 30-minute lease ends, says so, finishes
// (exit 0) and leaves the rows as they were.
func TestKilledRunsClaimTakenOver(t *testing.T) {
	takenOver := func(owner, verb string) string {
		return "icectl: warning: took over the claim on shop.orders of " + owner + " (" + verb + "): its holder " + owner + " no longer runs\n"
	}
	check := func(t *testing.T, d *demoTable, before scan.ChecksumResult) {
		t.Helper()
		if info, err := claim.Show(context.Background(), d.cat, d.id); err != nil || info != nil {
			t.Errorf("claim after the run: %+v, %v; want released", info, err)
		}
		if after := d.scanChecksum(t); after != before {
			t.Errorf("rows after: %+v, before: %+v", after, before)
		}
	}
	// dv merge, then compact, on the demo table upgraded to v3 with its
	// position deletes kept (one table for both: each verb has work there).
	t.Run("dv merge and compact", func(t *testing.T) {
		d := newClaimDemo(t)
		d.run(t, "upgrade", "shop.orders", "--to", "3", "--force").mustSucceed(t)
		before := d.scanChecksum(t)
		owner := d.killHolding(t, "dv", "merge", "shop.orders")
		// claim show says the holder is gone, without changing anything.
		loc := d.location(t)
		m := d.runBin(t, "claim", "show", "shop.orders", "-o", "json").mustSucceed(t).decodeJSON(t)
		if m["claimed"] != true || m["expired"] != false || m["holder_gone"] != true || m["holder_gone_reason"] != "its holder "+owner+" no longer runs" {
			t.Errorf("claim show -o json: %v", m)
		}
		text := d.runBin(t, "claim", "show", "shop.orders").mustSucceed(t).stdout
		if !strings.Contains(text, "stale: its holder "+owner+" no longer runs (the next run takes it over)") {
			t.Errorf("claim show:\n%s", text)
		}
		if d.location(t) != loc {
			t.Error("claim show changed the table")
		}
		r := d.runBin(t, "dv", "merge", "shop.orders")
		if r.code != ExitOK || !strings.HasPrefix(r.stderr, takenOver(owner, "dv merge")) || !strings.Contains(r.stderr, "committed ") {
			t.Fatalf("dv merge after the kill: exit %d, stderr %q", r.code, r.stderr)
		}
		if out := d.runBin(t, "dv", "merge", "shop.orders").mustSucceed(t).stdout; !strings.Contains(out, "nothing to merge") {
			t.Errorf("dv merge after the takeover left work:\n%s", out)
		}
		check(t, d, before)

		owner = d.killHolding(t, "compact", "shop.orders")
		r = d.runBin(t, "compact", "shop.orders", "-o", "json").mustSucceed(t)
		if !strings.HasPrefix(r.stderr, takenOver(owner, "compact")) {
			t.Errorf("stderr %q, want the takeover", r.stderr)
		}
		if groups, _ := r.decodeJSON(t)["groups"].([]any); len(groups) == 0 {
			t.Errorf("the compaction after the takeover did nothing:\n%s", r.stdout)
		}
		check(t, d, before)
	})
	t.Run("maintain", func(t *testing.T) {
		d := newClaimDemo(t)
		before := d.scanChecksum(t)
		owner := d.killHolding(t, "maintain", "shop.orders")
		r := d.runBin(t, "maintain", "shop.orders", "-o", "json").mustSucceed(t)
		if !strings.Contains(r.stderr, takenOver(owner, "maintain")) {
			t.Errorf("stderr %q lacks the takeover", r.stderr)
		}
		var rep struct {
			Tables []struct {
				Table    string
				Status   string
				TookOver *struct{ Holder, Why string } `json:"claim_taken_over"`
			}
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		want := struct{ Holder, Why string }{owner + " (maintain)", "its holder " + owner + " no longer runs"}
		if len(rep.Tables) != 1 || rep.Tables[0].Status != "done" || rep.Tables[0].TookOver == nil || *rep.Tables[0].TookOver != want {
			t.Errorf("report: %+v\n%s", rep, r.stdout)
		}
		check(t, d, before)
	})
}

// maintain's text report names a claim it took over (not with --quiet,
// which prints failures only).
func TestMaintainReportTookOver(t *testing.T) {
	rep := &maintain.Report{Tables: []*maintain.TableReport{{Table: "shop.orders", Status: maintain.StatusDone,
		Verbs:    []maintain.VerbReport{{Verb: "compact", Status: maintain.StatusDone}},
		TookOver: &maintain.TookOver{Holder: "h1:42 (maintain)", Why: "its holder h1:42 no longer runs"}}}}
	for _, quiet := range []bool{false, true} {
		var out strings.Builder
		if err := writeMaintainReport(&Factory{Out: &out, Output: outputText}, rep, quiet); err != nil {
			t.Fatal(err)
		}
		const line = "shop.orders: done (0s)\n  compact: done\n  took over the claim of h1:42 (maintain): its holder h1:42 no longer runs\n"
		if got := strings.Contains(out.String(), line); got == quiet {
			t.Errorf("quiet %v: report\n%s", quiet, out.String())
		}
	}
}

// selfAs is this host's Procs, but for what it says of this process: a
// test takes a claim as another process would have.
type selfAs struct {
	claim.Procs
	self claim.Process
}

func (s selfAs) Self() claim.Process { return s.self }

// Which holders a run on this host waits for: one on another host, and
// one of this host that still runs, block it (exit 4) even right after
// the kill of another; one whose pid a later process now has does not.
func TestClaimHolderStillRunning(t *testing.T) {
	ctx := context.Background()
	procs := claim.HostProcs()
	me := procs.Self()
	if me.BootID == "" {
		t.Skip("this OS tells no process start times: every claim waits for its lease")
	}
	d := newClaimDemo(t)
	before := d.scanChecksum(t)
	// A pid no process has: a child that ran and was reaped.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	refused := func(who string) {
		t.Helper()
		loc := d.location(t)
		r := d.runBin(t, "compact", "shop.orders")
		if r.code != ExitConflict || !strings.Contains(r.stderr, "shop.orders is being maintained by "+who+" (compact)") {
			t.Errorf("compact with %s holding the claim: exit %d, stderr %q", who, r.code, r.stderr)
		}
		if d.location(t) != loc {
			t.Error("the table changed")
		}
		if m := d.runBin(t, "claim", "show", "shop.orders", "-o", "json").mustSucceed(t).decodeJSON(t); m["holder_gone"] != false {
			t.Errorf("claim show: %v", m)
		}
	}

	// Another host, with the pid of a process gone from this one.
	other := me
	other.Host, other.PID = "other-"+me.Host, dead.Process.Pid
	held, err := claim.Take(ctx, d.cat, d.id, claim.Options{Verb: "compact", Procs: selfAs{procs, other}})
	if err != nil {
		t.Fatal(err)
	}
	refused(fmt.Sprintf("other-%s:%d", me.Host, dead.Process.Pid))
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// This host, still running: this test process.
	held, err = claim.Take(ctx, d.cat, d.id, claim.Options{Verb: "compact"})
	if err != nil {
		t.Fatal(err)
	}
	refused(fmt.Sprintf("%s:%d", me.Host, me.PID))
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// This host, this test's pid, but a start time before it: the holder
	// exited and its pid is now this process's.
	reused := me
	reused.Start--
	if _, err := claim.Take(ctx, d.cat, d.id, claim.Options{Verb: "compact", Procs: selfAs{procs, reused}}); err != nil {
		t.Fatal(err)
	}
	r := d.runBin(t, "compact", "shop.orders").mustSucceed(t)
	if want := fmt.Sprintf("its holder %s:%d no longer runs (pid %d is now another process's)", me.Host, me.PID, me.PID); !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q lacks %q", r.stderr, want)
	}
	if info, err := claim.Show(ctx, d.cat, d.id); err != nil || info != nil {
		t.Errorf("claim after the run: %+v, %v", info, err)
	}
	if after := d.scanChecksum(t); after != before {
		t.Errorf("rows after: %+v, before: %+v", after, before)
	}
}

// SIGINT and SIGTERM: a run that holds its claim releases it before it
// exits, and exits 130.
func TestInterruptedRunReleasesClaim(t *testing.T) {
	d := newClaimDemo(t)
	before := d.scanChecksum(t)
	for _, c := range []struct {
		sig  syscall.Signal
		args []string
	}{
		{syscall.SIGTERM, []string{"compact", "shop.orders"}},
		{syscall.SIGINT, []string{"maintain", "shop.orders"}},
	} {
		h := d.startHolding(t, c.args...)
		if err := h.cmd.Process.Signal(c.sig); err != nil {
			t.Fatal(err)
		}
		err := h.wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != ExitInterrupted || !strings.HasSuffix(h.stderr.String(), "icectl: interrupted\n") {
			t.Errorf("%v after %s: %v, stderr %q; want exit %d, interrupted", c.args, c.sig, err, h.stderr.String(), ExitInterrupted)
		}
		if info, err := claim.Show(context.Background(), d.cat, d.id); err != nil || info != nil {
			t.Errorf("claim after %s: %+v, %v; want released", c.sig, info, err)
		}
	}
	if after := d.scanChecksum(t); after != before {
		t.Errorf("rows after: %+v, before: %+v", after, before)
	}
}
