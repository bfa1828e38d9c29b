package cluster

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/backendtest"
)

func TestMain(m *testing.M) { os.Exit(backendtest.Main(m)) }

// testLease is long enough that a renewal is not late on a loaded machine
// (at 300 ms, a CI run at a load average of 20 on two cores saw a live
// member's lease lapse between its Join and the next Members).
const testLease = time.Second

func TestRegistry(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		store := b.Open(t)
		reg := func() *Registry { return New(store, Options{Lease: testLease}) }

		a := reg()
		if err := a.Join(ctx, "n1", "10.0.0.1:8081", false); err != nil {
			t.Fatal(err)
		}
		m, err := a.Locate(ctx, "n1")
		if err != nil || m.Addr != "10.0.0.1:8081" || m.Instance != a.Self().Instance {
			t.Fatalf("locate n1: %+v, %v", m, err)
		}
		if _, err := a.Locate(ctx, "nobody"); !errors.Is(err, ErrGone) {
			t.Fatalf("locate an unknown node: %v, want ErrGone", err)
		}

		// A second node with a taken id is refused, after waiting a lease
		// for it to lapse: the first renews it.
		start := time.Now()
		err = reg().Join(ctx, "n1", "10.0.0.2:8081", false)
		if err == nil || !strings.Contains(err.Error(), "'n1' is in use") || !strings.Contains(err.Error(), "10.0.0.1:8081") {
			t.Fatalf("a second n1: %v", err)
		}
		if waited := time.Since(start); waited > 4*testLease {
			t.Errorf("the refusal took %v, more than a few leases", waited)
		}
		// The lease outlives many of its terms: the renewals keep it.
		time.Sleep(3 * testLease)
		if _, err := a.Locate(ctx, "n1"); err != nil {
			t.Fatalf("n1 lapsed while its node ran: %v", err)
		}

		// Another id is free.
		c := reg()
		if err := c.Join(ctx, "n2", "10.0.0.3:8081", true); err != nil {
			t.Fatal(err)
		}
		ms, err := c.Members(ctx)
		if err != nil || len(ms) != 2 || ms[0].ID != "n1" || ms[1].ID != "n2" || !ms[1].TLS {
			t.Fatalf("members %+v, %v", ms, err)
		}

		// A node that leaves is gone at once, and its id free.
		if err := a.Leave(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Locate(ctx, "n1"); !errors.Is(err, ErrGone) {
			t.Fatalf("locate a node that left: %v", err)
		}
		d := reg()
		if err := d.Join(ctx, "n1", "10.0.0.4:8081", false); err != nil {
			t.Fatalf("join with the id of a node that left: %v", err)
		}

		// A node that dies (stops renewing without leaving) is gone once
		// its lease runs out, and a new node takes its id then.
		close(c.stop)
		<-c.done
		time.Sleep(testLease + 50*time.Millisecond)
		if _, err := d.Locate(ctx, "n2"); !errors.Is(err, ErrGone) {
			t.Fatalf("locate a node whose lease ran out: %v", err)
		}
		e := reg()
		if err := e.Join(ctx, "n2", "10.0.0.5:8081", false); err != nil {
			t.Fatalf("join with a dead node's id: %v", err)
		}
		if m, err := d.Locate(ctx, "n2"); err != nil || m.Addr != "10.0.0.5:8081" {
			t.Fatalf("n2 after the takeover: %+v, %v", m, err)
		}
		for _, r := range []*Registry{d, e} {
			if err := r.Leave(ctx); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// A node that restarts after dying finds its own old registration, whose
// lease still runs: it waits for it rather than refusing.
func TestRejoinAfterCrash(t *testing.T) {
	ctx := context.Background()
	store := backendtest.OpenPebble(t)
	old := New(store, Options{Lease: testLease})
	if err := old.Join(ctx, "n1", "127.0.0.1:1", false); err != nil {
		t.Fatal(err)
	}
	close(old.stop) // dies: no more renewals, no Leave
	<-old.done
	start := time.Now()
	if err := New(store, Options{Lease: testLease}).Join(ctx, "n1", "127.0.0.1:1", false); err != nil {
		t.Fatalf("rejoin: %v", err)
	}
	if waited := time.Since(start); waited > 2*testLease {
		t.Errorf("rejoin waited %v, more than the lease", waited)
	}
}

// countingStore counts the transactions begun on it.
type countingStore struct {
	kv.Store
	begun atomic.Int64
}

func (s *countingStore) Begin(ctx context.Context) (kv.Tx, error) {
	s.begun.Add(1)
	return s.Store.Begin(ctx)
}

// Locate answers from memory for a while: forwarding asks it on every
// request of a transaction held elsewhere, and each store read would be a
// round trip on PostgreSQL. An answer never outlives the lease it read.
func TestLocateReusesAnswers(t *testing.T) {
	ctx := context.Background()
	store := &countingStore{Store: backendtest.OpenPebble(t)}
	a := New(store, Options{Lease: 10 * time.Second})
	if err := a.Join(ctx, "n1", "10.0.0.1:8081", false); err != nil {
		t.Fatal(err)
	}
	defer a.Leave(ctx)
	b := New(store, Options{Lease: 10 * time.Second})
	before := store.begun.Load()
	for range 100 {
		if m, err := b.Locate(ctx, "n1"); err != nil || m.Addr != "10.0.0.1:8081" {
			t.Fatalf("locate n1: %+v, %v", m, err)
		}
	}
	if n := store.begun.Load() - before; n > 2 {
		t.Errorf("100 lookups within a second read the store %d times, want 1", n)
	}
	// A node not found is asked again each time (it may be joining).
	before = store.begun.Load()
	for range 3 {
		if _, err := b.Locate(ctx, "n2"); !errors.Is(err, ErrGone) {
			t.Fatal(err)
		}
	}
	if n := store.begun.Load() - before; n < 3 {
		t.Errorf("3 lookups of an unknown node read the store %d times, want 3", n)
	}
	time.Sleep(locateTTL + 100*time.Millisecond)
	before = store.begun.Load()
	if _, err := b.Locate(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	if store.begun.Load() == before {
		t.Error("an answer older than a second was reused")
	}
}
