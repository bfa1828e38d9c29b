package node

import (
	"context"
	"errors"
	"sync"
)

// Part is the contract of every long-running part of a node: it is
// constructed without starting anything (no goroutine, no listener),
// Start starts it (ctx bounds the start, not the part's life), and Close
// stops it and waits until it has stopped. Close is called once, and only
// on a part whose Start succeeded.
type Part interface {
	Start(ctx context.Context) error
	Close() error
}

// part is a Part in the node's list, with what the shutdown log says of it.
type part struct {
	name string
	Part
	// stopped is the log line of a Close that succeeded; none if empty.
	stopped string
}

// parts is the node's ordered list of parts: started forward, stopped in
// reverse, so that a part stops before what it runs over.
type parts struct {
	list    []part
	started int // list[:started] are running
}

func (ps *parts) add(name string, p Part, stopped string) {
	ps.list = append(ps.list, part{name: name, Part: p, stopped: stopped})
}

// start starts the parts not started yet, in order, and stops at the first
// that fails.
func (ps *parts) start(ctx context.Context) error {
	for ; ps.started < len(ps.list); ps.started++ {
		p := ps.list[ps.started]
		if err := p.Start(ctx); err != nil {
			return err
		}
	}
	return nil
}

// stop closes the started parts in reverse order, logging each, and
// returns their errors.
func (ps *parts) stop(n *Node) error {
	var errs []error
	for ; ps.started > 0; ps.started-- {
		p := ps.list[ps.started-1]
		if err := p.Close(); err != nil {
			n.log.Error("shutdown: stopping the "+p.name+" failed", "err", err)
			errs = append(errs, err)
		} else if p.stopped != "" {
			n.log.Info(p.stopped)
		}
	}
	return errors.Join(errs...)
}

// funcs is a Part made of two functions, for the node's own pieces (its
// listeners, the store it opened) and parts whose packages name their
// steps otherwise (the cluster's Join and Leave). A nil one does nothing.
type funcs struct {
	start func(ctx context.Context) error
	close func() error
}

func (f funcs) Start(ctx context.Context) error {
	if f.start == nil {
		return nil
	}
	return f.start(ctx)
}

func (f funcs) Close() error {
	if f.close == nil {
		return nil
	}
	return f.close()
}

// runner is a Part that runs fn on a goroutine of its own until Close
// cancels its context, for parts written as a loop (the change-log
// trimmer's Run).
type runner struct {
	run    func(ctx context.Context)
	cancel context.CancelFunc
	done   chan struct{}
}

func newRunner(run func(ctx context.Context)) *runner { return &runner{run: run} }

func (r *runner) Start(context.Context) error {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan struct{})
	go func() {
		defer close(r.done)
		r.run(ctx)
	}()
	return nil
}

func (r *runner) Close() error {
	r.cancel()
	<-r.done
	return nil
}

// failures collects the first failure of a running part, for Err.
type failures struct {
	ch      chan error
	mu      sync.Mutex
	closing bool
}

func newFailures() *failures { return &failures{ch: make(chan error, 1)} }

// fail reports err unless the node is shutting down, when parts return
// errors as they are stopped, or a failure was reported already.
func (f *failures) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closing {
		return
	}
	select {
	case f.ch <- err:
	default:
	}
}

// shuttingDown makes later failures expected ones.
func (f *failures) shuttingDown() {
	f.mu.Lock()
	f.closing = true
	f.mu.Unlock()
}
