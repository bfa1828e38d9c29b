package apitest

import (
	"context"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv/sqlkv"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/pgtest"
)

// While PostgreSQL cannot be reached, requests answer 503 UNAVAILABLE with
// a retry delay and a message that names no host, port, user or database,
// and health answers 503; once it is back, both work again.
func TestStorageUnreachable(t *testing.T) {
	dbURL, err := url.Parse(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, dbURL.Host)
	viaProxy := *dbURL
	viaProxy.Host = p.addr
	store, err := sqlkv.Open(context.Background(), sqlkv.Options{URL: viaProxy.String()})
	if err != nil {
		t.Fatal(err)
	}
	c := startServer(t, store, node.DefaultConfig())
	withUsers(t, c)
	c.insert(t, "db1", "users", `{"id":1,"name":"a"}`)
	wantHealthy(t, c)

	_, proxyPort, _ := net.SplitHostPort(p.addr)
	secrets := []string{dbURL.Hostname(), dbURL.Port(), proxyPort, dbURL.User.Username(), strings.TrimPrefix(dbURL.Path, "/")}
	wantUnavailable := func(t *testing.T, r *response) {
		t.Helper()
		msg := wantError(t, r, 503, "UNAVAILABLE", anyMessage)
		for _, s := range secrets {
			if strings.Contains(msg, s) {
				t.Errorf("message %q gives away %q", msg, s)
			}
		}
		if e, ok := errorOf(t, r); ok && (e.Retry == nil || e.Retry.Delay <= 0) {
			t.Errorf("got %s, want a retry delay", r)
		}
	}

	p.cut()
	wantUnavailable(t, c.do(t, "POST", docPath("db1", "users", "insert"), `{"documents":[{"id":2,"name":"b"}]}`))
	wantUnavailable(t, c.do(t, "POST", docPath("db1", "users", "read"), `{"filter":{}}`))
	// Beginning a transaction needs no storage (its snapshot is taken by
	// its first read, as FoundationDB takes its read version): the first
	// read is what fails.
	tx := c.begin(t, "db1")
	wantUnavailable(t, tx.do(t, "POST", docPath("db1", "users", "read"), `{"filter":{}}`))
	// Health answers from a probe at most a second old.
	var health *response
	waitFor(t, 10*time.Second, "health to answer 503", func() bool {
		health = c.do(t, "GET", "/v1/health", "")
		return health.status == 503
	})
	wantUnavailable(t, health)

	p.restore(t)
	// The pool finds its broken connections as it uses them, and dials
	// new ones.
	waitFor(t, 20*time.Second, "an insert to succeed again", func() bool {
		return c.do(t, "POST", docPath("db1", "users", "insert"), `{"documents":[{"id":2,"name":"b"}]}`).status == 200
	})
	waitFor(t, 10*time.Second, "health to answer 200", func() bool {
		return c.do(t, "GET", "/v1/health", "").status == 200
	})
	wantHealthy(t, c)
	equalStrings(t, "documents", c.all(t, "db1", "users"), []string{`{"id":1,"name":"a"}`, `{"id":2,"name":"b"}`})
}

func wantHealthy(t *testing.T, c *client) {
	t.Helper()
	if r := c.ok(t, "GET", "/v1/health", ""); string(r.body) != `{"response":"OK"}` {
		t.Errorf("health: %s", r)
	}
}

// waitFor polls cond until it holds, failing the test after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// proxy forwards TCP connections to target. Cutting it closes its listener
// and every connection it forwards, as if the server had gone away;
// restoring it listens again on the same address.
type proxy struct {
	target, addr string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{target: target, addr: ln.Addr().String(), conns: map[net.Conn]bool{}}
	p.serve(ln)
	t.Cleanup(func() {
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.DialTimeout("tcp", p.target, 5*time.Second)
			if err != nil {
				in.Close()
				continue
			}
			if !p.track(in, out) {
				continue
			}
			pipe := func(dst, src net.Conn) {
				io.Copy(dst, src)
				dst.Close()
				src.Close()
			}
			p.wg.Go(func() { pipe(out, in) })
			p.wg.Go(func() { pipe(in, out) })
		}
	})
}

// track registers a forwarded pair, unless the proxy was cut meanwhile.
func (p *proxy) track(in, out net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		in.Close()
		out.Close()
		return false
	}
	p.conns[in], p.conns[out] = true, true
	return true
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *proxy) restore(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", p.addr, err)
	}
	p.serve(ln)
}
