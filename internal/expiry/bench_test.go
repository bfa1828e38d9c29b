package expiry_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/expiry"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/backendtest"
)

// BenchmarkInsertWhileSweeping measures single-document inserts into a
// collection with a ttl, alone ("quiet") and while the sweeper deletes a
// backlog of 20,000 expired documents of the same collection
// ("sweeping"), and reports the inserts' p50 and p99 latency: what the
// sweep costs a writer. Timings are the machine's: compare the two
// sub-benchmarks within one run, alternated (-count), not across runs.
func BenchmarkInsertWhileSweeping(b *testing.B) {
	backendtest.EachB(b, func(b *testing.B, be backendtest.Backend) {
		for _, mode := range []string{"quiet", "sweeping"} {
			b.Run(mode, func(b *testing.B) {
				store := be.Open(b)
				clk := &clock{now: start}
				cat, docs, coll := setup(b, store, clk)
				const backlog = 20_000
				insert(b, store, docs, coll, 0, backlog, start)
				clk.Set(start.Add(48 * time.Hour))
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				swept := make(chan int, 1)
				if mode == "sweeping" {
					sw := expiry.New(store, cat, docs, expiry.Options{Now: clk.Now})
					go func() { n, _ := sw.Pass(ctx); swept <- n }()
				}
				lat := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := range b.N {
					doc := fmt.Appendf(nil, `{"id":%d,"created_at":%q}`, backlog+i, clk.Now().Format(time.RFC3339Nano))
					t0 := time.Now()
					if _, err := kv.Run(ctx, store, func(tx kv.Tx) error { _, err := docs.Insert(ctx, tx, coll, [][]byte{doc}); return err }); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t0))
				}
				b.StopTimer()
				cancel()
				if mode == "sweeping" {
					b.ReportMetric(float64(<-swept), "swept")
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			})
		}
	})
}
