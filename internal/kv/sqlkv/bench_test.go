package sqlkv

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/pgtest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The benchmarks mirror pebblekv's: 100,000 keys of 100-byte values. They
// run on the throwaway cluster, which has fsync off unless
// FOLIO_TEST_POSTGRES_FSYNC=on (or FOLIO_TEST_POSTGRES_URL names a durable
// server): say which when recording numbers. The RawPostgres benchmarks do
// the same work as plain SQL on the same table, without Folio's layer.
const benchKeys = 100_000

func benchKey(i int) []byte { return []byte(fmt.Sprintf("bench/%08d", i)) }

var benchValue = make([]byte, 100)

func loadedStore(b *testing.B) *Store {
	b.Helper()
	s, err := Open(context.Background(), Options{URL: pgtest.NewDatabase(b), MaxConns: 70})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	ctx := context.Background()
	for start := 0; start < benchKeys; start += 5000 {
		_, err := kv.Run(ctx, s, func(tx kv.Tx) error {
			for i := start; i < start+5000; i++ {
				if err := tx.Set(benchKey(i), benchValue); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if _, err := s.pool.Exec(ctx, "VACUUM ANALYZE folio_kv"); err != nil {
		b.Fatal(err)
	}
	return s
}

// runWriters runs b.N operations spread over n goroutines, timing each, and
// reports the latency percentiles.
func runWriters(b *testing.B, n int, op func(rng *rand.Rand) error) {
	b.Helper()
	var mu sync.Mutex
	var latencies []time.Duration
	var failures int
	var wg sync.WaitGroup
	per := b.N / n
	b.ResetTimer()
	for w := 0; w < n; w++ {
		count := per
		if w == 0 {
			count += b.N % n
		}
		wg.Add(1)
		go func(seed uint64, count int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 7))
			local := make([]time.Duration, 0, count)
			fails := 0
			for i := 0; i < count; i++ {
				start := time.Now()
				if err := op(rng); err != nil {
					if !kv.IsRetryable(err) {
						b.Error(err)
						return
					}
					fails++
				}
				local = append(local, time.Since(start))
			}
			mu.Lock()
			latencies = append(latencies, local...)
			failures += fails
			mu.Unlock()
		}(uint64(w), count)
	}
	wg.Wait()
	b.StopTimer()
	slices.Sort(latencies)
	if len(latencies) > 0 {
		b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds()), "p99-µs")
	}
	b.ReportMetric(float64(failures)/float64(b.N)*100, "conflict-%")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}

// BenchmarkCommit: a serializable transaction reading one key and writing
// two, at 1, 16 and 64 concurrent writers.
func BenchmarkCommit(b *testing.B) {
	for _, writers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s := loadedStore(b)
			ctx := context.Background()
			runWriters(b, writers, func(rng *rand.Rand) error {
				tx, err := s.Begin(ctx)
				if err != nil {
					return err
				}
				defer tx.Rollback()
				if _, err := tx.Get(ctx, benchKey(rng.IntN(benchKeys))); err != nil {
					return err
				}
				tx.Set(benchKey(rng.IntN(benchKeys)), benchValue)
				tx.Set(benchKey(rng.IntN(benchKeys)), benchValue)
				_, err = tx.Commit(ctx)
				return err
			})
		})
	}
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
			runWriters(b, writers, func(rng *rand.Rand) error {
				err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.Serializable}, func(tx pgx.Tx) error {
					var v []byte
					if err := tx.QueryRow(ctx, "SELECT v FROM folio_kv WHERE k = $1", benchKey(rng.IntN(benchKeys))).Scan(&v); err != nil {
						return err
					}
					bt := &pgx.Batch{}
					bt.Queue(upsert, benchKey(rng.IntN(benchKeys)), benchValue)
					bt.Queue(upsert, benchKey(rng.IntN(benchKeys)), benchValue)
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

// BenchmarkGet: point reads of random keys inside one transaction, on one
// goroutine.
func BenchmarkGet(b *testing.B) {
	s := loadedStore(b)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	tx, err := s.Begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tx.Get(ctx, benchKey(rng.IntN(benchKeys))); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
}

// BenchmarkGetOwnTx: a whole read-only transaction per point read.
func BenchmarkGetOwnTx(b *testing.B) {
	s := loadedStore(b)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tx, err := s.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tx.Get(ctx, benchKey(rng.IntN(benchKeys))); err != nil {
			b.Fatal(err)
		}
		tx.Commit(ctx)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
}

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
		if err := tx.QueryRow(ctx, "SELECT v FROM folio_kv WHERE k = $1", benchKey(rng.IntN(benchKeys))).Scan(&v); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
}

// BenchmarkScan100: a 100-key scan from a random start inside a transaction.
func BenchmarkScan100(b *testing.B) {
	s := loadedStore(b)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	tx, err := s.Begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		it := tx.Scan(ctx, kv.Range{Begin: benchKey(rng.IntN(benchKeys - 100))}, kv.ScanOptions{Limit: 100})
		n := 0
		for it.Next() {
			n++
		}
		if err := it.Err(); err != nil {
			b.Fatal(err)
		}
		it.Close()
		if n != 100 {
			b.Fatalf("scan returned %d keys", n)
		}
	}
}

// BenchmarkRawPostgresScan100 is BenchmarkScan100 as a plain range SELECT
// with LIMIT 100.
func BenchmarkRawPostgresScan100(b *testing.B) {
	s := loadedStore(b)
	ctx := context.Background()
	tx := rawSnapshot(b, s.pool)
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rows, err := tx.Query(ctx, "SELECT k, v FROM folio_kv WHERE k >= $1 ORDER BY k LIMIT 100", benchKey(rng.IntN(benchKeys-100)))
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
