package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/foliodb/folio/client"
	"github.com/foliodb/folio/tests/history"
	"github.com/foliodb/folio/tests/pgtest"
)

// The setups a run can use.
const (
	// SetupPostgres: three nodes on one PostgreSQL database, with leases
	// and forwarding, the way the multi-node tests run them.
	SetupPostgres = "postgres"
	// SetupPebble: one node on the embedded engine.
	SetupPebble = "pebble"
)

// dbName is the run's database.
const dbName = "nemesis"

// opTimeout bounds one operation from the client's side: past it the
// operation is abandoned (unknown, if its commit was sent). It outlasts
// every pause a fault makes, so that most operations caught in one still
// learn their outcome.
const opTimeout = 10 * time.Second

// finalReadPatience is how long the final reads are tried: past the
// nodes' idle timeout for transactions (session.DefaultIdleTimeout), which
// frees the slots of those abandoned mid-way.
const finalReadPatience = 2*time.Minute + 30*time.Second

// pause is a client's pause after an operation: none after a success, a
// little after a conflict, so that the conflicting ones part, and more
// after an error of the faults, so that clients do not spin on a node
// that is down.
func pause(err error, rng *rand.Rand) time.Duration {
	switch {
	case err == nil:
		return 0
	case client.IsCode(err, client.Aborted):
		return time.Duration(rng.IntN(20)) * time.Millisecond
	}
	return 50*time.Millisecond + time.Duration(rng.IntN(150))*time.Millisecond
}

// Config says what a run does.
type Config struct {
	Setup string // SetupPostgres or SetupPebble
	Folio string // the folio binary
	// Dir receives the histories (append.jsonl, bank.jsonl), the log of
	// the faults (faults.log) and each node's output (n1.log, ...).
	Dir      string
	Duration time.Duration
	// MinFaults, if set, keeps the run going past Duration until that
	// many faults were injected (issue 43's long runs ask for 100), but
	// never past three times Duration.
	MinFaults int
	// Clients is how many clients run at once, half of them each
	// workload; default 16.
	Clients int
	// FaultInterval is the mean pause between two faults; default 3 s.
	FaultInterval time.Duration
	// Faults are the kinds injected; default every kind of the setup.
	Faults []string
	// Lease is the nodes' --node-lease; default 1 s.
	Lease time.Duration
	// Seed seeds the clients' and the faults' choices; 0 draws one.
	Seed uint64
	// PGBin is the directory of PostgreSQL's server programs; empty: the
	// newest of /usr/lib/postgresql/*/bin.
	PGBin string
	// Logf, if set, is told of each fault as it happens.
	Logf func(format string, args ...any)
}

// Counts are a workload's operations by outcome.
type Counts struct{ OK, Fail, Info int }

func (c Counts) total() int { return c.OK + c.Fail + c.Info }

func (c Counts) String() string {
	return fmt.Sprintf("%d ops (%d ok, %d fail, %d unknown)", c.total(), c.OK, c.Fail, c.Info)
}

// Report is what a run did and what the checkers found.
type Report struct {
	Setup   string
	Seed    uint64
	Elapsed time.Duration
	// Faults counts the faults injected by kind.
	Faults       map[string]int
	Append, Bank Counts
	// AppendResult is the list-append history checked as strictly
	// serializable (with real-time order); BankResult the bank invariant
	// at every read.
	AppendResult, BankResult history.Result
	Dir                      string
}

// Valid says no anomaly was found and every search finished.
func (r Report) Valid() bool { return r.AppendResult.Valid() && r.BankResult.Valid() }

// FaultCount is how many faults were injected in all.
func (r Report) FaultCount() int {
	n := 0
	for _, c := range r.Faults {
		n += c
	}
	return n
}

func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s setup, seed %d, %v: %d faults (", r.Setup, r.Seed, r.Elapsed.Round(time.Second), r.FaultCount())
	var kinds []string
	for k := range r.Faults {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for i, k := range kinds {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", k, r.Faults[k])
	}
	fmt.Fprintf(&b, ")\n  list-append: %v: %s\n  bank: %v: %s\n  histories in %s", r.Append, strings.TrimSpace(r.AppendResult.String()),
		r.Bank, strings.TrimSpace(r.BankResult.String()), r.Dir)
	return b.String()
}

// cluster is what the clients and the nemesis act on.
type cluster struct {
	pg         *pgtest.Cluster // nil on the embedded setup
	nodes      []*node
	proxies    []*proxy
	proxyNames []string
	targets    []target

	mu   sync.Mutex
	down map[*node]bool
}

// target is a client of one proxy, over one transport.
type target struct {
	c    *client.Client
	node *node // nil: the proxy spreads over every node
}

func (c *cluster) setDown(n *node, down bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.down[n] = down
}

// pick draws a client among those whose node is not known to be down
// (among all when every node is: the one node of the embedded setup).
func (c *cluster) pick(rng *rand.Rand) *client.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	live := make([]*client.Client, 0, len(c.targets))
	for _, t := range c.targets {
		if t.node == nil || !c.down[t.node] {
			live = append(live, t.c)
		}
	}
	if len(live) == 0 {
		return c.targets[rng.IntN(len(c.targets))].c
	}
	return live[rng.IntN(len(live))]
}

