package client_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/client"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/pebblekv"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
)

// serverURL is the server the examples talk to: a node on an embedded
// store that TestMain starts for the test binary. In a program it would be
// "http://localhost:8081". grpcURL is the same node's, for gRPC.
var serverURL, grpcURL string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "folio-client-examples")
	if err != nil {
		panic(err)
	}
	store, err := pebblekv.Open(pebblekv.Options{Dir: dir})
	if err != nil {
		panic(err)
	}
	n, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Store = store
		nc.Addr = "127.0.0.1:0"
		nc.ShutdownTimeout = 5 * time.Second
	}))
	if err != nil {
		panic(err)
	}
	serverURL = "http://" + n.Addr().String()
	grpcURL = "grpc://" + n.Addr().String()
	code := backendtest.Main(m)
	if err := n.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close the examples' node:", err)
		code = 1
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// eachBackend runs fn on a fresh server per backend and transport, with
// a client of it.
func eachBackend(t *testing.T, fn func(t *testing.T, c *client.Client)) {
	t.Helper()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		eachTransport(t, func(t *testing.T, scheme string) {
			n := startNode(t, b.Open(t), node.DefaultConfigWith(func(nc *node.Config) {
				nc.Addr = "127.0.0.1:0"
			}))
			t.Cleanup(func() { n.Close() })
			fn(t, open(t, scheme+"://"+n.Addr().String(), client.Options{}))
		})
	})
}

// eachTransport runs fn in a subtest per protocol the client speaks, with
// the scheme of its URLs: "http" and "grpc".
func eachTransport(t *testing.T, fn func(t *testing.T, scheme string)) {
	t.Helper()
	for _, scheme := range []string{"http", "grpc"} {
		t.Run(scheme, func(t *testing.T) {
			t.Parallel()
			fn(t, scheme)
		})
	}
}

// overHTTP tells whether c speaks HTTP (else gRPC).
func overHTTP(c *client.Client) bool { return strings.HasPrefix(c.URL(), "http") }

func startNode(t *testing.T, store kv.Store, cfg node.Config) *node.Node {
	t.Helper()
	cfg.Store = store
	cfg.ShutdownTimeout = 5 * time.Second
	n, err := node.Start(context.Background(), cfg)
	if err != nil {
		store.Close()
		t.Fatalf("start a node: %v", err)
	}
	return n
}

func open(t *testing.T, url string, opts client.Options) *client.Client {
	t.Helper()
	c, err := client.Open(url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// must fails the test on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wantCode fails the test unless err is an API error with the code.
func wantCode(t *testing.T, err error, code client.Code) {
	t.Helper()
	if !client.IsCode(err, code) {
		t.Fatalf("got error %v, want code %s", err, code)
	}
}
