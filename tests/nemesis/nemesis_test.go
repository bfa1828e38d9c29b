package nemesis

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/foliodb/folio/client"
	"github.com/foliodb/folio/tests/history"
	"github.com/foliodb/folio/tests/servetest"
	"github.com/foliodb/folio/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(servetest.Main(m)) }

// The short nemesis run of make test: each setup for a while under every
// fault kind it takes, at least once each (the schedule's first round),
// with no anomaly in either history. A run that failed keeps its
// histories and logs in a directory the test names.
func TestNemesis(t *testing.T) {
	if testing.Short() {
		t.Skip("runs folio clusters under faults for about two and a half minutes")
	}
	bin := servetest.Binary(t)
	for _, s := range []struct {
		setup    string
		duration time.Duration
	}{{SetupPostgres, 70 * time.Second}, {SetupPebble, 30 * time.Second}} {
		t.Run(s.setup, func(t *testing.T) {
			if s.setup == SetupPostgres {
				if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres"); len(m) == 0 {
					testenv.Missing(t, "no PostgreSQL server programs (/usr/lib/postgresql/*/bin)")
				}
			}
			dir := t.TempDir()
			rep, err := Run(t.Context(), Config{Setup: s.setup, Folio: bin, Dir: dir, Duration: s.duration,
				FaultInterval: 2 * time.Second, Logf: t.Logf})
			if err != nil {
				t.Errorf("the run: %v", err)
			}
			t.Log(rep)
			for _, kind := range FaultKinds[s.setup] {
				if rep.Faults[kind] == 0 && err == nil {
					t.Errorf("no %s fault injected", kind)
				}
			}
			if !rep.Valid() {
				t.Errorf("anomalies found:\n%s\n%s", rep.AppendResult, rep.BankResult)
			}
			// A run that did (almost) nothing checks nothing.
			if err == nil && (rep.Append.OK < 100 || rep.Bank.OK < 100) {
				t.Errorf("too few operations succeeded: list-append %v, bank %v", rep.Append, rep.Bank)
			}
			if t.Failed() {
				keep := filepath.Join(os.TempDir(), fmt.Sprintf("folio-nemesis-%s-%d", s.setup, time.Now().Unix()))
				if err := os.Rename(dir, keep); err == nil {
					t.Logf("histories and logs kept in %s", keep)
					os.MkdirAll(dir, 0o755) // for TempDir's cleanup
				}
			}
		})
	}
}

// An error before the commit left the transaction uncommitted; after it,
// only ABORTED says so.
func TestOutcome(t *testing.T) {
	cut := errors.New(`Post "http://127.0.0.1:1/v1/databases/d/transactions/commit": EOF`)
	aborted := fmt.Errorf("transaction on d aborted 1 times by conflicts: %w", &client.Error{Code: client.Aborted})
	for _, c := range []struct {
		name       string
		err        error
		commitSent bool
		want       history.Type
	}{
		{"committed", nil, true, history.OK},
		{"a read cut before the commit", cut, false, history.Fail},
		{"refused by the workload", errRefused, false, history.Fail},
		{"unavailable before the commit", &client.Error{Code: client.Unavailable}, false, history.Fail},
		{"commit aborted", aborted, true, history.Fail},
		{"commit cut", cut, true, history.Info},
		{"commit unavailable", &client.Error{Code: client.Unavailable}, true, history.Info},
		{"commit internal", &client.Error{Code: client.Internal}, true, history.Info},
		{"commit not found", &client.Error{Code: client.NotFound}, true, history.Info},
		{"commit timed out", fmt.Errorf("commit: %w", os.ErrDeadlineExceeded), true, history.Info},
	} {
		if got := outcome(c.err, c.commitSent); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// The proxy relays both ways, and cut resets the connections it carries
// while new ones are taken.
func TestProxyCut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go io.Copy(c, c) // echo
		}
	}()
	p, err := newProxy(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", p.addr())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4)
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
			t.Fatalf("through the proxy: %q, %v", buf, err)
		}
		return c
	}
	c := dial()
	defer c.Close()
	if n := p.cut(); n != 1 {
		t.Errorf("cut %d connections, want 1", n)
	}
	if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a connection cut: read %v, want it reset", err)
	}
	dial().Close()
}

// The finding of the first long run on PostgreSQL (docs/testing.md), cut
// down to its three transactions: op 2 (append to k34) is acknowledged
// before op 3 (a read of k32) begins; op 1 read k34 without op 2's append
// and appended to k32 unseen by op 3, and committed after both. It is
// serializable (3, 1, 2) but not in real-time order: op 1's validation
// did not see op 2's commit, which ended while it ran. The checker must
// go on telling the two apart.
func TestFindingG2RealtimeOnPostgres(t *testing.T) {
	f, err := os.Open("testdata/g2-realtime-postgres.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	events, err := history.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	ops, err := history.Pair(events)
	if err != nil {
		t.Fatal(err)
	}
	if r := history.CheckAppend(ops, history.AppendOptions{}); !r.Valid() {
		t.Errorf("as serializable: %s", r)
	}
	r := history.CheckAppend(ops, history.AppendOptions{RealTime: true})
	if kinds := r.Kinds(); len(kinds) != 1 || kinds[0] != history.G2Realtime {
		t.Errorf("as strictly serializable: %v, want G2-realtime:\n%s", kinds, r)
	}
}
