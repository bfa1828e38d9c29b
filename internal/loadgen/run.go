package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Shapes of the operations.
const (
	// ScanLength is the most documents a scan asks for; each scan asks for
	// a uniform 1 to ScanLength, as YCSB's workload E.
	ScanLength = 100
	// RangeWidth is the width of a find-range: [lo, lo+RangeWidth) holds
	// that many loaded documents.
	RangeWidth = 10
	// FindLimit is the limit of find-few and find-wide, whose filters match
	// many more documents.
	FindLimit = 10
)

// WideRange is the width of a find-wide on docs documents: a tenth of
// them, and at least FindLimit.
func WideRange(docs int64) int64 { return max(docs/10, FindLimit) }

// CountRange is the width of a count's score range: a hundredth of the
// documents, and 10 at least.
func CountRange(docs int64) int64 { return max(docs/100, 10) }

// RunConfig is one workload run against one driver.
type RunConfig struct {
	Driver   Driver
	Workload Workload
	Data     Dataset
	// Clients is the number of concurrent clients, each with one request
	// in flight at a time.
	Clients int
	// Duration bounds the run; it must be positive. MaxOps, if positive,
	// bounds it too: the run ends at whichever comes first.
	Duration time.Duration
	MaxOps   int64
	// Distribution overrides the workload's key distribution if set.
	Distribution string
	// Seed seeds every client's random source (client i uses Seed and i),
	// so a run's sequence of operations and keys is reproducible.
	Seed uint64
	// OpTimeout bounds each operation (default 30s), so that a stuck
	// request cannot hold a run past its end for long.
	OpTimeout time.Duration
	// Progress, if set, gets a line of throughput every ProgressInterval
	// (default 1s) while the run lasts.
	Progress         io.Writer
	ProgressInterval time.Duration
}

func (c *RunConfig) check() error {
	switch {
	case c.Driver == nil:
		return errors.New("no driver")
	case c.Clients <= 0:
		return fmt.Errorf("clients must be positive, not %d", c.Clients)
	case c.Duration <= 0:
		return fmt.Errorf("duration must be positive, not %v", c.Duration)
	case c.Data.Docs <= 0:
		return fmt.Errorf("the run needs loaded documents, not %d", c.Data.Docs)
	case len(c.Workload.Mix) == 0:
		return fmt.Errorf("workload %q has no operations", c.Workload.Name)
	}
	if c.Distribution == "" {
		c.Distribution = c.Workload.Distribution
	}
	if c.OpTimeout <= 0 {
		c.OpTimeout = 30 * time.Second
	}
	if c.ProgressInterval <= 0 {
		c.ProgressInterval = time.Second
	}
	return nil
}

// Run runs a workload: it trims what earlier runs inserted, then starts the
// clients, which issue operations back to back until the duration (or
// MaxOps) is reached or ctx ends. It returns the latencies and counts of
// every operation. Failed operations are counted, not fatal.
func Run(ctx context.Context, cfg RunConfig) (*Result, error) {
	if err := cfg.check(); err != nil {
		return nil, fmt.Errorf("run %s: %w", cfg.Workload.Name, err)
	}
	if err := cfg.Driver.Trim(ctx, cfg.Data.Docs); err != nil {
		return nil, fmt.Errorf("run %s on %s: trim documents inserted before: %w", cfg.Workload.Name, cfg.Driver.Name(), err)
	}
	ks := NewKeyspace(cfg.Data.Docs)
	clients := make([]*client, cfg.Clients)
	for i := range clients {
		c, err := newClient(&cfg, ks, i)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", cfg.Workload.Name, err)
		}
		clients[i] = c
	}

	var live liveCounts
	var issued atomic.Int64
	start := time.Now()
	deadline := start.Add(cfg.Duration)
	runCtx, cancel := context.WithDeadline(ctx, deadline.Add(cfg.OpTimeout))
	defer cancel()

	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for runCtx.Err() == nil && time.Now().Before(deadline) {
				if cfg.MaxOps > 0 && issued.Add(1) > cfg.MaxOps {
					return
				}
				c.step(runCtx, &live)
			}
		}()
	}
	stopProgress := startProgress(&cfg, &live, start)
	wg.Wait()
	elapsed := time.Since(start)
	stopProgress()

	res := &Result{Driver: cfg.Driver.Name(), Workload: cfg.Workload.Name, Distribution: cfg.Distribution,
		Clients: cfg.Clients, Docs: cfg.Data.Docs, Seed: cfg.Seed, Elapsed: elapsed}
	for _, op := range cfg.Workload.Ops() {
		res.Ops = append(res.Ops, &OpResult{Op: op})
	}
	for _, c := range clients {
		for i, s := range c.stats {
			res.Ops[i].merge(s)
		}
	}
	return res, ctx.Err()
}