// Run runs the workloads against a fresh cluster under faults for
// cfg.Duration, then checks the histories. Its error is the harness's
// (a cluster that does not start, a node that does not come back); the
// anomalies found are in the report.
func Run(ctx context.Context, cfg Config) (Report, error) {
	if cfg.Clients == 0 {
		cfg.Clients = 16
	}
	if cfg.FaultInterval == 0 {
		cfg.FaultInterval = 3 * time.Second
	}
	if cfg.Lease == 0 {
		cfg.Lease = time.Second
	}
	if cfg.Faults == nil {
		cfg.Faults = FaultKinds[cfg.Setup]
	}
	for _, f := range cfg.Faults {
		if !slices.Contains(FaultKinds[cfg.Setup], f) {
			return Report{}, fmt.Errorf("the %s setup takes no fault %q (it takes %v)", cfg.Setup, f, FaultKinds[cfg.Setup])
		}
	}
	if cfg.Seed == 0 {
		cfg.Seed = rand.Uint64()
	}
	rep := Report{Setup: cfg.Setup, Seed: cfg.Seed, Dir: cfg.Dir}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return rep, err
	}
	faultLog, err := os.Create(filepath.Join(cfg.Dir, "faults.log"))
	if err != nil {
		return rep, err
	}
	defer faultLog.Close()
	start := time.Now()
	var logMu sync.Mutex
	logf := func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		line := fmt.Sprintf(format, args...)
		// The time is the histories' (their events' "time", in ns).
		fmt.Fprintf(faultLog, "%d %s\n", time.Since(start).Nanoseconds(), line)
		if cfg.Logf != nil {
			cfg.Logf("%s: %s", cfg.Setup, line)
		}
	}

	c, err := startCluster(ctx, cfg)
	if c != nil {
		defer c.stop()
	}
	if err != nil {
		return rep, err
	}
	direct, err := client.Open("http://"+c.nodes[0].addr, client.Options{TxAttempts: 1})
	if err != nil {
		return rep, err
	}
	defer direct.Close()
	db, err := direct.CreateDatabase(ctx, dbName)
	if err != nil {
		return rep, fmt.Errorf("create the database: %w", err)
	}
	start = time.Now()
	appendRec, err := newRecorder(filepath.Join(cfg.Dir, "append.jsonl"), start)
	if err != nil {
		return rep, err
	}
	bankRec, err := newRecorder(filepath.Join(cfg.Dir, "bank.jsonl"), start)
	if err != nil {
		return rep, err
	}
	appends, bank := newAppendLoad(appendRec), &bankLoad{rec: bankRec}
	if err := appends.setup(ctx, db); err != nil {
		return rep, fmt.Errorf("set up list-append: %w", err)
	}
	if err := bank.setup(ctx, db); err != nil {
		return rep, fmt.Errorf("set up bank: %w", err)
	}

	runCtx, stop := context.WithTimeout(ctx, cfg.Duration*3)
	defer stop()
	nem := &nemesis{c: c, kinds: cfg.Faults, interval: cfg.FaultInterval, lease: cfg.Lease,
		rng: rand.New(rand.NewPCG(cfg.Seed, 1<<32)), logf: logf, counts: map[string]int{}}
	go func() {
		// The run ends at Duration, or later when MinFaults are not in yet.
		select {
		case <-runCtx.Done():
			return
		case <-time.After(cfg.Duration):
		}
		for nem.total() < cfg.MinFaults {
			select {
			case <-runCtx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
		stop()
	}()
	nemErr := make(chan error, 1)
	go func() {
		err := nem.run(runCtx)
		if err != nil {
			stop() // the run cannot go on with a node that is gone
		}
		nemErr <- err
	}()
	var wg sync.WaitGroup
	for i := range cfg.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(cfg.Seed, uint64(i)))
			for runCtx.Err() == nil {
				// An operation is not cancelled by the run's end: it ends
				// on its own, so that the run ends on few unknowns.
				opCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
				var err error
				if i%2 == 0 {
					err = appends.step(opCtx, c.pick(rng), rng, i)
				} else {
					err = bank.step(opCtx, c.pick(rng), rng, i)
				}
				cancel()
				time.Sleep(pause(err, rng))
			}
		}()
	}
	wg.Wait()
	err = <-nemErr
	rep.Faults = nem.injected()
	logf("faults over; %d injected", rep.FaultCount())
	if err != nil {
		return rep, err
	}

	// The final reads, on a cluster healed and quiet. Transactions that
	// clients abandoned when their connections were cut still hold the
	// node's slots until its idle timeout (2 minutes), so a begin may be
	// refused (UNAVAILABLE) until then: the reads are tried for longer.
	finalRead := func(read func(context.Context, *client.Client, int) error) error {
		var err error
		for deadline := time.Now().Add(finalReadPatience); ; {
			fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			err = read(fctx, direct, cfg.Clients)
			cancel()
			if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
				return err
			}
			logf("%v; trying again", err)
			time.Sleep(2 * time.Second)
		}
	}
	err = errors.Join(finalRead(appends.final), finalRead(bank.final))
	rep.Elapsed = time.Since(start)
	appendEvents, aerr := appendRec.close()
	bankEvents, berr := bankRec.close()
	if err = errors.Join(err, aerr, berr); err != nil {
		return rep, err
	}
	return check(rep, appendEvents, bankEvents)
}

