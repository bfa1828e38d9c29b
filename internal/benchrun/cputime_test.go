package benchrun

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"
)

// CPUTime reads a process's CPU from /proc: this test's own, before and
// after it spins.
func TestCPUTime(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	self, err := os.FindProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	p := &Process{cmd: &exec.Cmd{Process: self}}
	before, err := p.CPUTime()
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for start := time.Now(); time.Since(start) < 200*time.Millisecond; {
		x++
	}
	after, err := p.CPUTime()
	if err != nil {
		t.Fatal(err)
	}
	if spent := after - before; spent < 100*time.Millisecond || spent > 10*time.Second {
		t.Fatalf("200 ms of spinning took %v of CPU (%d turns)", spent, x)
	}
}

// WaitIdle tells a busy process from an idle one: this test's own, while
// a goroutine spins and after it stops.
func TestWaitIdle(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	self, err := os.FindProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	p := &Process{cmd: &exec.Cmd{Process: self}}
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
	_, idle, err := p.WaitIdle(context.Background(), 0.2, 200*time.Millisecond, time.Second)
	close(stop)
	<-spun
	if err != nil || idle {
		t.Fatalf("while spinning: idle %v, err %v", idle, err)
	}
	if _, idle, err = p.WaitIdle(context.Background(), 0.2, 200*time.Millisecond, 5*time.Second); err != nil || !idle {
		t.Fatalf("after spinning: idle %v, err %v", idle, err)
	}
}
