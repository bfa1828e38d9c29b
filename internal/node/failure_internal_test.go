package node

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/tests/backendtest"
)

// A listener that fails stops the node with its error, whichever it is: the
// node cannot serve as configured any more (as etcd's embed.Etcd stops).
func TestFailingListenerStopsWait(t *testing.T) {
	for _, tc := range []struct {
		name     string
		listener func(n *Node) net.Listener
		want     string
	}{
		{"API", func(n *Node) net.Listener { return n.ln }, "the API's listener"},
		{"gRPC's own", func(n *Node) net.Listener { return n.grpcOwn.ln }, "gRPC listener"},
		{"metrics", func(n *Node) net.Listener { return n.metricsLn }, "metrics listener"},
		{"pprof", func(n *Node) net.Listener { return n.pprofLn }, "pprof listener"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := Start(context.Background(), DefaultConfigWith(func(c *Config) {
				c.Store = backendtest.OpenPebble(t)
				c.Addr, c.GRPCAddr, c.MetricsAddr, c.PprofAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
				c.ShutdownTimeout = 5 * time.Second
			}))
			if err != nil {
				t.Fatal(err)
			}
			waited := make(chan error, 1)
			go func() { waited <- n.Wait(context.Background()) }()
			select {
			case err := <-waited:
				t.Fatalf("Wait returned before any failure: %v", err)
			case <-time.After(100 * time.Millisecond):
			}
			tc.listener(n).Close() // what a broken socket does to Accept
			select {
			case err := <-waited:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Wait returned %v, want the failure of the %s", err, tc.want)
				}
			case <-time.After(10 * time.Second):
				n.Close()
				t.Fatal("the node kept running with a failed listener")
			}
		})
	}
}

// A shutdown is no failure: the listeners it closes report nothing.
func TestCloseReportsNoFailure(t *testing.T) {
	n, err := Start(context.Background(), DefaultConfigWith(func(c *Config) {
		c.Store = backendtest.OpenPebble(t)
		c.Addr, c.GRPCAddr, c.MetricsAddr, c.PprofAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := n.Wait(ctx); err != nil {
		t.Fatalf("a shutdown asked for returned %v", err)
	}
	select {
	case err := <-n.Err():
		t.Fatalf("the shutdown reported a failure: %v", err)
	default:
	}
}
