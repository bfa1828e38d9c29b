package main

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/loadgen"
)

// fakeServer is a driver whose server spends a fixed CPU per read, and a
// second on its first trim (the deletes of what an earlier run inserted;
// a later trim finds nothing, as the real ones do).
type fakeServer struct {
	loadgen.Driver              // nil: the test's workload calls only what is below
	cpu            atomic.Int64 // µs
	trimmed        atomic.Bool
}

func (f *fakeServer) Name() string { return "fake" }

func (f *fakeServer) Trim(ctx context.Context, from int64) error {
	if !f.trimmed.Swap(true) {
		f.cpu.Add(time.Second.Microseconds())
	}
	return nil
}

func (f *fakeServer) Read(ctx context.Context, id int64) error {
	f.cpu.Add(10)
	return nil
}

func (f *fakeServer) serverCPU() (time.Duration, error) {
	return time.Duration(f.cpu.Load()) * time.Microsecond, nil
}

// A run charges its workload with what its operations cost the server,
// not with the trim before it.
func TestRunChargesItsOwnCPU(t *testing.T) {
	f := &fakeServer{}
	s := &side{driver: f, results: map[string]*loadgen.Result{}, serverCPU: f.serverCPU, cpu: map[string]*cpuUse{}}
	c, _ := loadgen.LookupWorkload("C")
	cfg := config{clients: 2, duration: 100 * time.Millisecond, seed: 1}
	if err := s.run(context.Background(), cfg, c, loadgen.Dataset{Docs: 1000, Seed: 1}, []*side{s}); err != nil {
		t.Fatal(err)
	}
	u := s.cpu["C"]
	if u == nil || u.ops == 0 {
		t.Fatalf("no operations counted: %+v", u)
	}
	if want := time.Duration(u.ops) * 10 * time.Microsecond; u.server != want || u.after != 0 {
		t.Errorf("server CPU %v (after %v) for %d reads of 10µs, want %v (after 0)", u.server, u.after, u.ops, want)
	}
	if n := s.results["C"].Total().Hist.Count(); n != u.ops {
		t.Errorf("%d operations in the result, %d in the CPU", n, u.ops)
	}
}