// liveCounts are what the progress line shows while a run lasts.
type liveCounts struct {
	ops, errors atomic.Int64
}

// startProgress prints a line every interval until the returned func is
// called.
func startProgress(cfg *RunConfig, live *liveCounts, start time.Time) (stop func()) {
	if cfg.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(cfg.ProgressInterval)
		defer tick.Stop()
		var lastOps int64
		last := start
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				ops := live.ops.Load()
				fmt.Fprintf(cfg.Progress, "%s %-6s %5.0fs %10d ops %9.0f ops/s (now %9.0f/s) %6d errors\n",
					cfg.Driver.Name(), cfg.Workload.Name, now.Sub(start).Seconds(), ops,
					float64(ops)/now.Sub(start).Seconds(), float64(ops-lastOps)/now.Sub(last).Seconds(), live.errors.Load())
				lastOps, last = ops, now
			}
		}
	}()
	return func() { close(done); <-finished }
}

// client is one of a run's concurrent clients: its own random source, key
// chooser and statistics.
type client struct {
	cfg    *RunConfig
	ks     *Keyspace
	rng    *rand.Rand
	keys   KeyChooser
	stats  []*OpResult // in the order of cfg.Workload.Mix
	index  map[Op]int
	docBuf []byte
}

func newClient(cfg *RunConfig, ks *Keyspace, i int) (*client, error) {
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(i)))
	keys, err := NewKeyChooser(cfg.Distribution, ks)
	if err != nil {
		return nil, err
	}
	c := &client{cfg: cfg, ks: ks, rng: rng, keys: keys, index: map[Op]int{}}
	for i, op := range cfg.Workload.Ops() {
		c.stats = append(c.stats, &OpResult{Op: op})
		c.index[op] = i
	}
	return c, nil
}

// step draws an operation, runs it and records its outcome.
func (c *client) step(ctx context.Context, live *liveCounts) {
	op := c.cfg.Workload.Pick(c.rng)
	s := c.stats[c.index[op]]
	opCtx, cancel := context.WithTimeout(ctx, c.cfg.OpTimeout)
	start := time.Now()
	err := c.do(opCtx, op)
	took := time.Since(start)
	cancel()
	switch {
	case err == nil:
		s.Hist.Record(took)
		live.ops.Add(1)
	case errors.Is(err, ErrAborted):
		s.Aborts++
	case ctx.Err() != nil:
		// The run ended under the operation: neither a success nor the
		// store's fault.
	default:
		s.Errors++
		live.errors.Add(1)
		if s.FirstError == "" {
			s.FirstError = err.Error()
		}
	}
}

