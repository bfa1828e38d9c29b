// Package expiry deletes the documents of collections with a ttl once
// they expire. Reads stop returning a document the instant it expires
// (query.Live); the sweeper here frees its space afterwards, in small
// transactions that find expired documents through the ttl field's index
// entries (documents.Service.Sweep) and delete them as ordinary deletes
// whose change log records say why (changelog.Record.Expired), so that
// streams, search and the counters follow as for any delete.
//
// The sweeper keeps out of writers' way: a transaction deletes at most
// Batch documents, it pauses between two, and a transaction that
// conflicts with a writer is not retried at once: its collection waits
// for the next pass. Nothing is persisted but the schemas, so a restart
// sweeps on from wherever the documents are.
package expiry

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/documents"
	"github.com/foliodb/folio/internal/kv"
)

// The defaults of Options.
const (
	// DefaultInterval is the time between two passes: how long after its
	// expiry a document may still take space.
	DefaultInterval = time.Second
	// DefaultBatch is the documents one transaction deletes at most: on
	// PostgreSQL a few hundred keys written at once, on Pebble a batch
	// well under a millisecond to commit.
	DefaultBatch = 100
	// DefaultPause is the wait between two transactions of a pass, which
	// leaves writers the store: at most Batch deletions per pause and
	// transaction, about 10,000 a second at the defaults.
	DefaultPause = 10 * time.Millisecond
)

// Options configure a Sweeper.
type Options struct {
	Interval time.Duration // DefaultInterval if zero
	Batch    int           // DefaultBatch if zero
	Pause    time.Duration // DefaultPause if zero; negative: none
	// Now tells the time documents expire by; the clock's if nil (tests
	// set it, with the documents service's).
	Now func() time.Time
	// Leader, if set, tells whether this node sweeps now: several nodes
	// on one store leave it to one of them. Nil: this one does.
	Leader func(ctx context.Context) (bool, error)
	Logger *slog.Logger
}

// Sweeper deletes expired documents, a pass every Interval.
type Sweeper struct {
	store   kv.Store
	catalog *catalog.Catalog
	docs    *documents.Service
	opts    Options

	expired   atomic.Uint64 // documents deleted since the start
	conflicts atomic.Uint64 // transactions given up for a conflict
}

// New returns a sweeper over the documents of store; Run starts it.
func New(store kv.Store, cat *catalog.Catalog, docs *documents.Service, opts Options) *Sweeper {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Batch <= 0 {
		opts.Batch = DefaultBatch
	}
	if opts.Pause == 0 {
		opts.Pause = DefaultPause
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return time.Now().UTC() }
	}
	return &Sweeper{store: store, catalog: cat, docs: docs, opts: opts}
}

// Stats are the sweeper's counters since it started.
type Stats struct {
	// Expired counts the documents it deleted.
	Expired uint64
	// Conflicts counts its transactions that conflicted with a writer and
	// were left to the next pass.
	Conflicts uint64
}

// Stats returns the counters.
func (s *Sweeper) Stats() Stats {
	return Stats{Expired: s.expired.Load(), Conflicts: s.conflicts.Load()}
}

// Run sweeps every Interval until ctx is done.
func (s *Sweeper) Run(ctx context.Context) {
	t := time.NewTicker(s.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := s.Pass(ctx); err != nil && ctx.Err() == nil && s.opts.Logger != nil {
			s.opts.Logger.Warn("ttl sweep failed; the next pass tries again", "err", err)
		}
	}
}

// Pass sweeps every collection with a ttl once, up to the documents
// expired when it reaches the collection, and reports how many it
// deleted. It logs a line when it deleted any.
func (s *Sweeper) Pass(ctx context.Context) (int, error) {
	if s.opts.Leader != nil {
		leader, err := s.opts.Leader(ctx)
		if err != nil || !leader {
			return 0, err
		}
	}
	start := time.Now()
	colls, err := s.collections(ctx)
	if err != nil {
		return 0, err
	}
	total, swept := 0, 0
	var errs []error
	for _, c := range colls {
		n, err := s.sweep(ctx, c.DB, c.Name, c.ID)
		total += n
		if n > 0 {
			swept++
		}
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			errs = append(errs, err)
		}
	}
	if total > 0 && s.opts.Logger != nil {
		s.opts.Logger.Info("ttl sweep deleted expired documents", "documents", total, "collections", swept, "took", time.Since(start).Round(time.Millisecond))
	}
	return total, errors.Join(errs...)
}

// collections lists the collections whose schemas have a ttl, in every
// database of every namespace.
func (s *Sweeper) collections(ctx context.Context) ([]*catalog.Collection, error) {
	var out []*catalog.Collection
	_, err := kv.Run(ctx, s.store, func(tx kv.Tx) error {
		out = out[:0]
		dbs, err := s.catalog.AllDatabases(ctx, tx)
		if err != nil {
			return err
		}
		for _, db := range dbs {
			colls, err := s.catalog.ListCollections(ctx, tx, db)
			if err != nil {
				return err
			}
			for _, c := range colls {
				if c.Schema.TTL() != nil {
					out = append(out, c)
				}
			}
		}
		return nil
	})
	return out, err
}

// sweep deletes the expired documents of one collection, Batch at a
// time, each batch in a transaction of its own that looks the collection
// up again (so a ttl removed or a collection dropped meanwhile stops it,
// and conflicts with it). A conflict ends the collection's turn.
func (s *Sweeper) sweep(ctx context.Context, db *catalog.Database, name string, id int64) (int, error) {
	total := 0
	var from []byte
	for {
		var res documents.SweepResult
		_, err := kv.RunWith(ctx, s.store, kv.RunOptions{MaxAttempts: 1}, func(tx kv.Tx) error {
			res = documents.SweepResult{}
			coll, err := s.catalog.Collection(ctx, tx, db, name)
			if apierror.CodeOf(err) == apierror.NotFound {
				return nil
			}
			if err != nil || coll.ID != id || coll.Schema.TTL() == nil {
				return err
			}
			res, err = s.docs.Sweep(ctx, tx, coll, s.opts.Now(), from, s.opts.Batch)
			return err
		})
		if kv.IsRetryable(err) {
			s.conflicts.Add(1)
			return total, nil
		}
		if err != nil {
			return total, err
		}
		total += res.Deleted
		s.expired.Add(uint64(res.Deleted))
		if res.Next == nil {
			return total, nil
		}
		from = res.Next
		if s.opts.Pause > 0 {
			select {
			case <-ctx.Done():
				return total, ctx.Err()
			case <-time.After(s.opts.Pause):
			}
		}
	}
}
