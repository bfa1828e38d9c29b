package main

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/foliodb/folio/internal/node"
)

// syncBuffer collects a node's log lines; safe for its goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// folio serve without an address listens on loopback only, on the API's
// port, and so does not warn: nobody on the network reaches a server that
// has no authentication unless its operator asks for it.
func TestDefaultAddressIsLoopback(t *testing.T) {
	for _, k := range []string{"FOLIO_CONFIG", "FOLIO_ADDR", "FOLIO_DATA_DIR", "FOLIO_SEARCH_DIR", "FOLIO_ENGINE", "FOLIO_GRPC_ADDR", "FOLIO_PPROF_ADDR", "FOLIO_METRICS_ADDR"} {
		t.Setenv(k, "")
	}
	cfg, err := loadConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		t.Fatalf("default address %q: %v", cfg.Addr, err)
	}
	if port != "8081" {
		t.Errorf("default port %s, want 8081", port)
	}
	if host == "" {
		t.Fatalf("the default address %q listens on every interface", cfg.Addr)
	}
	ips, err := net.DefaultResolver.LookupIPAddr(context.Background(), host)
	if err != nil || len(ips) == 0 {
		t.Fatalf("default host %q: %v %v", host, ips, err)
	}
	for _, ip := range ips {
		if !ip.IP.IsLoopback() {
			t.Errorf("default host %q resolves to %s, which is not loopback", host, ip)
		}
	}

	// The node the defaults describe, on a free port of the same host.
	logs := &syncBuffer{}
	cfg.DataDir = filepath.Join(t.TempDir(), "data")
	nc := cfg.Config
	nc.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	nc.Addr = net.JoinHostPort(host, "0")
	n, err := node.Start(context.Background(), nc)
	if err != nil {
		t.Fatal(err)
	}
	addr := n.Addr()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if tcp, ok := addr.(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		t.Errorf("with the default address the server listened on %s", addr)
	}
	if strings.Contains(logs.String(), "beyond loopback") {
		t.Errorf("with the default address the server warned:\n%s", logs)
	}
}
