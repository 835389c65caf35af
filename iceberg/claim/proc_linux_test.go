package claim

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The real probe on Linux: this process is seen running with the start
// time it records; a child that exited, reaped or not, is not.
func TestHostProcs(t *testing.T) {
	p := HostProcs()
	self := p.Self()
	host, _ := os.Hostname()
	if self.Host != host || self.PID != os.Getpid() || len(self.BootID) != 36 || !strings.HasPrefix(self.PIDNS, "pid:[") || self.Start == 0 {
		t.Fatalf("Self = %+v", self)
	}
	if start, ok, err := p.Started(self.PID); err != nil || !ok || start != self.Start {
		t.Errorf("Started(self) = %d, %v, %v; want %d", start, ok, err, self.Start)
	}
	if p.Booted().IsZero() || p.Booted().After(time.Now()) {
		t.Errorf("Booted = %s", p.Booted())
	}
	if _, ok, err := p.Started(0); ok || err == nil {
		t.Error("Started(0): want an error, never a process group")
	}
	// A killed child not yet reaped (a zombie) does not run; nor once
	// reaped.
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if _, ok, err := p.Started(pid); !ok || err != nil {
		t.Fatalf("Started(running child) = %v, %v", ok, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, ok, err := p.Started(pid)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a killed child still runs after 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if st, _, err := procStat(strconv.Itoa(pid)); err != nil || st != 'Z' {
		t.Errorf("the killed child, unreaped: state %c, %v; want a zombie", st, err)
	}
	cmd.Wait()
	if _, ok, err := p.Started(pid); ok || err != nil {
		t.Errorf("Started(reaped child) = %v, %v; want no process", ok, err)
	}
}
