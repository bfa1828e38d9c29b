package node_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
)

func TestMain(m *testing.M) { os.Exit(backendtest.Main(m)) }

// logBuffer collects a node's log lines; safe for the node's goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// messages returns the msg of every line logged so far, in order.
func (b *logBuffer) messages() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, line := range strings.Split(b.buf.String(), "\n") {
		if _, rest, ok := strings.Cut(line, "msg="); ok {
			msg := rest
			if strings.HasPrefix(msg, `"`) {
				msg = msg[1 : strings.Index(msg[1:], `"`)+1]
			} else if i := strings.IndexByte(msg, ' '); i >= 0 {
				msg = msg[:i]
			}
			out = append(out, msg)
		}
	}
	return out
}

// lines returns every line logged so far.
func (b *logBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Split(strings.TrimSuffix(b.buf.String(), "\n"), "\n")
}

func (b *logBuffer) has(msg string) bool {
	for _, m := range b.messages() {
		if m == msg {
			return true
		}
	}
	return false
}

func post(t *testing.T, base, path, body string, header ...string) (int, string) {
	t.Helper()
	return postWith(t, http.DefaultClient, base, path, body, header...)
}

// postWith is post through client c (one that trusts a test certificate).
func postWith(t *testing.T, c *http.Client, base, path, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// Shutdown goes in order: the streams end with an error that tells their
// clients to resume, a request in flight finishes (and its write is
// durable), an open interactive transaction is rolled back (its write is
// lost), the log readers and the trimmer stop, and only then does the store
// close.
func TestShutdownOrder(t *testing.T) {
	dir := t.TempDir()
	logs := &logBuffer{}
	cfg := node.DefaultConfigWith(func(nc *node.Config) {
		nc.Store = backendtest.OpenPebbleAt(t, dir)
		nc.Addr = "127.0.0.1:0"
		nc.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
		nc.ChangeLog.Retention = time.Hour
	})
	n, err := node.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + n.Addr().String()
	post(t, base, "/v1/databases/db/create", "")
	if code, body := post(t, base, "/v1/databases/db/collections/items/createOrUpdate",
		`{"schema":{"title":"items","primary_key":["id"],"properties":{"id":{"type":"integer"}}}}`); code != 200 {
		t.Fatalf("create collection: %d %s", code, body)
	}

	// An events stream, open and waiting.
	streamRes, err := http.Post(base+"/v1/databases/db/collections/items/events", "application/json", strings.NewReader(`{}`))
	if err != nil || streamRes.StatusCode != 200 {
		t.Fatalf("open events stream: %v %v", err, streamRes)
	}
	defer streamRes.Body.Close()

	// An interactive transaction with a write, left open.
	code, body := post(t, base, "/v1/databases/db/transactions/begin", "")
	if code != 200 {
		t.Fatalf("begin: %d %s", code, body)
	}
	id := between(body, `"id":"`, `"`)
	origin := between(body, `"origin":"`, `"`)
	if code, body := post(t, base, "/v1/databases/db/collections/items/documents/insert", `{"documents":[{"id":2}]}`,
		"Tigris-Tx-Id", id, "Tigris-Tx-Origin", origin); code != 200 {
		t.Fatalf("insert in the transaction: %d %s", code, body)
	}

	// A request in flight: it asks to continue (Expect: 100-continue), and
	// the server's "100 Continue" shows that its handler is running; the
	// body follows only once the shutdown has begun.
	insert := `{"documents":[{"id":1}]}`
	conn, err := net.Dial("tcp", n.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/databases/db/collections/items/documents/insert HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", len(insert))
	rd := bufio.NewReader(conn)
	if res, err := http.ReadResponse(rd, nil); err != nil || res.StatusCode != http.StatusContinue {
		t.Fatalf("want 100 Continue, got %v, %v", res, err)
	}

	closed := make(chan error, 1)
	go func() { closed <- n.Close() }()
	waitFor(t, func() bool { return logs.has("shutting down: finishing requests in flight") })
	io.WriteString(conn, insert)
	res, err := http.ReadResponse(rd, nil)
	if err != nil {
		logs.mu.Lock()
		defer logs.mu.Unlock()
		t.Fatalf("the request in flight got no answer: %v\nthe node's log:\n%s", err, logs.buf.String())
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Errorf("the request in flight: %d %s, want 200", res.StatusCode, b)
	}

	// The stream may first carry the event of the insert in flight, which
	// commits while the shutdown waits for it; its last line is the end.
	streamRd := bufio.NewReader(streamRes.Body)
	line, _ := streamRd.ReadString('\n')
	if strings.Contains(line, `"op":"insert"`) {
		line, _ = streamRd.ReadString('\n')
	}
	if !strings.Contains(line, `"code":"UNAVAILABLE"`) || !strings.Contains(line, "resume from the position of the last item") {
		t.Errorf("the stream ended with %q, want an UNAVAILABLE error telling the client to resume", line)
	}
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return")
	}

	want := []string{
		"shutting down: finishing requests in flight",
		"shutdown: streams ended, their change-log reader stopped",
		"shutdown: requests drained",
		"shutdown: open transactions rolled back",
		"shutdown: change-log trimmer stopped",
		"shutdown: search indexer stopped",
		"shutdown: store closed",
		"folio stopped",
	}
	var got []string
	for _, m := range logs.messages() {
		if strings.HasPrefix(m, "shut") || m == "folio stopped" {
			got = append(got, m)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("shutdown steps:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	// Once the requests are drained no change-log reader is left but the
	// search indexer's: the hub's stopped with the streams, and each
	// stream's own went with its request.
	for _, line := range logs.lines() {
		if strings.Contains(line, `msg="shutdown: requests drained"`) && !strings.Contains(line, " change_log_readers=0") {
			t.Errorf("change-log readers left open after the requests were drained: %s", line)
		}
	}
	if err := n.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	for _, m := range logs.messages() {
		if strings.Contains(m, "beyond loopback") {
			t.Errorf("a node on 127.0.0.1 warned: %s", m)
		}
	}

	// On the same data: the request in flight was kept, the open
	// transaction was not.
	n2, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Store = backendtest.OpenPebbleAt(t, dir)
		nc.Addr = "127.0.0.1:0"
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer n2.Close()
	_, docs := post(t, "http://"+n2.Addr().String(), "/v1/databases/db/collections/items/documents/read", `{"filter":{}}`)
	if !strings.Contains(docs, `"id":1`) || strings.Contains(docs, `"id":2`) {
		t.Errorf("after the restart the collection holds %s; want document 1 (finished in flight) and not 2 (rolled back)", docs)
	}
}

// A node that cannot listen stops what it had started and closes its store.
func TestStartFailsCleanly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	store := backendtest.OpenPebble(t)
	_, err = node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Store = store
		nc.Addr = ln.Addr().String()
	}))
	if err == nil {
		t.Fatal("Start on a taken address succeeded")
	}
	if _, err := store.Begin(context.Background()); err == nil {
		t.Error("the store is still open after a failed Start")
	}
}

