package sqlkv

import (
	"context"
	"errors"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// foldBatch is how many counter keys one folding transaction handles.
const foldBatch = 500

// maintainer does the store's background work: folding counter deltas into
// folio_kv, and removing tombstones nobody can need any more. Every node runs
// one; a transaction-scoped advisory lock makes them take turns, and the work
// is correct even without it (row locks decide), so a node dying mid-way
// costs nothing.
type maintainer struct {
	s        *Store
	foldKick chan struct{}
	samples  []horizonSample // for tombstone collection, oldest first
}

// horizonSample is the log horizon as it was at a moment: every transaction
// below h had ended by then.
type horizonSample struct {
	at time.Time
	h  kv.Position
}

func newMaintainer(s *Store) *maintainer {
	return &maintainer{s: s, foldKick: make(chan struct{}, 1)}
}

// kickFold asks for a fold soon (after FoldDelay, so that a burst of adds is
// folded once).
func (m *maintainer) kickFold() {
	select {
	case m.foldKick <- struct{}{}:
	default:
	}
}

func (m *maintainer) run(ctx context.Context) {
	m.kickFold() // deltas left by earlier runs
	gcEvery := min(max(m.s.opts.MaxTxAge/8, 10*time.Millisecond), 30*time.Second)
	gc := time.NewTicker(gcEvery)
	defer gc.Stop()
	var foldAt <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.foldKick:
			if foldAt == nil {
				foldAt = time.After(m.s.opts.FoldDelay)
			}
		case <-foldAt:
			foldAt = nil
			if err := m.fold(ctx); err != nil && ctx.Err() == nil {
				m.s.log.Warn("folding counter deltas failed; will retry", "err", err)
				foldAt = time.After(time.Second)
			}
		case <-gc.C:
			if err := m.collect(ctx); err != nil && ctx.Err() == nil {
				m.s.log.Warn("collecting tombstones failed; will retry", "err", err)
			}
			if err := m.collectCounters(ctx); err != nil && ctx.Err() == nil && !isConflict(err) {
				m.s.log.Warn("collecting counter keys failed; will retry", "err", err)
			}
		}
	}
}

// fold sums counter deltas into folio_kv until none are left.
func (m *maintainer) fold(ctx context.Context) error {
	for {
		n, err := m.foldSome(ctx)
		if err != nil || n < foldBatch {
			return err
		}
	}
}

// foldSome folds the deltas of up to foldBatch keys in one READ COMMITTED
// transaction, and returns how many keys it looked at.
//
// Why it is safe next to SERIALIZABLE commits: it deletes the deltas first,
// then locks the stored row and adds the deltas newer than the row's sx (the
// others were retired by a Set or Clear) to the newest committed value. A Set
// or Clear racing with it either committed first (the fold sees its sx) or
// finds the row changed under it and fails with a serialization error. The
// row keeps its sx, so deltas of transactions still running count after the
// fold as before it; it gets a new wx, so that a reader that missed one of
// the folded deltas still conflicts (a reader that saw them all conflicts
// too: a false conflict, for readers of a counter with recent adds).
func (m *maintainer) foldSome(ctx context.Context) (int, error) {
	conn, err := m.s.pool.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer m.s.releaseConn(conn)
	tx, err := conn.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(context.Background())
	var mine bool
	if err := tx.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock($1)", int64(maintenanceLockKey)).Scan(&mine); err != nil || !mine {
		return 0, err // another node is at it
	}
	keys, err := collectBytes(tx.Query(ctx, "SELECT k FROM folio_delta GROUP BY k LIMIT $1", foldBatch))
	if err != nil || len(keys) == 0 {
		return 0, err
	}
	type delta struct {
		wx kv.Position
		d  int64
	}
	deltas := map[string][]delta{}
	rows, err := tx.Query(ctx, "DELETE FROM folio_delta WHERE k = ANY ($1) RETURNING k, wx::text, d", keys)
	if err != nil {
		return 0, err
	}
	var k []byte
	var wx string
	var d int64
	if _, err := pgx.ForEachRow(rows, []any{&k, &wx, &d}, func() error {
		deltas[string(k)] = append(deltas[string(k)], delta{parsePosition(wx), d})
		return nil
	}); err != nil {
		return 0, err
	}
	pending := make([][]byte, 0, len(deltas))
	for key := range deltas {
		pending = append(pending, []byte(key))
	}
	// Keys whose row appears meanwhile (a concurrent insert committed) go
	// round again, this time as updates.
	for len(pending) > 0 {
		type stored struct {
			v  []byte
			sx kv.Position
		}
		rowsOf := map[string]stored{}
		rows, err := tx.Query(ctx, "SELECT k, v, sx::text FROM folio_kv WHERE k = ANY ($1) FOR UPDATE", pending)
		if err != nil {
			return 0, err
		}
		var v []byte
		var sx string
		if _, err := pgx.ForEachRow(rows, []any{&k, &v, &sx}, func() error {
			rowsOf[string(k)] = stored{v, parsePosition(sx)}
			return nil
		}); err != nil {
			return 0, err
		}
		var updK, updV, insK, insV [][]byte
		for _, key := range pending {
			row, exists := rowsOf[string(key)]
			var sum int64
			live := false
			for _, dl := range deltas[string(key)] {
				if dl.wx > row.sx {
					sum += dl.d
					live = true
				}
			}
			switch {
			case !live:
				// Only retired deltas: deleting them was all there was to do.
			case exists:
				if row.v != nil {
					sum += kv.DecodeCounter(row.v)
				}
				updK, updV = append(updK, key), append(updV, kv.EncodeCounter(sum))
			default:
				insK, insV = append(insK, key), append(insV, kv.EncodeCounter(sum))
			}
		}
		if len(updK) > 0 {
			if _, err := tx.Exec(ctx, `UPDATE folio_kv AS t SET v = u.v, wx = pg_current_xact_id()
				FROM unnest($1::bytea[], $2::bytea[]) AS u(k, v) WHERE t.k = u.k`, updK, updV); err != nil {
				return 0, err
			}
		}
		pending = pending[:0]
		if len(insK) > 0 {
			inserted, err := collectBytes(tx.Query(ctx, `INSERT INTO folio_kv (k, v, wx, sx)
				SELECT u.k, u.v, pg_current_xact_id(), '0'::xid8 FROM unnest($1::bytea[], $2::bytea[]) AS u(k, v)
				ON CONFLICT (k) DO NOTHING RETURNING k`, insK, insV))
			if err != nil {
				return 0, err
			}
			done := map[string]bool{}
			for _, key := range inserted {
				done[string(key)] = true
			}
			for _, key := range insK {
				if !done[string(key)] {
					pending = append(pending, key)
				}
			}
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, err
	}
	return len(keys), nil
}

