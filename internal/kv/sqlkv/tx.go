package sqlkv

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// backendTx is the PostgreSQL half of a transaction (kv.TxBackend). Its
// reads run in a SERIALIZABLE READ ONLY DEFERRABLE transaction (a safe
// snapshot: see store.go) on one connection,
// opened by the first read in that read's own round trip (as FoundationDB
// takes a read version at the first read); the commit runs on the same
// connection, or on one taken then if nothing was read. Its mutex lets the
// sweeper or Close reclaim it while its owner may still be using it.
type backendTx struct {
	s       *Store
	started time.Time
	rv      atomic.Uint64 // newest position the snapshot surely includes, once began is set
	began   atomic.Bool   // the read snapshot is open

	mu    sync.Mutex
	conn  *pgxpool.Conn // nil before the first read or commit, and once released
	snap  string        // pg_current_snapshot() of the read transaction, as text
	ended bool
	err   error // why use fails once ended early (too old, store closed)
}

// ReadVersion is the position of the transaction's snapshot. Before its
// first read a transaction has none yet: it could read at any position
// from now on, and answers the newest commit the store knows complete.
func (t *backendTx) ReadVersion() kv.Position {
	if t.began.Load() {
		return kv.Position(t.rv.Load())
	}
	return t.s.watch.lastPosition()
}

// readable tells whether the transaction may still be used. Called with
// t.mu held.
func (t *backendTx) readable() error {
	if t.ended {
		if t.err != nil {
			return t.err
		}
		return kv.ErrTxDone
	}
	if age := time.Since(t.started); age > t.s.opts.MaxTxAge {
		return fmt.Errorf("%w: open for %s, limit %s", kv.ErrTxTooOld, age.Round(time.Millisecond), t.s.opts.MaxTxAge)
	}
	return nil
}

// beginReadSQL opens the read snapshot and reads it with the newest
// position it is sure to include: every transaction below its xmin has
// ended. The snapshot is a safe one (DEFERRABLE: PostgreSQL waits, if
// commits are running, until none of them can be serialized before a
// commit the snapshot already holds), so that a read-only transaction sees
// a prefix of the commits' serial order (store.go, "Read-only
// transactions").
const (
	beginReadSQL = "BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY DEFERRABLE"
	snapshotSQL  = `SELECT s::text, greatest(
			coalesce((SELECT max(x) FROM folio_log WHERE x < pg_snapshot_xmin(s)), '0'::xid8),
			(SELECT trimmed_commit FROM folio_meta))::text
		FROM pg_current_snapshot() AS s`
)

// read sends a read's statements, queued by queue, on the transaction's
// connection. The first read takes a connection and opens the snapshot in
// the same round trip. Called with t.mu held; the caller closes the results.
func (t *backendTx) read(ctx context.Context, doing string, queue func(b *pgx.Batch)) (pgx.BatchResults, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	opening := !t.began.Load()
	b := &pgx.Batch{}
	if opening {
		if t.conn == nil {
			conn, err := t.s.acquire(ctx, doing+": get a connection", t.s.opts.AcquireTimeout)
			if err != nil {
				return nil, err
			}
			t.conn = conn
		}
		b.Queue(beginReadSQL)
		b.Queue(snapshotSQL)
	}
	queue(b)
	br := t.conn.SendBatch(ctx, b)
	if !opening {
		return br, nil
	}
	var snap, rv string
	_, err := br.Exec()
	if err == nil {
		err = br.QueryRow().Scan(&snap, &rv)
	}
	if err != nil {
		br.Close()
		// Give the connection back: the next read starts afresh.
		t.s.releaseConn(t.conn)
		t.conn = nil
		return nil, t.s.fail(doing, err)
	}
	t.snap = snap
	t.rv.Store(uint64(parsePosition(rv)))
	t.began.Store(true)
	return br, nil
}

// getSQL reads a key's stored value and the sum of its live counter deltas
// (those newer than the key's last Set or Clear).
const getSQL = `SELECT b.v, b.v IS NOT NULL,
		(SELECT sum(d) FROM folio_delta WHERE k = $1 AND wx > coalesce(b.sx, '0'::xid8))::text
	FROM (SELECT $1::bytea AS k) AS q LEFT JOIN folio_kv AS b ON b.k = q.k`

func (t *backendTx) Get(ctx context.Context, key []byte) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	br, err := t.read(ctx, "get", func(b *pgx.Batch) { b.Queue(getSQL, notNull(key)) })
	if err != nil {
		return nil, err
	}
	var v []byte
	var live bool
	var sum *string
	err = br.QueryRow().Scan(&v, &live, &sum)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, t.s.fail("get", err)
	}
	v, ok := resolve(v, live, sum)
	if !ok {
		return nil, kv.ErrNotFound
	}
	return v, nil
}

