//go:build !linux

package claim

import (
	"errors"
	"os"
	"time"
)

// otherProcs knows this process's host and pid only: without a boot id
// and start time no holder is judged gone (see HolderGone), and a killed
// run's claim lapses with its lease.
type otherProcs struct{}

func hostProcs() Procs { return otherProcs{} }

func (otherProcs) Self() Process { return Process{Host: hostName(), PID: os.Getpid()} }

func (otherProcs) Started(int) (uint64, bool, error) {
	return 0, false, errors.New("process start times are read on Linux only")
}

func (otherProcs) Booted() time.Time { return time.Time{} }
