package sqlkv

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/kvtest"
	"github.com/foliodb/folio/tests/pgtest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The benchmarks mirror pebblekv's: 100,000 keys of 100-byte values. They
// run on the throwaway cluster, which has fsync off unless
// FOLIO_TEST_POSTGRES_FSYNC=on (or FOLIO_TEST_POSTGRES_URL names a durable
// server): say which when recording numbers. The RawPostgres benchmarks do
// the same work as plain SQL on the same table, without Folio's layer.

func loadedStore(b *testing.B) *Store {
	b.Helper()
	s, err := Open(context.Background(), Options{URL: pgtest.NewDatabase(b), MaxConns: 70})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	kvtest.Load(b, s)
	if _, err := s.pool.Exec(context.Background(), "VACUUM ANALYZE folio_kv"); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkCommit: kvtest.BenchCommit, durable.
func BenchmarkCommit(b *testing.B) {
	kvtest.BenchCommit(b, func(b *testing.B) kv.Store { return loadedStore(b) })
}

// BenchmarkRawPostgresCommit is BenchmarkCommit as one plain SERIALIZABLE
// transaction (a SELECT and two upserts) on the same table: the baseline
// that shows what Folio's layer costs.
func BenchmarkRawPostgresCommit(b *testing.B) {
	for _, writers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s := loadedStore(b)
			pool := s.pool
			ctx := context.Background()
			const upsert = `INSERT INTO folio_kv (k, v, wx, sx) VALUES ($1, $2, pg_current_xact_id(), pg_current_xact_id())
				ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v, wx = EXCLUDED.wx, sx = EXCLUDED.sx`
			kvtest.RunWriters(b, writers, func(rng *rand.Rand) error {
				err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.Serializable}, func(tx pgx.Tx) error {
					var v []byte
					if err := tx.QueryRow(ctx, "SELECT v FROM folio_kv WHERE k = $1", kvtest.BenchKey(rng.IntN(kvtest.BenchKeys))).Scan(&v); err != nil {
						return err
					}
					bt := &pgx.Batch{}
					bt.Queue(upsert, kvtest.BenchKey(rng.IntN(kvtest.BenchKeys)), kvtest.BenchValue)
					bt.Queue(upsert, kvtest.BenchKey(rng.IntN(kvtest.BenchKeys)), kvtest.BenchValue)
					return tx.SendBatch(ctx, bt).Close()
				})
				if err != nil {
					return s.fail("raw commit", err)
				}
				return nil
			})
		})
	}
}

// BenchmarkGet: kvtest.BenchGet.
func BenchmarkGet(b *testing.B) { kvtest.BenchGet(b, loadedStore(b)) }

// BenchmarkGetOwnTx: kvtest.BenchGetOwnTx.
func BenchmarkGetOwnTx(b *testing.B) { kvtest.BenchGetOwnTx(b, loadedStore(b)) }

// BenchmarkRawPostgresGet is BenchmarkGet as plain SELECTs in one
// REPEATABLE READ transaction.
func BenchmarkRawPostgresGet(b *testing.B) {
	s := loadedStore(b)
	ctx := context.Background()
	tx := rawSnapshot(b, s.pool)
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var v []byte
		if err := tx.QueryRow(ctx, "SELECT v FROM folio_kv WHERE k = $1", kvtest.BenchKey(rng.IntN(kvtest.BenchKeys))).Scan(&v); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
}

// BenchmarkScan100: kvtest.BenchScan100.
func BenchmarkScan100(b *testing.B) { kvtest.BenchScan100(b, loadedStore(b)) }

// BenchmarkRawPostgresScan100 is BenchmarkScan100 as a plain range SELECT
// with LIMIT 100.
func BenchmarkRawPostgresScan100(b *testing.B) {
	s := loadedStore(b)
	ctx := context.Background()
	tx := rawSnapshot(b, s.pool)
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rows, err := tx.Query(ctx, "SELECT k, v FROM folio_kv WHERE k >= $1 ORDER BY k LIMIT 100", kvtest.BenchKey(rng.IntN(kvtest.BenchKeys-100)))
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var k, v []byte
			if err := rows.Scan(&k, &v); err != nil {
				b.Fatal(err)
			}
			n++
		}
		if err := rows.Err(); err != nil || n != 100 {
			b.Fatalf("scan returned %d rows, %v", n, err)
		}
	}
}

func rawSnapshot(b *testing.B, pool *pgxpool.Pool) pgx.Tx {
	b.Helper()
	ctx := context.Background()
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tx.Rollback(context.Background()) })
	return tx
}

// BenchmarkGet10 reads ten random keys in a transaction of their own, one
// Get after another (Get) or at once (GetMany), beside the same as one
// plain SELECT ... = ANY in a REPEATABLE READ transaction (RawPostgres).
func BenchmarkGet10(b *testing.B) {
	s := loadedStore(b)
	ctx := context.Background()
	keys := func(rng *rand.Rand) [][]byte {
		ks := make([][]byte, 10)
		for i := range ks {
			ks[i] = kvtest.BenchKey(rng.IntN(kvtest.BenchKeys))
		}
		return ks
	}
	for _, way := range []struct {
		name string
		read func(rng *rand.Rand) error
	}{
		{"Get", func(rng *rand.Rand) error {
			tx, err := s.Begin(ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			for _, k := range keys(rng) {
				if _, err := tx.Get(ctx, k); err != nil {
					return err
				}
			}
			return nil
		}},
		{"GetMany", func(rng *rand.Rand) error {
			tx, err := s.Begin(ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			vs, err := tx.GetMany(ctx, keys(rng))
			if err == nil && vs[9] == nil {
				err = fmt.Errorf("a loaded key has no value")
			}
			return err
		}},
		{"RawPostgres", func(rng *rand.Rand) error {
			return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
				rows, err := tx.Query(ctx, "SELECT v FROM folio_kv WHERE k = ANY($1)", keys(rng))
				if err != nil {
					return err
				}
				_, err = pgx.CollectRows(rows, pgx.RowTo[[]byte])
				return err
			})
		}},
	} {
		b.Run(way.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			for i := 0; i < b.N; i++ {
				if err := way.read(rng); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tx/s")
		})
	}
}