// getManySQL is getSQL for an array of keys, one row per key in order.
const getManySQL = `SELECT b.v, b.v IS NOT NULL,
		(SELECT sum(d) FROM folio_delta WHERE k = q.k AND wx > coalesce(b.sx, '0'::xid8))::text
	FROM unnest($1::bytea[]) WITH ORDINALITY AS q(k, i) LEFT JOIN folio_kv AS b ON b.k = q.k
	ORDER BY q.i`

// maxGetMany bounds the keys of one GetMany statement; more take more
// statements in the same round trip.
const maxGetMany = 1000

// GetMany reads keys in one round trip (kv.BatchGetter).
func (t *backendTx) GetMany(ctx context.Context, keys [][]byte) ([][]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	br, err := t.read(ctx, "get many", func(b *pgx.Batch) {
		for chunk := range slices.Chunk(keys, maxGetMany) {
			arg := make([][]byte, len(chunk))
			for i, k := range chunk {
				arg[i] = notNull(k)
			}
			b.Queue(getManySQL, arg)
		}
	})
	if err != nil {
		return nil, err
	}
	values := make([][]byte, 0, len(keys))
	for range slices.Chunk(keys, maxGetMany) {
		if err = readValues(br, &values); err != nil {
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err == nil && len(values) != len(keys) {
		err = fmt.Errorf("%d rows for %d keys", len(values), len(keys))
	}
	if err != nil {
		return nil, t.s.fail("get many", err)
	}
	return values, nil
}

// readValues appends the values of one getManySQL's rows, nil for a key
// without one.
func readValues(br pgx.BatchResults, values *[][]byte) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	for rows.Next() {
		var v []byte
		var live bool
		var sum *string
		if err := rows.Scan(&v, &live, &sum); err != nil {
			rows.Close()
			return err
		}
		v, ok := resolve(v, live, sum)
		if !ok {
			v = nil
		}
		*values = append(*values, v)
	}
	return rows.Err()
}

// resolve computes a key's value from its row (live tells that v is not a
// tombstone or missing) and the sum of its deltas (nil if none).
func resolve(v []byte, live bool, sum *string) ([]byte, bool) {
	if sum == nil {
		if !live {
			return nil, false
		}
		if v == nil {
			v = []byte{}
		}
		return v, true
	}
	var base int64
	if live {
		base = kv.DecodeCounter(v)
	}
	return kv.EncodeCounter(base + wrapSum(*sum)), true
}

// wrapSum reads a sum of int64 deltas (a numeric, so it can exceed int64)
// and wraps it to 64 bits, as repeated int64 additions would.
func wrapSum(s string) int64 {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return 0
	}
	mask := new(big.Int).SetUint64(^uint64(0))
	return int64(n.And(n, mask).Uint64())
}

// Scan pages through r with keyset pagination: each page is one query in the
// transaction's snapshot, so the connection is free between pages for other
// reads of the same transaction.
func (t *backendTx) Scan(ctx context.Context, r kv.Range, reverse bool) kv.RawIterator {
	return &rawIterator{t: t, ctx: ctx, r: kv.Range{Begin: notNull(r.Begin), End: notNull(r.End)}, reverse: reverse, pageSize: firstPage}
}

const (
	firstPage = 128
	maxPage   = 4096
)

// scanSQL returns the next page of a range, in order: the stored rows
// (tombstones included, so that paging moves past them) merged with the
// per-key delta sums. Each side is limited first, which keeps the merge's
// first $3 rows exact.
const scanSQL = `SELECT coalesce(b.k, d.k), b.v, b.v IS NOT NULL, d.s::text FROM
	(SELECT k, v FROM folio_kv WHERE k >= $1 AND k < $2 ORDER BY k %[1]s LIMIT $3) AS b
	FULL JOIN (
		SELECT dd.k, sum(dd.d) AS s FROM folio_delta AS dd LEFT JOIN folio_kv AS kb ON kb.k = dd.k
		WHERE dd.k >= $1 AND dd.k < $2 AND dd.wx > coalesce(kb.sx, '0'::xid8)
		GROUP BY dd.k ORDER BY dd.k %[1]s LIMIT $3) AS d
	ON d.k = b.k
	ORDER BY 1 %[1]s LIMIT $3`

var (
	scanForwardSQL = fmt.Sprintf(scanSQL, "ASC")
	scanReverseSQL = fmt.Sprintf(scanSQL, "DESC")
)