func between(s, from, to string) string {
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, to)
	return v
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A node warns when it listens beyond loopback, where anyone who can reach
// it may use it without authentication, and only then.
func TestListenBeyondLoopbackWarns(t *testing.T) {
	const warning = "listening beyond loopback without authentication: anyone who can reach this address can read and change every database; listen on localhost, or put the server behind an authenticating proxy"
	for _, tc := range []struct {
		addr string
		warn bool
	}{
		{"127.0.0.1:0", false},
		{"localhost:0", false},
		{"0.0.0.0:0", true},
		{":0", true},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			logs := &logBuffer{}
			n, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
				nc.Store = backendtest.OpenPebble(t)
				nc.Addr = tc.addr
				nc.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
			}))
			if err != nil {
				t.Fatal(err)
			}
			n.Close()
			var warned []string
			for _, line := range logs.lines() {
				if strings.Contains(line, "beyond loopback") {
					warned = append(warned, line)
				}
			}
			switch {
			case !tc.warn && len(warned) > 0:
				t.Errorf("listening on %s (%s) warned: %q", tc.addr, n.Addr(), warned)
			case tc.warn && (len(warned) != 1 || !strings.Contains(warned[0], "level=WARN") || !strings.Contains(warned[0], `msg="`+warning+`"`) ||
				!strings.Contains(warned[0], "addr="+n.Addr().String())):
				t.Errorf("listening on %s (%s) logged %q, want one warning naming the address", tc.addr, n.Addr(), warned)
			}
		})
	}
}

// A node whose store fails to open returns the error, and has nothing to
// stop: here a second node on a data directory the first holds.
func TestStartOnADataDirectoryInUse(t *testing.T) {
	dir := t.TempDir()
	first, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
		nc.DataDir = dir
		nc.Addr = "127.0.0.1:0"
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
		nc.DataDir = dir
		nc.Addr = "127.0.0.1:0"
	}))
	if err == nil {
		second.Close()
		t.Fatal("a second node started on a data directory the first holds")
	}
	if !strings.Contains(err.Error(), dir) {
		t.Errorf("the second node failed with %q, which does not name the directory %s", err, dir)
	}
	if code, body := post(t, "http://"+first.Addr().String(), "/v1/databases/db/create", ""); code != 200 {
		t.Errorf("the first node after the second failed: %d %s", code, body)
	}
}
