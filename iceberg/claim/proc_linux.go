package claim

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// linuxProcs reads /proc.
type linuxProcs struct{}

func hostProcs() Procs { return linuxProcs{} }

func (linuxProcs) Self() Process {
	p := Process{Host: hostName(), PID: os.Getpid()}
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		p.BootID = strings.TrimSpace(string(b))
	}
	if ns, err := os.Readlink("/proc/self/ns/pid"); err == nil {
		p.PIDNS = ns
	}
	if _, start, err := procStat("self"); err == nil {
		p.Start = start
	}
	return p
}

func (linuxProcs) Started(pid int) (uint64, bool, error) {
	if pid <= 0 {
		return 0, false, fmt.Errorf("pid %d: not a process", pid)
	}
	// kill(pid, 0) sees every process of the namespace, also where /proc
	// is mounted with hidepid and another user's entries are hidden: ESRCH
	// is the one sure "no such process".
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return 0, false, nil
	}
	state, start, err := procStat(strconv.Itoa(pid))
	if err != nil {
		return 0, false, err
	}
	if state == 'Z' || state == 'X' {
		return 0, false, nil // exited, not yet reaped by its parent
	}
	return start, true, nil
}

func (linuxProcs) Booted() time.Time {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return time.Time{}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "btime "); ok {
			if s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return time.Unix(s, 0)
			}
		}
	}
	return time.Time{}
}

// procStat reads a process's state and start time (fields 3 and 22) from
// /proc/PID/stat. The command name, field 2, is in parentheses and may
// hold spaces and parentheses itself: the fields after it start after
// the last ')'.
func procStat(pid string) (state byte, start uint64, err error) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("/proc/%s/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return 0, 0, fmt.Errorf("/proc/%s/stat: %d fields after the command name, want at least 20", pid, len(f))
	}
	start, err = strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("/proc/%s/stat: start time: %w", pid, err)
	}
	return f[0][0], start, nil
}