type scanRow struct {
	key, value []byte
	live       bool
	sum        *string
}

type rawIterator struct {
	t        *backendTx
	ctx      context.Context
	r        kv.Range // what is left to read
	reverse  bool
	pageSize int

	page  []scanRow
	i     int
	last  bool // the current page is the last one
	err   error
	key   []byte
	value []byte
}

func (it *rawIterator) Next() bool {
	for {
		if it.err != nil {
			return false
		}
		if it.i < len(it.page) {
			row := it.page[it.i]
			it.i++
			if v, ok := resolve(row.value, row.live, row.sum); ok {
				it.key, it.value = row.key, v
				return true
			}
			continue
		}
		if it.last {
			it.page = nil
			return false
		}
		it.fetch()
	}
}

// fetch reads the next page and narrows the remaining range past it.
func (it *rawIterator) fetch() {
	t := it.t
	t.mu.Lock()
	defer t.mu.Unlock()
	q := scanForwardSQL
	if it.reverse {
		q = scanReverseSQL
	}
	br, err := t.read(it.ctx, "scan", func(b *pgx.Batch) { b.Queue(q, it.r.Begin, it.r.End, it.pageSize) })
	if err != nil {
		it.err = err
		return
	}
	defer br.Close()
	rows, err := br.Query()
	if err != nil {
		it.err = t.s.fail("scan", err)
		return
	}
	it.page, it.i = it.page[:0], 0
	for rows.Next() {
		var row scanRow
		if err := rows.Scan(&row.key, &row.value, &row.live, &row.sum); err != nil {
			rows.Close()
			it.err = t.s.fail("scan", err)
			return
		}
		it.page = append(it.page, row)
	}
	if err := rows.Err(); err != nil {
		it.err = t.s.fail("scan", err)
		return
	}
	it.last = len(it.page) < it.pageSize
	if n := len(it.page); n > 0 {
		lastKey := it.page[n-1].key
		if it.reverse {
			it.r.End = lastKey
		} else {
			it.r.Begin = kv.KeyAfter(lastKey)
		}
	}
	it.pageSize = min(it.pageSize*2, maxPage)
}

func (it *rawIterator) Key() []byte   { return it.key }
func (it *rawIterator) Value() []byte { return it.value }
func (it *rawIterator) Err() error    { return it.err }

func (it *rawIterator) Close() error {
	it.page, it.last = nil, true
	return nil
}

// Commit validates and applies the transaction (see the package comment) and
// returns its position, in one round trip.
func (t *backendTx) Commit(ctx context.Context, req *kv.CommitRequest) (kv.Position, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.readable(); err != nil {
		return 0, err
	}
	s := t.s
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return 0, kv.ErrClosed
	}
	s.inflight.Add(1)
	s.mu.Unlock()
	defer s.inflight.Done()

	if t.conn == nil {
		conn, err := s.acquire(ctx, "commit: get a connection", s.opts.AcquireTimeout)
		if err != nil {
			return 0, err
		}
		t.conn = conn
	}
	// Once sent, the commit lands or not whatever the caller's context
	// does: wait for the outcome rather than report as failed a commit that
	// then lands.
	ctx = context.WithoutCancel(ctx)
	b := &pgx.Batch{}
	var snap any // a transaction that read nothing validates against the commit's own snapshot
	if t.began.Load() {
		b.Queue("ROLLBACK") // the read snapshot
		snap = t.snap
	}
	args, added := commitArgs(snap, req)
	// Counter keys new to this node are listed in a transaction of their
	// own first: listed inside the SERIALIZABLE one, two first Adds to a
	// new key at once would conflict (ON CONFLICT on a row the snapshot
	// cannot see), and concurrent Adds must not.
	unlisted := s.counterKeys.unknown(added)
	if len(unlisted) > 0 {
		b.Queue("BEGIN")
		b.Queue("INSERT INTO folio_counter (k) SELECT unnest($1::bytea[]) ON CONFLICT (k) DO NOTHING", unlisted)
		b.Queue("COMMIT")
	}
	queueApply(b, args)
	pos, err := t.sendCommit(ctx, b)
	// PostgreSQL's SSI tracks reads by index page, so two commits whose
	// keys merely share a page can fail one of them with 40001 though
	// neither wrote what the other read. Nothing of the failed attempt's
	// serializable transaction applied, and folio_apply validates against
	// the transaction's read snapshot each time, so trying again is exact:
	// a true conflict is then reported by the validation itself. (One that
	// read nothing validates against each attempt's own snapshot, as a
	// commit sent a moment later would.)
	for attempt := 1; attempt < maxCommitAttempts && spuriousConflict(err); attempt++ {
		s.commitRetries.Add(1)
		time.Sleep(time.Duration(rand.Int64N(int64(attempt) * int64(time.Millisecond))))
		// The failed attempt's transaction is ended on its own first: pgx
		// drops a failed batch's statements from its cache and can only
		// deallocate them outside a transaction, before preparing them
		// again.
		if t.conn.Conn().PgConn().TxStatus() != 'I' {
			if _, rerr := t.conn.Exec(ctx, "ROLLBACK"); rerr != nil {
				// The last attempt surely failed: not an unknown outcome.
				return 0, s.fail("commit", rerr)
			}
		}
		b = &pgx.Batch{}
		queueApply(b, args)
		pos, err = t.sendCommit(ctx, b)
	}
	if err != nil {
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) && !pgconn.SafeToRetry(err) {
			// The connection broke after the commit was sent: it may have
			// landed. Not retryable, since a retry could apply it twice.
			return 0, fmt.Errorf("sqlkv: commit outcome unknown on %s: %w", s.where, err)
		}
		return 0, s.fail("commit", err)
	}
	p := parsePosition(pos)
	s.counterKeys.listed(added)
	s.announce.committed(p, len(added) > 0)
	return p, nil
}

