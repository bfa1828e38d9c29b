// Package cluster keeps the registry of the nodes that serve one store:
// each node's id and the address the others reach it at, under a lease
// that the node renews. An id is a node's while its lease lasts, so two
// live nodes never share one, and a node that died gives its id back when
// its lease runs out. The nodes use it to send a transaction's requests to
// the node that holds the transaction (docs/operations.md, "Several
// nodes").
package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
)

// DefaultLease is how long a registration lasts unless renewed. A node
// renews it every third of it, so it survives two renewals that fail (a
// store briefly unreachable); a node that died is known gone within it.
const DefaultLease = 10 * time.Second

// Member is a node's registration.
type Member struct {
	ID string `json:"-"`
	// Addr is where the other nodes reach its API (host:port).
	Addr string `json:"addr"`
	// Instance tells one run of a node from the next: a node that
	// restarts under the same id is a new instance.
	Instance string    `json:"instance"`
	Expires  time.Time `json:"expires"`
	// TLS tells the other nodes to speak TLS to it.
	TLS bool `json:"tls,omitempty"`
}

// ErrGone is Locate's error for a node that is not registered, or whose
// lease ran out: it stopped or died, and so did its transactions.
var ErrGone = errors.New("cluster: no live node of that id")

// Options configure a Registry.
type Options struct {
	// Lease: DefaultLease if zero.
	Lease  time.Duration
	Logger *slog.Logger
}

// Registry is one node's view of the registry: its own registration,
// kept alive, and lookups of the others.
type Registry struct {
	store kv.Store
	opts  Options
	self  Member

	mu      sync.Mutex
	started bool
	stop    chan struct{}
	done    chan struct{}

	cacheMu sync.Mutex
	located map[string]located // recent Locate answers, by id
}

// located is a live member as Locate last read it, and until when the
// answer may be used without reading again.
type located struct {
	m     Member
	until time.Time
}

// locateTTL bounds how long Locate reuses an answer: every request of a
// transaction sent to the wrong node asks, and a store read each time
// would be a round trip to PostgreSQL. A node cannot be replaced under its
// id while its lease lasts, so within the lease the answer only goes stale
// if the node left and another took its id at once.
const locateTTL = time.Second

// New returns a node's registry over store; the node is not registered
// until Join.
func New(store kv.Store, opts Options) *Registry {
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Registry{store: store, opts: opts, stop: make(chan struct{}), done: make(chan struct{})}
}

