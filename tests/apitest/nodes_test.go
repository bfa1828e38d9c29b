package apitest

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
)

// Several nodes on one PostgreSQL database (issue 19): any node takes any
// request of a transaction, and relays it to the node that holds it.

// postgresData is a PostgreSQL database that several nodes can open.
func postgresData(t *testing.T) backendtest.Durable {
	t.Helper()
	for _, b := range backendtest.All {
		if b.Name == "postgres" {
			return b.Durable(t)
		}
	}
	t.Fatal("no postgres backend")
	return backendtest.Durable{}
}

// on is the transaction sent to another node.
func (tc *txClient) on(c *client) *txClient {
	cc := *tc
	cc.c = c
	return &cc
}

// The original's forwarding scenario: begin on one node; insert, replace,
// update, delete and read on the other; commit there.
func TestTransactionForwarding(t *testing.T) {
	data := postgresData(t)
	nodeA, a := startNamedNode(t, data, "node-a")
	_, b := startNamedNode(t, data, "node-b")
	a.createDB(t, "db1")
	a.createColl(t, "db1", "items", stockSchema)
	a.insert(t, "db1", "items", `{"id":1,"name":"one","qty":1}`, `{"id":2,"name":"two","qty":2}`)

	tx := a.begin(t, "db1")
	if tx.origin != "node-a" {
		t.Fatalf("begin on node-a: origin %q", tx.origin)
	}
	onB := tx.on(b)
	r := onB.ok(t, "POST", docPath("db1", "items", "insert"), `{"documents":[{"id":3,"name":"three","qty":3}]}`)
	if ids := r.header.Values("X-Request-Id"); len(ids) != 1 {
		t.Errorf("a forwarded answer's request ids: %v, want one", ids)
	}
	onB.ok(t, "PUT", docPath("db1", "items", "replace"), `{"documents":[{"id":1,"name":"uno","qty":10}]}`)
	onB.ok(t, "PUT", docPath("db1", "items", "update"), `{"filter":{"id":2},"fields":{"$set":{"qty":20}}}`)
	onB.ok(t, "DELETE", docPath("db1", "items", "delete"), `{"filter":{"id":3}}`)
	onB.ok(t, "POST", docPath("db1", "items", "insert"), `{"documents":[{"id":4,"name":"four","qty":4}]}`)
	want := []string{`{"id":1,"name":"uno","qty":10}`, `{"id":2,"name":"two","qty":20}`, `{"id":4,"name":"four","qty":4}`}
	if got := onB.docs(t, "items", `{}`); !slices.Equal(got, want) {
		t.Fatalf("read in the transaction on node-b: %v, want %v", got, want)
	}
	// A page node-b served may call it: node-a, which the request is
	// relayed to, does not take node-b's origin for a foreign one.
	req, _ := http.NewRequest("POST", b.base+docPath("db1", "items", "read"), strings.NewReader(`{"filter":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", b.base)
	req.Header.Set("Tigris-Tx-Id", tx.id)
	req.Header.Set("Tigris-Tx-Origin", tx.origin)
	if r := b.doRequest(t, req); r.status != http.StatusOK {
		t.Fatalf("a read in the transaction on node-b from node-b's origin: %s", r)
	}
	// Outside the transaction, on either node, nothing of it yet.
	if got := b.all(t, "db1", "items"); len(got) != 2 || !strings.Contains(got[0], `"one"`) {
		t.Fatalf("before the commit node-b shows %v", got)
	}
	if r := onB.commit(t); r.status != http.StatusOK {
		t.Fatalf("commit on node-b: %s", r)
	}
	for _, c := range []*client{a, b} {
		if got := c.all(t, "db1", "items"); !slices.Equal(got, want) {
			t.Fatalf("after the commit: %v, want %v", got, want)
		}
	}

	// A rollback sent to the other node ends the transaction too.
	tx = a.begin(t, "db1")
	tx.on(b).ok(t, "POST", docPath("db1", "items", "insert"), `{"documents":[{"id":5,"name":"five","qty":5}]}`)
	if r := tx.on(b).rollback(t); r.status != http.StatusOK {
		t.Fatalf("rollback on node-b: %s", r)
	}
	if r := tx.commit(t); r.status != http.StatusNotFound {
		t.Fatalf("commit after the rollback: %s, want 404", r)
	}

	// node-b relayed the ten requests above, and counted them.
	m := b.do(t, "GET", "/metrics", "")
	if !strings.Contains(string(m.body), "\nfolio_forwarded_requests_total{result=\"relayed\"} 10\n") {
		t.Errorf("node-b's metrics do not count 10 relayed requests:\n%s", grepLines(string(m.body), "folio_forwarded"))
	}

	// A transaction of a node that is gone is lost, with the original's
	// errors for a lost session.
	tx = a.begin(t, "db1")
	if err := nodeA.Close(); err != nil {
		t.Fatal(err)
	}
	r = tx.on(b).do(t, "POST", docPath("db1", "items", "insert"), `{"documents":[{"id":6,"name":"six","qty":6}]}`)
	if r.status != http.StatusInternalServerError || !strings.Contains(string(r.body), `"session is gone"`) {
		t.Fatalf("a request of a gone node's transaction: %s, want 500 session is gone", r)
	}
	if r := tx.on(b).commit(t); r.status != http.StatusNotFound || !strings.Contains(string(r.body), "session not found") {
		t.Fatalf("commit of a gone node's transaction: %s, want 404 session not found", r)
	}
	if got := b.all(t, "db1", "items"); !slices.Equal(got, want) {
		t.Fatalf("after the lost transactions: %v, want %v", got, want)
	}
}

// startNamedNode starts a node with an id on the shared data.
func startNamedNode(t *testing.T, data backendtest.Durable, id string) (*node.Node, *client) {
	t.Helper()
	// Its log (failed requests included) is shown if the test fails: a
	// commit these tests expect to land has been refused (ABORTED) once in
	// a while, cause not found yet.
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	n := startNode(t, data.Open(), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Logger = log
		nc.Sessions.Origin = id
		nc.Cluster.Lease = 500 * time.Millisecond
	}))
	t.Cleanup(func() {
		n.Close()
		if t.Failed() {
			t.Logf("%s's log:\n%s", id, logs)
		}
	})
	return n, newClient("http://" + n.Addr().String())
}

// A second node with the id of a live one does not start.
func TestNodeIDsUnique(t *testing.T) {
	data := postgresData(t)
	startNamedNode(t, data, "node-a")
	store := data.Open()
	_, err := node.Start(t.Context(), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Store = store
		nc.Addr = "127.0.0.1:0"
		nc.Cluster.Lease = 300 * time.Millisecond
		nc.Sessions.Origin = "node-a"
	}))
	if err == nil || !strings.Contains(err.Error(), "'node-a' is in use") {
		t.Fatalf("a second node-a: %v", err)
	}
}

// Three folio processes on one PostgreSQL database; clients move money
// between accounts in transactions whose every request goes to a node
// picked at random; one node is killed (SIGKILL) midway. The total never
// changes, no node answers a transaction it lost as if it held it, and
// the nodes that stay send the same change events in the same order.
func TestNodesSharingPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds folio and runs three of it")
	}
	const accounts, initial, movers, transfers = 8, 1000, 6, 30
	bin := buildFolio(t)
	data := postgresData(t)
	var procs []*process
	var clients []*client
	for i := range 3 {
		addr := freeAddr(t)
		p := startFolio(t, bin, addr, nil, append([]string{"serve", "--addr", addr, "--node-id", fmt.Sprint("n", i+1), "--node-lease", "1s"}, data.ServeArgs...)...)
		procs = append(procs, p)
		clients = append(clients, p.client(t))
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i, p := range procs {
				t.Logf("node n%d's log:\n%s", i+1, p.output())
			}
		}
	})
	setupAccounts(t, clients[0], accounts, initial)
	// The change events of the accounts, on the two nodes that stay.
	var streams []*liveStream
	for _, c := range clients[:2] {
		streams = append(streams, c.openStream(t, eventsPath("bank", "accounts"), `{}`))
	}

	var live atomic.Int32
	live.Store(3)
	pick := func(rng *rand.Rand) *client { return clients[rng.IntN(int(live.Load()))] }
	var commits, retries atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, movers)
	for m := range movers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(m), 19))
			for range transfers {
				from, to := rng.IntN(accounts), rng.IntN(accounts-1)
				if to >= from {
					to++
				}
				for attempt := 0; ; attempt++ {
					if attempt == 200 {
						errs <- fmt.Errorf("mover %d: no transfer after 200 attempts", m)
						return
					}
					err := transfer(pick(rng), pick, rng, from, to, 1+rng.IntN(20))
					if err == nil {
						commits.Add(1)
						break
					}
					if !retryable(err) {
						errs <- fmt.Errorf("mover %d: %w", m, err)
						return
					}
					retries.Add(1)
					time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
				}
			}
		}()
	}
	// Kill the third node once the movers are under way (or given up).
	moversDone := make(chan struct{})
	go func() { wg.Wait(); close(moversDone) }()
	for under := false; !under; {
		select {
		case <-moversDone:
			under = true
		case <-time.After(10 * time.Millisecond):
			under = commits.Load() >= movers*transfers/4
		}
	}
	live.Store(2)
	procs[2].cmd.Process.Kill()
	<-procs[2].exited
	<-moversDone
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	t.Logf("%d transfers committed, %d attempts retried", commits.Load(), retries.Load())

	// The bank invariant, seen from each node that stays.
	var balances []int
	for _, c := range clients[:2] {
		sum := 0
		balances = balances[:0]
		for _, d := range c.all(t, "bank", "accounts") {
			var acct struct{ Balance int }
			if err := json.Unmarshal([]byte(d), &acct); err != nil {
				t.Fatal(err)
			}
			sum += acct.Balance
			balances = append(balances, acct.Balance)
		}
		if sum != accounts*initial {
			t.Fatalf("the accounts hold %d, want %d", sum, accounts*initial)
		}
	}
	// Event order: both nodes send the same events in the same order, and
	// replaying them gives the balances the store holds.
	seqs := make([][]string, 2)
	for i, ls := range streams {
		replayed := make([]int, accounts)
		for j := range replayed {
			replayed[j] = initial
		}
		for {
			ev := ls.next(t)
			// A stream opens at the log's position on its node: the
			// setup's inserts, committed just before, may or may not be
			// behind it. The transfers (updates) all come after.
			if ev.Op != "insert" {
				seqs[i] = append(seqs[i], fmt.Sprintf("%s %s %s", ev.TxID, ev.Op, ev.Data))
			}
			var acct struct{ ID, Balance int }
			if err := json.Unmarshal(ev.Data, &acct); err != nil {
				t.Fatalf("event %s: %v", ev.Data, err)
			}
			replayed[acct.ID] = acct.Balance
			if slices.Equal(replayed, balances) && len(seqs[i]) >= int(commits.Load())*2 {
				break
			}
		}
		ls.close()
	}
	if !slices.Equal(seqs[0], seqs[1]) {
		i := 0
		for i < min(len(seqs[0]), len(seqs[1])) && seqs[0][i] == seqs[1][i] {
			i++
		}
		t.Fatalf("the nodes sent different events (%d and %d); the first difference, at %d:\n%v\n%v",
			len(seqs[0]), len(seqs[1]), i, seqs[0][i:min(i+3, len(seqs[0]))], seqs[1][i:min(i+3, len(seqs[1]))])
	}
}

// transfer moves amount between two accounts in one transaction, begun on
// first and each later request sent to a node pick chooses.
func transfer(first *client, pick func(*rand.Rand) *client, rng *rand.Rand, from, to, amount int) error {
	tx, err := first.beginTx("bank")
	if err != nil {
		return err
	}
	read := func(id int) (int, error) {
		r, err := tx.on(pick(rng)).send("POST", docPath("bank", "accounts", "read"), fmt.Sprintf(`{"filter":{"id":%d}}`, id))
		if err != nil {
			return 0, err
		}
		if r.status != http.StatusOK {
			return 0, apiFailure{r}
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
	set := func(id, balance int) error {
		r, err := tx.on(pick(rng)).send("PUT", docPath("bank", "accounts", "update"), fmt.Sprintf(`{"filter":{"id":%d},"fields":{"$set":{"balance":%d}}}`, id, balance))
		if err != nil {
			return err
		}
		if r.status != http.StatusOK {
			return apiFailure{r}
		}
		return nil
	}
	fb, err := read(from)
	if err != nil {
		return err
	}
	tb, err := read(to)
	if err != nil {
		return err
	}
	if err := set(from, fb-amount); err != nil {
		return err
	}
	if err := set(to, tb+amount); err != nil {
		return err
	}
	r, err := tx.on(pick(rng)).send("POST", dbPath("bank", "transactions/commit"), "")
	if err != nil {
		return err
	}
	if r.status != http.StatusOK {
		return apiFailure{r}
	}
	return nil
}

// beginTx begins a transaction, returning failures rather than failing a
// test: for goroutines.
func (c *client) beginTx(db string) (*txClient, error) {
	r, err := c.send("POST", dbPath(db, "transactions/begin"), "")
	if err != nil {
		return nil, err
	}
	if r.status != http.StatusOK {
		return nil, apiFailure{r}
	}
	var body struct {
		TxCtx struct{ ID, Origin string } `json:"tx_ctx"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil {
		return nil, err
	}
	return &txClient{c: c, db: db, id: body.TxCtx.ID, origin: body.TxCtx.Origin}, nil
}

// apiFailure is a request answered with an error.
type apiFailure struct{ r *response }

func (f apiFailure) Error() string { return f.r.String() }

// retryable reports whether a transfer that failed so may be tried again:
// a conflict (ABORTED), a transaction lost with its node (500 session is
// gone, 404 session not found), a node that cannot be reached or is out of
// capacity (503), or a connection to the killed node.
func retryable(err error) bool {
	f, ok := err.(apiFailure)
	if !ok {
		return true // the connection: the killed node
	}
	switch f.r.status {
	case http.StatusConflict, http.StatusServiceUnavailable:
		return true
	case http.StatusInternalServerError:
		return strings.Contains(string(f.r.body), "session is gone")
	case http.StatusNotFound:
		return strings.Contains(string(f.r.body), "session not found")
	}
	return false
}

// grepLines returns the lines of text that contain s.
func grepLines(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