// collect removes tombstones that every transaction still able to commit
// sees. A transaction that read a key before it was cleared must still find
// the tombstone at validation, so a tombstone goes only once it was written
// before a horizon sampled more than MaxTxAge (plus a margin) ago: any
// snapshot taken before that sample belongs to a transaction too old to
// commit. Samples are taken here, one per run. A tombstone with deltas stays
// (its sx retires them) until the folder has deleted them.
func (m *maintainer) collect(ctx context.Context) error {
	var h string
	if err := m.s.pool.QueryRow(ctx, "SELECT pg_snapshot_xmin(pg_current_snapshot())::text").Scan(&h); err != nil {
		return err
	}
	// Taken after the answer came: the sample is at least this old.
	m.samples = append(m.samples, horizonSample{at: time.Now(), h: parsePosition(h)})
	keep := m.s.opts.MaxTxAge + m.s.opts.tombstoneMargin
	safe := -1
	for i, smp := range m.samples {
		if time.Since(smp.at) >= keep {
			safe = i
		}
	}
	if safe < 0 {
		return nil
	}
	below := m.samples[safe].h
	m.samples = m.samples[safe:]
	conn, err := m.s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer m.s.releaseConn(conn)
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	var mine bool
	if err := tx.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock($1)", int64(maintenanceLockKey)).Scan(&mine); err != nil || !mine {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM folio_kv AS t WHERE v IS NULL AND wx < $1::text::xid8
		AND NOT EXISTS (SELECT 1 FROM folio_delta AS d WHERE d.k = t.k)`, formatPosition(below)); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// A counter key is gone when it has no deltas and no live value.
const (
	counterGone = `NOT EXISTS (SELECT 1 FROM folio_delta AS d WHERE d.k = c.k)
		AND NOT EXISTS (SELECT 1 FROM folio_kv AS t WHERE t.k = c.k AND t.v IS NOT NULL)`
	findGoneCounters   = "SELECT k FROM folio_counter AS c WHERE " + counterGone + " LIMIT $1"
	removeGoneCounters = "DELETE FROM folio_counter AS c WHERE c.k = ANY ($1) AND " + counterGone
)

// collectCounters removes from folio_counter the keys of counters that are
// gone (no deltas, no live value: those of a dropped collection), so that
// the table does not grow with every collection ever made. An Add that finds
// a key here does not insert it again, so the removal must not slip between
// that Add's look and its commit: the removal runs in a SERIALIZABLE
// transaction that reads the key's deltas, the Add reads folio_counter
// (folio_apply), and SSI fails one of the two. Candidates are found first
// without SSI, so that a pass with nothing to remove takes no predicate
// locks that could make concurrent commits fail.
func (m *maintainer) collectCounters(ctx context.Context) error {
	keys, err := collectBytes(m.s.pool.Query(ctx, findGoneCounters, foldBatch))
	if err != nil || len(keys) == 0 {
		return err
	}
	conn, err := m.s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer m.s.releaseConn(conn)
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, removeGoneCounters, keys); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// isConflict tells whether err is a serialization failure or a deadlock,
// which the next pass retries.
func isConflict(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}

func collectBytes(rows pgx.Rows, err error) ([][]byte, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[[]byte])
}