// Join registers the node as id at addr, and keeps the registration alive
// until Leave. An id held by another live node is refused: Join waits up
// to one lease for it to run out (a node that restarts after dying finds
// its own old registration there), and fails if its holder renews it.
func (r *Registry) Join(ctx context.Context, id, addr string, useTLS bool) error {
	var instance [8]byte
	rand.Read(instance[:])
	r.self = Member{ID: id, Addr: addr, Instance: hex.EncodeToString(instance[:]), TLS: useTLS}
	var seen *Member // the other holder, as first seen
	for {
		holder, err := r.claim(ctx)
		if err != nil {
			return err
		}
		if holder == nil {
			break
		}
		if seen != nil && (holder.Instance != seen.Instance || holder.Expires.After(seen.Expires)) {
			return fmt.Errorf("node id '%s' is in use by a live node at %s (it renewed its lease): give this node another id (--node-id)", id, holder.Addr)
		}
		seen = holder
		r.opts.Logger.Info("node id held by another node's lease: waiting for it to run out", "node_id", id, "holder_addr", holder.Addr, "expires", holder.Expires)
		select {
		case <-time.After(time.Until(holder.Expires) + 10*time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	r.mu.Lock()
	r.started = true
	r.mu.Unlock()
	go r.renew()
	return nil
}

// claim writes the node's registration unless another instance holds the
// id with a lease still running, which it returns.
func (r *Registry) claim(ctx context.Context) (*Member, error) {
	var holder *Member
	_, err := kv.Run(ctx, r.store, func(tx kv.Tx) error {
		holder = nil
		now := time.Now()
		cur, err := get(ctx, tx, r.self.ID)
		if err != nil {
			return err
		}
		if cur != nil && cur.Instance != r.self.Instance && cur.Expires.After(now) {
			holder = cur
			return nil
		}
		return put(tx, r.self, now.Add(r.opts.Lease))
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: register node '%s': %w", r.self.ID, err)
	}
	return holder, nil
}

// renew keeps the registration alive until Leave.
func (r *Registry) renew() {
	defer close(r.done)
	t := time.NewTicker(r.opts.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), r.opts.Lease/3)
		holder, err := r.claim(ctx)
		cancel()
		switch {
		case err != nil:
			r.opts.Logger.Warn("could not renew this node's registration; other nodes cannot forward to it if it lapses", "node_id", r.self.ID, "err", err)
		case holder != nil:
			// Our lease ran out (the store was out of reach for longer
			// than it) and another node took the id.
			r.opts.Logger.Error("this node's id was taken by another node after its registration lapsed: requests for its transactions go there", "node_id", r.self.ID, "holder_addr", holder.Addr)
		}
	}
}

// Leave ends the registration, at once: the node's transactions are gone
// with it, and the other nodes say so rather than forward to it.
func (r *Registry) Leave(ctx context.Context) error {
	r.mu.Lock()
	started := r.started
	r.started = false
	r.mu.Unlock()
	if !started {
		return nil
	}
	close(r.stop)
	<-r.done
	_, err := kv.Run(ctx, r.store, func(tx kv.Tx) error {
		cur, err := get(ctx, tx, r.self.ID)
		if err != nil || cur == nil || cur.Instance != r.self.Instance {
			return err // gone already, or another's now
		}
		return tx.Clear(keyspace.Node(r.self.ID))
	})
	return err
}

// Self is the node's own registration.
func (r *Registry) Self() Member { return r.self }

// Locate returns the live node registered as id, or ErrGone. It reads the
// store at most once a second per id.
func (r *Registry) Locate(ctx context.Context, id string) (Member, error) {
	now := time.Now()
	r.cacheMu.Lock()
	c, ok := r.located[id]
	r.cacheMu.Unlock()
	if ok && now.Before(c.until) {
		return c.m, nil
	}
	m, err := r.locate(ctx, id)
	r.cacheMu.Lock()
	defer r.cacheMu.Unlock()
	if r.located == nil {
		r.located = map[string]located{}
	}
	if err != nil {
		delete(r.located, id)
		return Member{}, err
	}
	r.located[id] = located{m: m, until: minTime(now.Add(locateTTL), m.Expires)}
	return m, nil
}

// Forget drops what Locate remembers of id: a node that could not be
// reached may have left.
func (r *Registry) Forget(id string) {
	r.cacheMu.Lock()
	defer r.cacheMu.Unlock()
	delete(r.located, id)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// locate reads id's registration.
func (r *Registry) locate(ctx context.Context, id string) (Member, error) {
	var m *Member
	_, err := kv.Run(ctx, r.store, func(tx kv.Tx) (err error) {
		m, err = get(ctx, tx.Snapshot(), id)
		return err
	})
	if err != nil {
		return Member{}, fmt.Errorf("cluster: locate node '%s': %w", id, err)
	}
	if m == nil || !m.Expires.After(time.Now()) {
		return Member{}, ErrGone
	}
	return *m, nil
}

// Members returns the live nodes.
func (r *Registry) Members(ctx context.Context) ([]Member, error) {
	var out []Member
	_, err := kv.Run(ctx, r.store, func(tx kv.Tx) error {
		out = out[:0]
		it := tx.Snapshot().Scan(ctx, keyspace.Nodes(), kv.ScanOptions{})
		defer it.Close()
		now := time.Now()
		for it.Next() {
			id, err := keyspace.LastString(it.Key())
			if err != nil {
				return err
			}
			m, err := decode(id, it.Value())
			if err != nil {
				return err
			}
			if m.Expires.After(now) {
				out = append(out, *m)
			}
		}
		return it.Err()
	})
	return out, err
}

func get(ctx context.Context, rd kv.Reader, id string) (*Member, error) {
	v, err := rd.Get(ctx, keyspace.Node(id))
	if errors.Is(err, kv.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decode(id, v)
}

func decode(id string, v []byte) (*Member, error) {
	m := &Member{ID: id}
	if err := json.Unmarshal(v, m); err != nil {
		return nil, fmt.Errorf("cluster: node '%s' registration: %w", id, err)
	}
	return m, nil
}

func put(tx kv.Tx, m Member, expires time.Time) error {
	m.Expires = expires
	v, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return tx.Set(keyspace.Node(m.ID), v)
}