// maxCommitAttempts bounds the tries of a commit that PostgreSQL's SSI
// fails though Folio's validation found no conflict.
const maxCommitAttempts = 4

// queueApply queues the serializable transaction that validates and
// applies a commit.
func queueApply(b *pgx.Batch, args []any) {
	b.Queue("BEGIN ISOLATION LEVEL SERIALIZABLE")
	b.Queue("SELECT folio_apply($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)", args...)
	b.Queue("COMMIT")
}

// sendCommit sends a commit's batch, which ends with queueApply's three
// statements, and returns the position folio_apply answered.
func (t *backendTx) sendCommit(ctx context.Context, b *pgx.Batch) (string, error) {
	br := t.conn.SendBatch(ctx, b)
	var err error
	for range b.Len() - 2 { // everything before the folio_apply, BEGIN included
		if _, err = br.Exec(); err != nil {
			break
		}
	}
	var pos string
	if err == nil {
		err = br.QueryRow().Scan(&pos)
	}
	if err == nil {
		_, err = br.Exec() // COMMIT, where SSI may still fail it
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return pos, err
}

// spuriousConflict tells whether err is a serialization failure or a
// deadlock raised by PostgreSQL itself rather than by folio_apply's
// validation (whose message starts "folio:").
func spuriousConflict(err error) bool {
	var pgErr *pgconn.PgError
	return isConflict(err) && errors.As(err, &pgErr) && !strings.HasPrefix(pgErr.Message, "folio:")
}

// commitArgs flattens a commit request into folio_apply's array arguments,
// and returns the keys it adds to (ak) apart.
func commitArgs(snap any, req *kv.CommitRequest) (args []any, added [][]byte) {
	var rb, re, cb, ce, sk, sv, dk, ak [][]byte
	var ad []int64
	for _, r := range req.ReadRanges {
		rb, re = append(rb, notNull(r.Begin)), append(re, notNull(r.End))
	}
	for _, r := range req.Writes.ClearedRanges() {
		cb, ce = append(cb, notNull(r.Begin)), append(ce, notNull(r.End))
	}
	req.Writes.Mutations(func(m *kv.Mutation) bool {
		switch m.Kind {
		case kv.OpSet:
			sk, sv = append(sk, m.Key), append(sv, notNull(m.Value))
		case kv.OpClear:
			dk = append(dk, m.Key)
		case kv.OpAdd:
			ak, ad = append(ak, m.Key), append(ad, m.Delta)
		}
		return true
	})
	var rec []byte
	if len(req.Log) > 0 {
		rec = kv.EncodeLogRecords(req.Log)
	}
	return []any{snap, rb, re, cb, ce, sk, sv, dk, ak, ad, rec}, ak
}

// Release is called once when the transaction ends.
func (t *backendTx) Release() { t.Expire(nil) }

// Expire gives the connection back (ending the read transaction if the
// commit did not) and makes later use fail with reason (kv.Reclaimable). It
// reports whether the transaction was still open.
func (t *backendTx) Expire(reason error) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return false
	}
	t.ended, t.err = true, reason
	if t.conn != nil {
		t.s.releaseConnLater(t.conn)
		t.conn = nil
	}
	t.s.txs.Remove(t)
	return true
}

// notNull turns a nil slice into an empty one: pgx sends nil as NULL, which
// would make a range bound compare as unknown and a value a tombstone.
func notNull(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