// do runs one operation.
func (c *client) do(ctx context.Context, op Op) error {
	d, r := c.cfg.Driver, c.rng
	switch op {
	case OpRead:
		return d.Read(ctx, c.keys.Next(r))
	case OpUpdate:
		return d.Update(ctx, c.keys.Next(r), FieldNames[r.IntN(Fields)], Text(r, FieldLength))
	case OpInsert:
		id := c.ks.Allocate()
		defer c.ks.Ack(id)
		c.docBuf = c.cfg.Data.AppendDocument(c.docBuf[:0], id)
		return d.Insert(ctx, Document{ID: id, JSON: c.docBuf})
	case OpScan:
		id := c.keys.Next(r)
		n, err := d.Scan(ctx, id, 1+r.IntN(ScanLength))
		if err == nil && n == 0 {
			err = fmt.Errorf("scan from %d found nothing", id)
		}
		return err
	case OpReadModifyWrite:
		id := c.keys.Next(r)
		if err := d.Read(ctx, id); err != nil {
			return err
		}
		return d.Update(ctx, id, FieldNames[r.IntN(Fields)], Text(r, FieldLength))
	case OpFindEqual:
		email := Email(c.keys.Next(r))
		n, err := d.FindEqual(ctx, email)
		if err == nil && n != 1 {
			err = fmt.Errorf("find email %s: %d documents, want 1", email, n)
		}
		return err
	case OpFindRange:
		lo := c.keys.Next(r) % max(c.cfg.Data.Docs-RangeWidth, 1)
		n, err := d.FindRange(ctx, lo, lo+RangeWidth)
		if err == nil && n == 0 {
			err = fmt.Errorf("find score in [%d, %d): nothing", lo, lo+RangeWidth)
		}
		return err
	case OpFindFew:
		g := Group(c.keys.Next(r))
		n, err := d.FindGroup(ctx, g, FindLimit)
		// A group holds at least Docs/Groups loaded documents; more may
		// have been inserted.
		if least := min(FindLimit, int(c.cfg.Data.Docs/Groups)); err == nil && (n < least || n > FindLimit) {
			err = fmt.Errorf("find group %s, limit %d: %d documents, want %d to %d", g, FindLimit, n, least, FindLimit)
		}
		return err
	case OpFindWide:
		width := WideRange(c.cfg.Data.Docs)
		lo := c.keys.Next(r) % max(c.cfg.Data.Docs-width, 1)
		n, err := d.FindRangeLimit(ctx, lo, lo+width, FindLimit)
		if want := min(FindLimit, int(c.cfg.Data.Docs)); err == nil && n != want {
			err = fmt.Errorf("find score in [%d, %d), limit %d: %d documents, want %d", lo, lo+width, FindLimit, n, want)
		}
		return err
	case OpTransaction:
		return c.transaction(ctx)
	case OpCount:
		width := CountRange(c.cfg.Data.Docs)
		lo := c.keys.Next(r) % max(c.cfg.Data.Docs-width, 1)
		n, err := d.CountRange(ctx, lo, lo+width)
		// The loaded documents' scores are a permutation of [0, Docs), so
		// the range holds width of them at least (inserts may add more).
		if err == nil && n < min(width, c.cfg.Data.Docs) {
			err = fmt.Errorf("count score in [%d, %d): %d, want %d or more", lo, lo+width, n, width)
		}
		return err
	case OpRead2023:
		return d.Read2023(ctx, c.keys.Next(r))
	}
	return fmt.Errorf("operation %q is not implemented", op)
}

// transaction reads two documents and updates both. The updates go in key
// order, as a careful application orders its writes, so that two such
// transactions cannot deadlock on a store that locks rows.
func (c *client) transaction(ctx context.Context) error {
	r := c.rng
	k1, k2 := c.keys.Next(r), c.keys.Next(r)
	if k2 < k1 {
		k1, k2 = k2, k1
	}
	f1, f2 := FieldNames[r.IntN(Fields)], FieldNames[r.IntN(Fields)]
	v1, v2 := Text(r, FieldLength), Text(r, FieldLength)
	tx, err := c.cfg.Driver.Begin(ctx)
	if err != nil {
		return err
	}
	err = func() error {
		if err := tx.Read(ctx, k1); err != nil {
			return err
		}
		if err := tx.Read(ctx, k2); err != nil {
			return err
		}
		if err := tx.Update(ctx, k1, f1, v1); err != nil {
			return err
		}
		return tx.Update(ctx, k2, f2, v2)
	}()
	if err != nil {
		// The rollback's own failure says nothing the first error does not.
		// It runs even when ctx has ended, so that the store is not left
		// holding the transaction until its idle timeout.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		tx.Rollback(rctx)
		cancel()
		return err
	}
	return tx.Commit(ctx)
}
