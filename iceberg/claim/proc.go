package claim

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// Process identifies the process that holds a claim: its host and pid,
// and, where the OS tells them, what sets it apart from a later process
// given the same pid (after the holder exited, or after a reboot).
type Process struct {
	Host string `json:"host"` // os.Hostname, as in the Owner
	PID  int    `json:"pid"`
	// BootID names the host's current boot (Linux:
	// /proc/sys/kernel/random/boot_id); "" when unknown.
	BootID string `json:"boot_id,omitempty"`
	// PIDNS names the pid namespace PID is a pid in (Linux: the link
	// /proc/self/ns/pid, "pid:[4026531836]"); "" when unknown. Two
	// containers may share a host name and a kernel (one boot id) yet
	// each see only their own processes.
	PIDNS string `json:"pid_ns,omitempty"`
	// Start is when the process started, in clock ticks after boot
	// (Linux: field 22 of /proc/PID/stat); 0 when unknown.
	Start uint64 `json:"start,omitempty"`
}

func (p Process) owner() string { return p.Host + ":" + strconv.Itoa(p.PID) }

// Procs is what a taker learns of the processes on its own host: the IO
// seam of the stale-holder rule (see HolderGone). HostProcs is the real
// one; tests inject others.
type Procs interface {
	// Self is this process; fields it cannot tell are zero.
	Self() Process
	// Started reports the start time of the process with pid pid in
	// Self's pid namespace: ok is false when no process has that pid,
	// and the error says it cannot tell (the pid exists, but its start
	// time cannot be read).
	Started(pid int) (start uint64, ok bool, err error)
	// Booted is when this host booted (zero: unknown).
	Booted() time.Time
}

// HostProcs returns the Procs of this host. On Linux it reads /proc; on
// other systems Self has only host and pid, so no holder is ever judged
// gone before its lease ends.
func HostProcs() Procs { return hostProcs() }

func hostName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		return "unknown-host"
	}
	return host
}

// HolderGone reports whether the claim i describes is held by a process
// that, as seen from this host through p, no longer runs: a claim a taker
// may take over at once instead of waiting for its lease to end. why says
// how it knows. The rule, which errs towards waiting:
//
//   - the holder recorded its Process, on the host name this host has
//     (a holder on another host waits for its lease: this host cannot see
//     its processes);
//   - the boot ids differ: gone when the claim was last taken or renewed
//     before this host booted (a holder from before a reboot); otherwise
//     the holder runs on another machine with the same host name, and its
//     lease is waited for;
//   - the same boot and pid namespace: gone when no process has its pid,
//     or the process that has it started at another time (the pid was
//     reused). Another pid namespace (a container sharing the host name
//     and kernel), or a start time that cannot be read, waits.
func HolderGone(i Info, p Procs) (why string, gone bool) {
	h := i.Process
	self := p.Self()
	if h == nil || h.PID <= 0 || h.Host != self.Host || h.BootID == "" || self.BootID == "" {
		return "", false
	}
	if h.BootID != self.BootID {
		last := i.Renewed
		if last.IsZero() {
			last = i.Since
		}
		if booted := p.Booted(); !booted.IsZero() && !last.IsZero() && last.Before(booted) {
			return fmt.Sprintf("%s rebooted at %s, after its holder %s last renewed it", h.Host,
				booted.UTC().Format(time.RFC3339), h.owner()), true
		}
		return "", false
	}
	if h.PIDNS == "" || h.PIDNS != self.PIDNS {
		return "", false
	}
	start, ok, err := p.Started(h.PID)
	switch {
	case err != nil:
		return "", false
	case !ok:
		return fmt.Sprintf("its holder %s no longer runs", h.owner()), true
	case h.Start != 0 && start != h.Start:
		return fmt.Sprintf("its holder %s no longer runs (pid %d is now another process's)", h.owner(), h.PID), true
	}
	return "", false
}
