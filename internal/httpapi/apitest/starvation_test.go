package apitest

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/sqlkv"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/internal/pgtest"
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
	c := startServer(t, openSmallPool(t), node.Config{})
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
