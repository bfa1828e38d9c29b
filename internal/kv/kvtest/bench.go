package kvtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
)

// The benchmark suite every backend runs, over BenchKeys keys of 100-byte
// values, next to its own raw baseline (the engine without Folio's layer):
//
//	func BenchmarkCommit(b *testing.B) { kvtest.BenchCommit(b, open) }

// BenchKeys is how many keys the benchmarks load.
const BenchKeys = 100_000

// BenchValue is the value of every loaded key.
var BenchValue = make([]byte, 100)

// BenchKey is the i-th loaded key.
func BenchKey(i int) []byte { return []byte(fmt.Sprintf("bench/%08d", i)) }

// Load writes the benchmark keys into s.
func Load(b *testing.B, s kv.Store) {
	b.Helper()
	ctx := context.Background()
	for start := 0; start < BenchKeys; start += 5000 {
		_, err := kv.Run(ctx, s, func(tx kv.Tx) error {
			for i := start; i < start+5000; i++ {
				if err := tx.Set(BenchKey(i), BenchValue); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// RunWriters runs b.N operations spread over n goroutines, timing each, and
// reports the latency percentiles.
func RunWriters(b *testing.B, n int, op func(rng *rand.Rand) error) {
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

// BenchCommit: a serializable transaction reading one key and writing two,
// at 1, 16 and 64 concurrent writers. open returns a loaded store.
func BenchCommit(b *testing.B, open func(b *testing.B) kv.Store) {
	for _, writers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s := open(b)
			ctx := context.Background()
			RunWriters(b, writers, func(rng *rand.Rand) error {
				tx, err := s.Begin(ctx)
				if err != nil {
					return err
				}
				defer tx.Rollback()
				if _, err := tx.Get(ctx, BenchKey(rng.IntN(BenchKeys))); err != nil {
					return err
				}
				tx.Set(BenchKey(rng.IntN(BenchKeys)), BenchValue)
				tx.Set(BenchKey(rng.IntN(BenchKeys)), BenchValue)
				_, err = tx.Commit(ctx)
				return err
			})
		})
	}
}

// BenchGet: point reads of random keys inside one transaction, on one
// goroutine.
func BenchGet(b *testing.B, s kv.Store) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	tx, err := s.Begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tx.Get(ctx, BenchKey(rng.IntN(BenchKeys))); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
}

// BenchGetOwnTx: a whole read-only transaction per point read.
func BenchGetOwnTx(b *testing.B, s kv.Store) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tx, err := s.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tx.Get(ctx, BenchKey(rng.IntN(BenchKeys))); err != nil {
			b.Fatal(err)
		}
		tx.Commit(ctx)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
}

// BenchScan100: a 100-key scan from a random start inside a transaction.
func BenchScan100(b *testing.B, s kv.Store) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	tx, err := s.Begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		it := tx.Scan(ctx, kv.Range{Begin: BenchKey(rng.IntN(BenchKeys - 100))}, kv.ScanOptions{Limit: 100})
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
