package nemesis

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"syscall"
	"time"
)

// The kinds of fault.
const (
	// FaultKill: kill -9 of a node, started again after up to two seconds.
	FaultKill = "kill"
	// FaultPause: SIGSTOP of a node for two to three and a half times its
	// lease, then SIGCONT: the others take it for gone meanwhile.
	FaultPause = "pause"
	// FaultCut: every client connection to a node (through its proxy) or
	// to all of them is reset, mid-call for those in flight.
	FaultCut = "cut"
	// FaultPGRestart: PostgreSQL crashes (immediate shutdown) and starts
	// again, recovering from its log.
	FaultPGRestart = "pg-restart"
	// FaultPGPause: PostgreSQL stops answering (SIGSTOP of all its
	// processes) for one to four seconds.
	FaultPGPause = "pg-pause"
)

// FaultKinds lists the faults each setup takes.
var FaultKinds = map[string][]string{
	SetupPostgres: {FaultKill, FaultPause, FaultCut, FaultPGRestart, FaultPGPause},
	SetupPebble:   {FaultKill, FaultPause, FaultCut},
}

// nemesis injects faults one at a time into a cluster: first each kind
// once, in a random order (the schedule that makes every run inject
// every kind), then kinds drawn at random, with a random pause between
// two. Each fault ends healed: the node restarted or continued,
// PostgreSQL back.
type nemesis struct {
	c        *cluster
	kinds    []string
	interval time.Duration
	lease    time.Duration
	rng      *rand.Rand
	logf     func(format string, args ...any)

	mu     sync.Mutex
	counts map[string]int
}

// run injects faults until ctx is done, and returns the first fault that
// could not be healed (a node that does not start again): the run cannot
// go on without it.
func (n *nemesis) run(ctx context.Context) error {
	schedule := slices.Clone(n.kinds)
	n.rng.Shuffle(len(schedule), func(i, j int) { schedule[i], schedule[j] = schedule[j], schedule[i] })
	for i := 0; ; i++ {
		wait := n.interval/2 + time.Duration(n.rng.Int64N(int64(n.interval)+1))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		kind := n.kinds[n.rng.IntN(len(n.kinds))]
		if i < len(schedule) {
			kind = schedule[i]
		}
		if err := n.inject(ctx, kind); err != nil {
			return fmt.Errorf("fault %s: %w", kind, err)
		}
		n.mu.Lock()
		n.counts[kind]++
		n.mu.Unlock()
	}
}

// inject runs one fault to its end. Its wait is not cut short by ctx: a
// fault always ends healed.
func (n *nemesis) inject(ctx context.Context, kind string) error {
	ctx = context.WithoutCancel(ctx)
	between := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(n.rng.Int64N(int64(hi-lo)+1)) }
	switch kind {
	case FaultKill:
		nd := n.c.nodes[n.rng.IntN(len(n.c.nodes))]
		n.logf("kill -9 %s", nd.id)
		n.c.setDown(nd, true)
		nd.kill()
		time.Sleep(between(0, 2*time.Second))
		n.logf("restart %s", nd.id)
		if err := nd.start(ctx); err != nil {
			return err
		}
		n.c.setDown(nd, false)
		n.logf("%s serves again", nd.id)
	case FaultPause:
		nd := n.c.nodes[n.rng.IntN(len(n.c.nodes))]
		d := between(2*n.lease, 7*n.lease/2)
		n.logf("SIGSTOP %s for %v", nd.id, d)
		if err := nd.signal(syscall.SIGSTOP); err != nil {
			return err
		}
		time.Sleep(d)
		n.logf("SIGCONT %s", nd.id)
		if err := nd.signal(syscall.SIGCONT); err != nil {
			return err
		}
	case FaultCut:
		// One proxy's connections, or now and then every one at once.
		if n.rng.IntN(4) == 0 {
			cut := 0
			for _, p := range n.c.proxies {
				cut += p.cut()
			}
			n.logf("cut %d connections of every proxy", cut)
			break
		}
		i := n.rng.IntN(len(n.c.proxies))
		cut := n.c.proxies[i].cut()
		n.logf("cut %d connections of proxy %s", cut, n.c.proxyNames[i])
	case FaultPGRestart:
		n.logf("PostgreSQL: crash and restart")
		if err := n.c.pg.Restart(); err != nil {
			return err
		}
		n.logf("PostgreSQL back")
	case FaultPGPause:
		d := between(time.Second, 4*time.Second)
		n.logf("PostgreSQL: SIGSTOP for %v", d)
		if err := n.c.pg.Pause(); err != nil {
			return err
		}
		time.Sleep(d)
		n.logf("PostgreSQL: SIGCONT")
		if err := n.c.pg.Resume(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown fault %q", kind)
	}
	return nil
}

// total is how many faults were injected so far.
func (n *nemesis) total() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	t := 0
	for _, c := range n.counts {
		t += c
	}
	return t
}

func (n *nemesis) injected() map[string]int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return maps.Clone(n.counts)
}
