package sqlkv

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// backendTx is the PostgreSQL half of a transaction (kv.TxBackend): a
// connection in a REPEATABLE READ READ ONLY transaction for the reads, and
// the commit on the same connection. Its mutex lets the sweeper or Close
// reclaim it while its owner may still be using it.
type backendTx struct {
	s       *Store
	snap    string      // pg_current_snapshot() of the read transaction, as text
	rv      kv.Position // newest position the snapshot surely includes
	started time.Time

	mu   sync.Mutex
	conn *pgxpool.Conn // nil once released
	err  error         // why reads fail once released early (too old, store closed)
}

func (t *backendTx) ReadVersion() kv.Position { return t.rv }

// readable tells whether the transaction may still use its connection.
// Called with t.mu held.
func (t *backendTx) readable() error {
	if t.conn == nil {
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

// getSQL reads a key's stored value and the sum of its live counter deltas
// (those newer than the key's last Set or Clear).
const getSQL = `SELECT b.v, b.v IS NOT NULL,
		(SELECT sum(d) FROM folio_delta WHERE k = $1 AND wx > coalesce(b.sx, '0'::xid8))::text
	FROM (SELECT $1::bytea AS k) AS q LEFT JOIN folio_kv AS b ON b.k = q.k`

func (t *backendTx) Get(ctx context.Context, key []byte) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.readable(); err != nil {
		return nil, err
	}
	var v []byte
	var live bool
	var sum *string
	if err := t.conn.QueryRow(ctx, getSQL, notNull(key)).Scan(&v, &live, &sum); err != nil {
		return nil, t.s.fail("get", err)
	}
	v, ok := resolve(v, live, sum)
	if !ok {
		return nil, kv.ErrNotFound
	}
	return v, nil
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
	if err := t.readable(); err != nil {
		it.err = err
		return
	}
	q := scanForwardSQL
	if it.reverse {
		q = scanReverseSQL
	}
	rows, err := t.conn.Query(it.ctx, q, it.r.Begin, it.r.End, it.pageSize)
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
// returns its position.
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

	// Once sent, the commit lands or not whatever the caller's context
	// does: wait for the outcome rather than report as failed a commit that
	// then lands.
	ctx = context.WithoutCancel(ctx)
	b := &pgx.Batch{}
	b.Queue("ROLLBACK") // the read snapshot
	b.Queue("BEGIN ISOLATION LEVEL SERIALIZABLE")
	b.Queue("SELECT folio_commit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)", commitArgs(t.snap, req)...)
	b.Queue("COMMIT")
	var pos string
	br := t.conn.SendBatch(ctx, b)
	_, err := br.Exec()
	if err == nil {
		_, err = br.Exec()
	}
	if err == nil {
		err = br.QueryRow().Scan(&pos)
	}
	if err == nil {
		_, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
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
	return parsePosition(pos), nil
}

// commitArgs flattens a commit request into folio_commit's array arguments.
func commitArgs(snap string, req *kv.CommitRequest) []any {
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
	return []any{snap, rb, re, cb, ce, sk, sv, dk, ak, ad, rec}
}

// Release is called once when the transaction ends.
func (t *backendTx) Release() { t.Expire(nil) }

// Expire gives the connection back (ending the read transaction if the
// commit did not) and makes later use fail with reason (kv.Reclaimable). It
// reports whether the transaction still held its connection.
func (t *backendTx) Expire(reason error) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conn == nil {
		return false
	}
	t.s.releaseConn(t.conn)
	t.conn, t.err = nil, reason
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
