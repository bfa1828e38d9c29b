package benchrun

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// CPUTime reads a process's CPU from /proc: this test's own, against
// what getrusage says the process spent while it spins (by CPU, not by
// the clock, so that a busy machine does not fail it).
func TestCPUTime(t *testing.T) {
	p := selfProcess(t)
	before, err := p.CPUTime()
	if err != nil {
		t.Fatal(err)
	}
	used0 := rusage(t)
	deadline := time.Now().Add(20 * time.Second)
	for rusage(t)-used0 < 200*time.Millisecond && time.Now().Before(deadline) {
		for range 100_000 {
		}
	}
	after, err := p.CPUTime()
	if err != nil {
		t.Fatal(err)
	}
	spent, used := after-before, rusage(t)-used0
	// /proc counts in ticks of 10 ms, getrusage more finely.
	if spent < used-50*time.Millisecond || spent > used+50*time.Millisecond {
		t.Fatalf("CPUTime went up by %v while getrusage counted %v", spent, used)
	}
}

// rusage is this process's user and system CPU so far, by getrusage.
func rusage(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// WaitIdle tells a busy process from an idle one: this test's own, while
// a goroutine spins and after it stops.
func TestWaitIdle(t *testing.T) {
	p := selfProcess(t)
	stop := make(chan struct{})
	spun := make(chan struct{})
	go func() {
		defer close(spun)
		for {
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	_, idle, err := p.WaitIdle(context.Background(), 0.05, 200*time.Millisecond, time.Second)
	close(stop)
	<-spun
	if err != nil || idle {
		t.Fatalf("while spinning: idle %v, err %v", idle, err)
	}
	if _, idle, err = p.WaitIdle(context.Background(), 0.05, 200*time.Millisecond, 10*time.Second); err != nil || !idle {
		t.Fatalf("after spinning: idle %v, err %v", idle, err)
	}
}

// selfProcess is this test's own process as a Process, on Linux (/proc).
func selfProcess(t *testing.T) *Process {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	self, err := os.FindProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	return &Process{cmd: &exec.Cmd{Process: self}}
}

// TreeCPUTime counts a child's CPU while it runs and after it has been
// waited for: this test's process and a shell it starts that spins.
func TestTreeCPUTime(t *testing.T) {
	self := selfProcess(t).cmd.Process.Pid
	before, err := TreeCPUTime(self)
	if err != nil {
		t.Fatal(err)
	}
	used0 := rusage(t)
	child := exec.Command("sh", "-c", "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	// While it runs, once it has spent 100 ms, the tree holds them.
	var live time.Duration
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		st, err := readStat(child.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		if live = st.own(); live >= 100*time.Millisecond {
			break
		}
	}
	during, err := TreeCPUTime(self)
	if err != nil {
		t.Fatal(err)
	}
	if during-before < live {
		t.Errorf("while the child runs having spent %v, the tree grew by %v", live, during-before)
	}
	if err := child.Wait(); err != nil {
		t.Fatal(err)
	}
	after, err := TreeCPUTime(self)
	if err != nil {
		t.Fatal(err)
	}
	// After the wait, the child's CPU is the parent's reaped CPU.
	want := child.ProcessState.UserTime() + child.ProcessState.SystemTime() + rusage(t) - used0
	if got := after - before; got < want-50*time.Millisecond || got > want+50*time.Millisecond {
		t.Fatalf("the tree grew by %v; the child and this process spent %v", got, want)
	}
}
