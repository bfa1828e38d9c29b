package apitest

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/node"
)

// txClient sends requests inside one interactive transaction.
type txClient struct {
	c          *client
	db         string
	id, origin string
}

// begin starts a transaction on db.
func (c *client) begin(t testing.TB, db string) *txClient {
	t.Helper()
	r := c.ok(t, "POST", dbPath(db, "transactions/begin"), "")
	var body struct {
		TxCtx struct {
			ID     string `json:"id"`
			Origin string `json:"origin"`
		} `json:"tx_ctx"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil || body.TxCtx.ID == "" || body.TxCtx.Origin == "" {
		t.Fatalf("begin: %s (%v)", r, err)
	}
	return &txClient{c: c, db: db, id: body.TxCtx.ID, origin: body.TxCtx.Origin}
}

func (tc *txClient) send(method, path, body string) (*response, error) {
	var rd io.Reader = http.NoBody
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, tc.c.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Tigris-Tx-Id", tc.id)
	req.Header.Set("Tigris-Tx-Origin", tc.origin)
	return tc.c.roundTrip(req) // with the client's token, if it has one
}

func (tc *txClient) do(t testing.TB, method, path, body string) *response {
	t.Helper()
	r, err := tc.send(method, path, body)
	if err != nil {
		t.Fatalf("%s %s in tx: %v", method, path, err)
	}
	return r
}

func (tc *txClient) ok(t testing.TB, method, path, body string) *response {
	t.Helper()
	r := tc.do(t, method, path, body)
	if r.status != http.StatusOK {
		t.Fatalf("%s %s %s in tx: got %s, want 200", method, path, body, r)
	}
	return r
}

func (tc *txClient) docs(t testing.TB, coll, filter string) []string {
	t.Helper()
	r := tc.ok(t, "POST", docPath(tc.db, coll, "read"), `{"filter":`+filter+`}`)
	var out []string
	for _, it := range parseStream(t, r) {
		out = append(out, string(it.data))
	}
	return out
}

func (tc *txClient) commit(t testing.TB) *response {
	t.Helper()
	return tc.do(t, "POST", dbPath(tc.db, "transactions/commit"), "")
}

func (tc *txClient) rollback(t testing.TB) *response {
	t.Helper()
	return tc.do(t, "POST", dbPath(tc.db, "transactions/rollback"), "")
}

const accountsSchema = `{"title":"accounts","primary_key":["id"],"properties":{"id":{"type":"integer"},"owner":{"type":"string"},"balance":{"type":"integer"}}}`

func setupAccounts(t *testing.T, c *client, n int, balance int) {
	t.Helper()
	c.createDB(t, "bank")
	c.createColl(t, "bank", "accounts", accountsSchema)
	var docs []string
	for i := 0; i < n; i++ {
		docs = append(docs, fmt.Sprintf(`{"id":%d,"owner":"Owner%d","balance":%d}`, i, i, balance))
	}
	c.insert(t, "bank", "accounts", docs...)
}

func TestTransactionCommitAndIsolation(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		setupAccounts(t, c, 2, 100)
		before := c.all(t, "bank", "accounts")
		tx := c.begin(t, "bank")
		tx.ok(t, "POST", docPath("bank", "accounts", "insert"), `{"documents":[{"id":7,"owner":"Gus","balance":5}]}`)
		// The transaction reads its own write, through a non-key filter too.
		if got := tx.docs(t, "accounts", `{"owner":"gus"}`); len(got) != 0 {
			t.Fatalf("case-sensitive filter matched %v", got)
		}
		if got := tx.docs(t, "accounts", `{"balance":{"$lt":10}}`); len(got) != 1 || !strings.Contains(got[0], `"id":7`) {
			t.Fatalf("own insert through a range filter: %v", got)
		}
		// An update that matches the transaction's own insert.
		r := tx.ok(t, "PUT", docPath("bank", "accounts", "update"), `{"filter":{"owner":"Gus"},"fields":{"$set":{"balance":6}}}`)
		if !strings.Contains(string(r.body), `"modified_count":1`) {
			t.Fatalf("update of own insert: %s", r)
		}
		tx.ok(t, "DELETE", docPath("bank", "accounts", "delete"), `{"filter":{"id":0}}`)
		// Nobody else sees any of it before commit.
		if got := c.all(t, "bank", "accounts"); fmt.Sprint(got) != fmt.Sprint(before) {
			t.Fatalf("outside the transaction before commit: %v, want %v", got, before)
		}
		if r := tx.commit(t); r.status != http.StatusOK {
			t.Fatalf("commit: %s", r)
		}
		got := c.all(t, "bank", "accounts")
		if len(got) != 2 || !strings.Contains(got[0], `"id":1`) || !strings.Contains(got[1], `{"id":7,"owner":"Gus","balance":6}`) {
			t.Fatalf("after commit: %v", got)
		}
	})
}

func TestTransactionDDL(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "shop")
		tx := c.begin(t, "shop")
		tx.ok(t, "POST", collPath("shop", "items", "createOrUpdate"), `{"schema":{"title":"items","properties":{"id":{"type":"integer"},"name":{"type":"string"}},"primary_key":["id"]}}`)
		tx.ok(t, "POST", docPath("shop", "items", "insert"), `{"documents":[{"id":1,"name":"pen"}]}`)
		if r := tx.ok(t, "POST", dbPath("shop", "collections/list"), ""); !strings.Contains(string(r.body), `"items"`) {
			t.Fatalf("list in the transaction: %s", r)
		}
		if r := c.ok(t, "POST", dbPath("shop", "collections/list"), ""); strings.Contains(string(r.body), `"items"`) {
			t.Fatalf("list outside before commit: %s", r)
		}
		wantError(t, c.do(t, "POST", docPath("shop", "items", "read"), `{"filter":{}}`), 404, "NOT_FOUND", "collection doesn't exist 'items'")
		if r := tx.commit(t); r.status != http.StatusOK {
			t.Fatalf("commit: %s", r)
		}
		if got := c.all(t, "shop", "items"); len(got) != 1 {
			t.Fatalf("after commit: %v", got)
		}
	})
}

func TestTransactionRollbackAndEnded(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		setupAccounts(t, c, 1, 100)
		before := c.all(t, "bank", "accounts")
		tx := c.begin(t, "bank")
		tx.ok(t, "PUT", docPath("bank", "accounts", "update"), `{"filter":{"id":0},"fields":{"$set":{"balance":1}}}`)
		tx.ok(t, "POST", docPath("bank", "accounts", "insert"), `{"documents":[{"id":9,"owner":"x","balance":1}]}`)
		if r := tx.rollback(t); r.status != http.StatusOK {
			t.Fatalf("rollback: %s", r)
		}
		if got := c.all(t, "bank", "accounts"); fmt.Sprint(got) != fmt.Sprint(before) {
			t.Fatalf("rollback kept writes: %v", got)
		}
		// The transaction is gone: data requests, commit and rollback say so.
		wantError(t, tx.do(t, "POST", docPath("bank", "accounts", "read"), `{"filter":{}}`), 500, "INTERNAL", "session is gone")
		wantError(t, tx.commit(t), 404, "NOT_FOUND", "session not found")
		wantError(t, tx.rollback(t), 404, "NOT_FOUND", "session not found")

		committed := c.begin(t, "bank")
		if r := committed.commit(t); r.status != http.StatusOK {
			t.Fatalf("empty commit: %s", r)
		}
		wantError(t, committed.do(t, "POST", docPath("bank", "accounts", "insert"), `{"documents":[{"id":3,"owner":"y","balance":1}]}`), 500, "INTERNAL", "session is gone")
		wantError(t, committed.rollback(t), 404, "NOT_FOUND", "session not found")
		unknown := &txClient{c: c, db: "bank", id: "some id", origin: committed.origin}
		wantError(t, unknown.do(t, "POST", docPath("bank", "accounts", "read"), `{"filter":{}}`), 500, "INTERNAL", "session is gone")
		if got := c.all(t, "bank", "accounts"); fmt.Sprint(got) != fmt.Sprint(before) {
			t.Fatalf("requests on ended transactions wrote: %v", got)
		}
	})
}

func TestTransactionRules(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		setupAccounts(t, c, 1, 100)
		c.createDB(t, "other")

		// Begin sets the cookie clients use for stickiness.
		r := c.ok(t, "POST", dbPath("bank", "transactions/begin"), "")
		if !strings.Contains(r.header.Get("Set-Cookie"), "Tigris-Tx-Id=") {
			t.Fatalf("begin set no cookie: %v", r.header)
		}
		wantError(t, c.do(t, "POST", dbPath("bad.name", "transactions/begin"), ""), 400, "INVALID_ARGUMENT", "invalid database name 'bad.name': "+nameRule)

		// A transaction belongs to its database.
		tx := c.begin(t, "bank")
		wantError(t, tx.do(t, "POST", dbPath("other", "collections/list"), ""), 400, "INVALID_ARGUMENT",
			fmt.Sprintf("transaction %s belongs to database 'bank', not 'other'", tx.id))

		// Without an origin a request is not in the transaction (as in the original).
		noOrigin := &txClient{c: c, db: "bank", id: tx.id, origin: ""}
		noOrigin.ok(t, "POST", docPath("bank", "accounts", "insert"), `{"documents":[{"id":5,"owner":"auto","balance":0}]}`)
		if got := c.docs(t, "bank", "accounts", `{"filter":{"id":5}}`); len(got) != 1 {
			t.Fatalf("request without origin should autocommit: %v", got)
		}
		// A different origin is another node's transaction. On PostgreSQL,
		// where nodes register, no node of that id is live: its
		// transactions are gone (the original's answer). The embedded
		// store has one node: the request went to the wrong server.
		elsewhere := &txClient{c: c, db: "bank", id: tx.id, origin: "another-node"}
		r = elsewhere.do(t, "POST", docPath("bank", "accounts", "read"), `{"filter":{}}`)
		if strings.HasSuffix(t.Name(), "/postgres") {
			wantError(t, r, 500, "INTERNAL", "session is gone")
		} else if r.status != http.StatusPreconditionFailed {
			t.Fatalf("foreign origin: %s", r)
		}

		// A write refused before it wrote anything leaves the transaction
		// as it was.
		wantError(t, tx.do(t, "POST", docPath("bank", "nope", "insert"), `{"documents":[{"id":1}]}`), 404, "NOT_FOUND", "collection doesn't exist 'nope'")
		r = tx.do(t, "POST", docPath("bank", "accounts", "insert"), `{"documents":[{"id":19,"owner":7}]}`)
		if r.status != 400 {
			t.Fatalf("invalid document: %s", r)
		}
		ok := c.begin(t, "bank")
		wantError(t, ok.do(t, "POST", docPath("bank", "nope", "insert"), `{"documents":[{"id":1}]}`), 404, "NOT_FOUND", "collection doesn't exist 'nope'")
		ok.ok(t, "POST", docPath("bank", "accounts", "insert"), `{"documents":[{"id":30,"owner":"after a refusal","balance":1}]}`)
		if r := ok.commit(t); r.status != 200 {
			t.Fatalf("commit after a refused request that wrote nothing: %s", r)
		}
		if got := c.docs(t, "bank", "accounts", `{"filter":{"id":30}}`); len(got) != 1 {
			t.Fatalf("the write after a refusal did not land: %v", got)
		}
		// A write that fails midway leaves the transaction able only to
		// roll back, and nothing of it lands.
		tx.ok(t, "POST", docPath("bank", "accounts", "insert"), `{"documents":[{"id":20,"owner":"a","balance":1}]}`)
		r = tx.do(t, "POST", docPath("bank", "accounts", "insert"), `{"documents":[{"id":21,"owner":"b","balance":1},{"id":0,"owner":"dup","balance":1}]}`)
		wantError(t, r, 409, "ALREADY_EXISTS", `duplicate key value, violates key constraint: key {"id":0} exists already`)
		if r := tx.commit(t); r.status != http.StatusConflict || !strings.Contains(string(r.body), `"ABORTED"`) {
			t.Fatalf("commit after a failed write: %s", r)
		}
		if got := c.docs(t, "bank", "accounts", `{"filter":{"$and":[{"id":{"$gte":20}},{"id":{"$lt":30}}]}}`); len(got) != 0 {
			t.Fatalf("a failed transaction's writes landed: %v", got)
		}
	})
}

func TestTransactionExpiry(t *testing.T) {
	cfg := node.DefaultConfigWith(func(nc *node.Config) {
		nc.Sessions.IdleTimeout = 150 * time.Millisecond
		nc.Sessions.MaxLifetime = time.Minute
	})
	eachBackendWith(t, cfg, func(t *testing.T, c *client) {
		setupAccounts(t, c, 1, 100)
		tx := c.begin(t, "bank")
		tx.ok(t, "POST", docPath("bank", "accounts", "insert"), `{"documents":[{"id":9,"owner":"late","balance":1}]}`)
		deadline := time.Now().Add(10 * time.Second)
		for {
			r := tx.do(t, "POST", docPath("bank", "accounts", "read"), `{"filter":{"id":1}}`)
			if r.status == 500 {
				wantError(t, r, 500, "INTERNAL", "session is gone")
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("an idle transaction was never reclaimed")
			}
			// Each request counts as use: wait past the idle timeout.
			time.Sleep(300 * time.Millisecond)
		}
		wantError(t, tx.commit(t), 404, "NOT_FOUND", "session not found")
		if got := c.docs(t, "bank", "accounts", `{"filter":{"id":9}}`); len(got) != 0 {
			t.Fatalf("an expired transaction's write landed: %v", got)
		}
	})
	cfg = node.DefaultConfigWith(func(nc *node.Config) {
		nc.Sessions.IdleTimeout = time.Minute
		nc.Sessions.MaxLifetime = 300 * time.Millisecond
	})
	eachBackendWith(t, cfg, func(t *testing.T, c *client) {
		setupAccounts(t, c, 1, 100)
		tx := c.begin(t, "bank")
		deadline := time.Now().Add(10 * time.Second)
		for tx.do(t, "POST", docPath("bank", "accounts", "read"), `{"filter":{"id":0}}`).status == 200 {
			if time.Now().After(deadline) {
				t.Fatal("a transaction outlived its maximum lifetime")
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

func TestTransactionConcurrentRequests(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		setupAccounts(t, c, 1, 100)
		tx := c.begin(t, "bank")
		var wg sync.WaitGroup
		errs := make(chan string, 40)
		for i := 0; i < 40; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				r, err := tx.send("POST", docPath("bank", "accounts", "insert"), fmt.Sprintf(`{"documents":[{"id":%d,"owner":"c","balance":1}]}`, 100+i))
				if err != nil || r.status != 200 {
					errs <- fmt.Sprint(r, err)
				}
			}(i)
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Fatal("concurrent request in one transaction:", e)
		}
		if r := tx.commit(t); r.status != 200 {
			t.Fatalf("commit: %s", r)
		}
		if got := c.docs(t, "bank", "accounts", `{"filter":{"owner":"c"}}`); len(got) != 40 {
			t.Fatalf("%d of 40 concurrent inserts landed", len(got))
		}
	})
}

func TestTransactionConflict(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		setupAccounts(t, c, 1, 100)
		a, b := c.begin(t, "bank"), c.begin(t, "bank")
		a.docs(t, "accounts", `{"id":0}`)
		b.docs(t, "accounts", `{"id":0}`)
		a.ok(t, "PUT", docPath("bank", "accounts", "update"), `{"filter":{"id":0},"fields":{"$set":{"balance":50}}}`)
		b.ok(t, "PUT", docPath("bank", "accounts", "update"), `{"filter":{"id":0},"fields":{"$set":{"balance":70}}}`)
		if r := a.commit(t); r.status != 200 {
			t.Fatalf("first commit: %s", r)
		}
		r := b.commit(t)
		if r.status != http.StatusConflict || !strings.Contains(string(r.body), `"code":"ABORTED"`) {
			t.Fatalf("conflicting commit: %s", r)
		}
		if got := c.all(t, "bank", "accounts"); len(got) != 1 || !strings.Contains(got[0], `"balance":50`) {
			t.Fatalf("after the conflict: %v", got)
		}
	})
}

// TestTransactionWriteSkew: two transactions each read two documents and
// update the other one; serializable isolation lets at most one commit.
func TestTransactionWriteSkew(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		setupAccounts(t, c, 2, 100)
		for round := 0; round < 5; round++ {
			a, b := c.begin(t, "bank"), c.begin(t, "bank")
			for _, tx := range []*txClient{a, b} {
				if got := tx.docs(t, "accounts", `{"$or":[{"id":0},{"id":1}]}`); len(got) != 2 {
					t.Fatalf("read both: %v", got)
				}
			}
			a.ok(t, "PUT", docPath("bank", "accounts", "update"), fmt.Sprintf(`{"filter":{"id":1},"fields":{"$set":{"owner":"a%d"}}}`, round))
			b.ok(t, "PUT", docPath("bank", "accounts", "update"), fmt.Sprintf(`{"filter":{"id":0},"fields":{"$set":{"owner":"b%d"}}}`, round))
			ra, rb := a.commit(t), b.commit(t)
			if ra.status == 200 && rb.status == 200 {
				t.Fatalf("round %d: both write-skewed transactions committed", round)
			}
			if ra.status != 200 && rb.status != 200 {
				t.Fatalf("round %d: neither committed: %s / %s", round, ra, rb)
			}
		}
	})
}

// TestTransactionBank moves money between accounts in transactions from
// several clients (read two balances, update both, commit, retry on
// ABORTED) while read-only transactions sum every balance; every sum must be
// the total.
func TestTransactionBank(t *testing.T) {
	const accounts, initial, movers = 8, 1000, 6
	eachBackend(t, func(t *testing.T, c *client) {
		setupAccounts(t, c, accounts, initial)
		balance := func(tx *txClient, id int) (int, error) {
			r, err := tx.send("POST", docPath("bank", "accounts", "read"), fmt.Sprintf(`{"filter":{"id":%d}}`, id))
			if err != nil {
				return 0, err
			}
			if r.status != 200 {
				return 0, fmt.Errorf("read %d: %s", id, r)
			}
			var line struct {
				Result struct {
					Data struct{ Balance int } `json:"data"`
				} `json:"result"`
			}
			if err := json.Unmarshal(r.body, &line); err != nil {
				return 0, fmt.Errorf("read %d: %s: %v", id, r, err)
			}
			return line.Result.Data.Balance, nil
		}
		var commits, aborts, audits atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		fail := make(chan error, movers+1)
		for m := 0; m < movers; m++ {
			wg.Add(1)
			go func(seed uint64) {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(seed, 1))
				for i := 0; i < 25; i++ {
					from, to := rng.IntN(accounts), rng.IntN(accounts)
					for from == to {
						to = rng.IntN(accounts)
					}
					amount := rng.IntN(50)
					for attempt := 0; ; attempt++ {
						tx := c.beginQuiet()
						if tx == nil {
							fail <- fmt.Errorf("begin failed")
							return
						}
						fb, err1 := balance(tx, from)
						tb, err2 := balance(tx, to)
						if err1 != nil || err2 != nil {
							fail <- fmt.Errorf("%v %v", err1, err2)
							return
						}
						for _, u := range []struct{ id, bal int }{{from, fb - amount}, {to, tb + amount}} {
							r, err := tx.send("PUT", docPath("bank", "accounts", "update"), fmt.Sprintf(`{"filter":{"id":%d},"fields":{"$set":{"balance":%d}}}`, u.id, u.bal))
							if err != nil || r.status != 200 {
								fail <- fmt.Errorf("update: %v %v", r, err)
								return
							}
						}
						r, err := tx.send("POST", dbPath("bank", "transactions/commit"), "")
						if err != nil {
							fail <- err
							return
						}
						if r.status == 200 {
							commits.Add(1)
							break
						}
						if r.status != http.StatusConflict || !strings.Contains(string(r.body), "ABORTED") {
							fail <- fmt.Errorf("commit: %s", r)
							return
						}
						aborts.Add(1)
					}
				}
			}(uint64(m + 1))
		}
		auditDone := make(chan struct{})
		go func() {
			defer close(auditDone)
			for {
				select {
				case <-stop:
					return
				default:
				}
				tx := c.beginQuiet()
				r, err := tx.send("POST", docPath("bank", "accounts", "read"), `{"filter":{}}`)
				if err != nil || r.status != 200 {
					fail <- fmt.Errorf("audit read: %v %v", r, err)
					return
				}
				sum := 0
				for _, line := range strings.Split(strings.TrimSpace(string(r.body)), "\n") {
					var l struct {
						Result struct {
							Data struct{ Balance int } `json:"data"`
						} `json:"result"`
					}
					json.Unmarshal([]byte(line), &l)
					sum += l.Result.Data.Balance
				}
				tx.send("POST", dbPath("bank", "transactions/commit"), "")
				if sum != accounts*initial {
					fail <- fmt.Errorf("an audit saw a total of %d, want %d", sum, accounts*initial)
					return
				}
				audits.Add(1)
			}
		}()
		wg.Wait()
		close(stop)
		<-auditDone
		close(fail)
		for err := range fail {
			t.Fatal(err)
		}
		final := c.all(t, "bank", "accounts")
		sum := 0
		for _, d := range final {
			var doc struct{ Balance int }
			json.Unmarshal([]byte(d), &doc)
			sum += doc.Balance
		}
		if sum != accounts*initial {
			t.Fatalf("final total %d, want %d", sum, accounts*initial)
		}
		if commits.Load() != movers*25 || audits.Load() == 0 {
			t.Fatalf("%d commits, %d audits", commits.Load(), audits.Load())
		}
		t.Logf("bank: %d commits, %d aborts, %d audits", commits.Load(), aborts.Load(), audits.Load())
	})
}

// beginQuiet begins a transaction on "bank" without a testing.T, for
// goroutines; nil if it failed.
func (c *client) beginQuiet() *txClient {
	r, err := c.send("POST", dbPath("bank", "transactions/begin"), "")
	if err != nil || r.status != 200 {
		return nil
	}
	var body struct {
		TxCtx struct{ ID, Origin string } `json:"tx_ctx"`
	}
	if json.Unmarshal(r.body, &body) != nil {
		return nil
	}
	return &txClient{c: c, db: "bank", id: body.TxCtx.ID, origin: body.TxCtx.Origin}
}