// check pairs and checks the two histories.
func check(rep Report, appendEvents, bankEvents []history.Event) (Report, error) {
	appendOps, err := history.Pair(appendEvents)
	if err != nil {
		return rep, fmt.Errorf("the list-append history: %w", err)
	}
	bankOps, err := history.Pair(bankEvents)
	if err != nil {
		return rep, fmt.Errorf("the bank history: %w", err)
	}
	rep.Append, rep.Bank = count(appendOps), count(bankOps)
	// Real-time order is sound here: an operation's invocation is recorded
	// before its first request leaves and its completion after its last
	// answer, and an unknown one has no completion (history.Pair), so it
	// is ordered after nothing.
	rep.AppendResult = history.CheckAppend(appendOps, history.AppendOptions{RealTime: true})
	rep.BankResult = history.CheckBank(bankOps, history.BankOptions{Total: total})
	return rep, nil
}

func count(ops []history.Op) Counts {
	var c Counts
	for _, op := range ops {
		switch op.Type {
		case history.OK:
			c.OK++
		case history.Fail:
			c.Fail++
		default:
			c.Info++
		}
	}
	return c
}

// startCluster starts the setup's PostgreSQL (if any), nodes and proxies,
// and the clients of the proxies over both transports. What it started is
// stopped by the cluster's stop, also when it fails midway.
func startCluster(ctx context.Context, cfg Config) (*cluster, error) {
	c := &cluster{down: map[*node]bool{}}
	var args []string
	nodes := 1
	switch cfg.Setup {
	case SetupPebble:
		args = []string{"--data-dir", filepath.Join(cfg.Dir, "data")}
	case SetupPostgres:
		pg, err := pgtest.StartCluster(cfg.PGBin)
		if err != nil {
			return nil, err
		}
		c.pg = pg
		url, err := pg.CreateDatabase(ctx, "folio")
		if err != nil {
			return c, err
		}
		args = []string{"--engine", "postgres", "--postgres-url", url}
		nodes = 3
	default:
		return nil, fmt.Errorf("unknown setup %q (%s or %s)", cfg.Setup, SetupPostgres, SetupPebble)
	}
	args = append(args, "--node-lease", cfg.Lease.String())
	for i := range nodes {
		id := fmt.Sprintf("n%d", i+1)
		n, err := newNode(id, cfg.Folio, filepath.Join(cfg.Dir, id+".log"), args)
		if err != nil {
			return c, err
		}
		c.nodes = append(c.nodes, n)
		// One at a time: the first creates the store's tables.
		if err := n.start(ctx); err != nil {
			return c, err
		}
	}
	addProxy := func(name string, n *node, backends ...string) error {
		p, err := newProxy(backends...)
		if err != nil {
			return err
		}
		c.proxies, c.proxyNames = append(c.proxies, p), append(c.proxyNames, name)
		for _, scheme := range []string{"http", "grpc"} {
			// One attempt per transaction: a retried one would be a new
			// operation, which the history must show as one.
			cl, err := client.Open(scheme+"://"+p.addr(), client.Options{TxAttempts: 1})
			if err != nil {
				return err
			}
			c.targets = append(c.targets, target{c: cl, node: n})
		}
		return nil
	}
	var all []string
	for _, n := range c.nodes {
		all = append(all, n.addr)
		if err := addProxy(n.id, n, n.addr); err != nil {
			return c, err
		}
	}
	if len(c.nodes) > 1 {
		if err := addProxy("any", nil, all...); err != nil {
			return c, err
		}
	}
	return c, nil
}

func (c *cluster) stop() {
	for _, t := range c.targets {
		t.c.Close()
	}
	for _, p := range c.proxies {
		p.close()
	}
	for _, n := range c.nodes {
		n.stop()
	}
	if c.pg != nil {
		c.pg.Stop()
	}
}
