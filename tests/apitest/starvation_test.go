package apitest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/sqlkv"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/pgtest"
)

// The PostgreSQL tests here run on a pool of poolSize connections.
const poolSize = 8

func openSmallPool(t *testing.T) kv.Store {
	t.Helper()
	store, err := sqlkv.Open(context.Background(), sqlkv.Options{URL: pgtest.NewDatabase(t), MaxConns: poolSize})
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// wantPrompt makes a plain insert, which must succeed within a few
// seconds whatever else holds the server's connections.
func wantPrompt(t *testing.T, c *client, id int) {
	t.Helper()
	start := time.Now()
	r, err := c.send("POST", docPath("db1", "users", "insert"), `{"documents":[{"id":`+itoa(id)+`,"name":"prompt"}]}`)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("a plain insert after %s: %v", took.Round(time.Millisecond), err)
	}
	if r.status != 200 || took > 5*time.Second {
		t.Fatalf("a plain insert: %s after %s, want 200 within 5s", r, took.Round(time.Millisecond))
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// wantRetryLater checks a 503 UNAVAILABLE with a retry delay whose message
// says what is exhausted.
func wantRetryLater(t *testing.T, r *response, says string) {
	t.Helper()
	msg := wantError(t, r, 503, "UNAVAILABLE", anyMessage)
	if !strings.Contains(msg, says) {
		t.Errorf("message %q does not say %q", msg, says)
	}
	if e, ok := errorOf(t, r); ok && (e.Retry == nil || e.Retry.Delay <= 0) {
		t.Errorf("got %s, want a retry delay", r)
	}
}

// Clients that begin transactions and leave them open take no more than
// their share of the storage connections: begins beyond it answer 503 at
// once, and a plain insert still succeeds promptly.
func TestOpenTransactionsLeaveConnections(t *testing.T) {
	c := startServer(t, openSmallPool(t), node.DefaultConfig())
	c.hc.Timeout = 15 * time.Second // a request that hangs fails the test
	withUsers(t, c)

	const clients = 3 * poolSize
	responses := make([]*response, clients)
	errs := make([]error, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() { responses[i], errs[i] = c.send("POST", dbPath("db1", "transactions/begin"), "") })
	}
	wg.Wait()
	var open []*txClient
	refused := 0
	for i, r := range responses {
		switch {
		case errs[i] != nil:
			t.Errorf("begin %d: %v", i, errs[i])
		case r.status == 200:
			var body struct {
				TxCtx struct{ ID, Origin string } `json:"tx_ctx"`
			}
			if err := json.Unmarshal(r.body, &body); err != nil {
				t.Fatalf("begin: %s", r)
			}
			open = append(open, &txClient{c: c, db: "db1", id: body.TxCtx.ID, origin: body.TxCtx.Origin})
		default:
			refused++
			wantRetryLater(t, r, "too many open transactions")
		}
	}
	defer func() {
		for _, tx := range open {
			tx.rollback(t)
		}
	}()
	t.Logf("%d begins, %d open, %d refused", clients, len(open), refused)
	if len(open) == 0 || len(open) >= poolSize || refused == 0 {
		t.Errorf("%d transactions open on %d connections, %d refused: want fewer than the pool open and the rest refused", len(open), poolSize, refused)
	}
	wantPrompt(t, c, 1)
	wantPrompt(t, c, 2)
	// The open transactions still work.
	for _, tx := range open {
		tx.ok(t, "POST", docPath("db1", "users", "read"), `{"filter":{"id":1}}`)
	}
}

// Clients that start a large read and never consume it hold no more than
// the reads' share of the storage connections: reads beyond it answer 503
// after a short wait instead of hanging, and a plain insert still succeeds
// promptly.
func TestStalledReadsLeaveConnections(t *testing.T) {
	c := startServer(t, openSmallPool(t), node.DefaultConfig())
	c.hc.Timeout = 15 * time.Second // a request that hangs fails the test
	withUsers(t, c)
	// More than the server's send buffer and a client's receive buffer
	// hold, so that a client that does not read stalls its read midway.
	const docSize = 4 << 10
	n := max(2000, 3*sendBufferMax()/docSize)
	pad := strings.Repeat("x", docSize)
	for i := 0; i < n; i += 200 {
		var docs []string
		for j := i; j < min(i+200, n); j++ {
			docs = append(docs, fmt.Sprintf(`{"id":%d,"name":"%s"}`, 1000+j, pad))
		}
		c.insert(t, "db1", "users", docs...)
	}

	type outcome struct {
		res *http.Response
		err error
	}
	readers := poolSize
	outcomes := make(chan outcome, readers)
	ctx, stopReaders := context.WithCancel(context.Background())
	defer stopReaders() // closes the stalled connections: their reads end
	for range readers {
		go func() {
			res, err := startRead(ctx, c.base+docPath("db1", "users", "read"), `{"filter":{}}`, 4096)
			outcomes <- outcome{res, err}
		}()
	}
	stalled, refused := 0, 0
	timeout := time.After(15 * time.Second)
	for range readers {
		select {
		case o := <-outcomes:
			switch {
			case o.err != nil:
				t.Errorf("read: %v", o.err)
			case o.res.StatusCode == 200:
				stalled++ // and its body is never read
			default:
				b, err := io.ReadAll(o.res.Body)
				o.res.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				refused++
				wantRetryLater(t, &response{status: o.res.StatusCode, header: o.res.Header, body: b}, "too many reads")
			}
		case <-timeout:
			t.Fatalf("after 15s, %d reads had started and %d been refused; the others hang", stalled, refused)
		}
	}
	t.Logf("%d reads, %d stalled, %d refused", readers, stalled, refused)
	if stalled == 0 || stalled >= poolSize || refused == 0 {
		t.Errorf("%d reads stalled on %d connections, %d refused: want fewer than the pool stalled and the rest refused", stalled, poolSize, refused)
	}
	wantPrompt(t, c, 1)
	wantRetryLater(t, c.do(t, "POST", docPath("db1", "users", "read"), `{"filter":{"id":1}}`), "too many reads")
	// A read in an interactive transaction uses the connection the
	// transaction holds, and needs no share of the reads.
	tx := c.begin(t, "db1")
	if got := tx.docs(t, "users", `{"id":1}`); len(got) != 1 {
		t.Errorf("read in a transaction: %q", got)
	}
	tx.rollback(t)

	stopReaders()
	waitFor(t, 10*time.Second, "a read once the stalled ones are gone", func() bool {
		return c.do(t, "POST", docPath("db1", "users", "read"), `{"filter":{"id":1}}`).status == 200
	})
}

// startRead makes a read request on a connection of its own whose receive
// buffer is fixed at rcvbuf bytes, and returns once the response's header
// is there; the caller reads the body, or does not. ctx ends the request.
func startRead(ctx context.Context, url, body string, rcvbuf int) (*http.Response, error) {
	dialer := &net.Dialer{Control: func(_, _ string, conn syscall.RawConn) error {
		var err error
		conn.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf) })
		return err
	}}
	hc := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true}}
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return hc.Do(req)
}
