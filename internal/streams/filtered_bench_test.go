package streams

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/kv/pebblekv"
	"github.com/foliodb/folio/internal/schema"
)

// BenchmarkFilteredHub measures live queries without HTTP: 100
// subscriptions to one collection, each with its own filter parsed by
// internal/filter ({"n":K} for the K-th), while 16 goroutines commit one
// update per transaction (the document after and before the change, as
// documents log them) on a Pebble store. Each update moves its document
// from n = id%100 to (id+1)%100, so every commit is matched by two of
// the 100 streams, one of which sees it leave its filter, and the hub
// evaluates the 100 filters on it. One op is one commit. Latency runs from
// the moment Commit was called to the moment a stream's Next returned the
// change (commit→delivery, which includes the group commit's fsync), and
// from the moment Commit returned (ack→delivery; a change that arrived
// first counts as zero).
func BenchmarkFilteredHub(b *testing.B) {
	store, err := pebblekv.Open(pebblekv.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	h := NewHub(changelog.NewLog(store, changelog.Options{}), Options{})
	h.Start(context.Background())
	defer h.Close()
	last, err := store.LastPosition(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	s, err := schema.Parse("c", []byte(`{"title":"c","primary_key":["id"],"properties":{"id":{"type":"integer"},"n":{"type":"integer"},"text":{"type":"string"}}}`))
	if err != nil {
		b.Fatal(err)
	}
	const writers, streams = 16, 100
	n := b.N
	called, acked := make([]int64, n), make([]int64, n)
	// arrived[id] holds the two deliveries of commit id: the stream it
	// entered and the one it left.
	arrived := make([][2]int64, n)
	var slot []atomic.Int32
	slot = make([]atomic.Int32, n)
	var got sync.WaitGroup
	var delivered atomic.Int64
	for k := range streams {
		f, err := filter.Parse(fmt.Appendf(nil, `{"n":%d}`, k), s, filter.Collation{})
		if err != nil {
			b.Fatal(err)
		}
		sub, err := h.Subscribe(context.Background(), After(last), ChangesMatching(1, "db", "c", f.Matches))
		if err != nil {
			b.Fatal(err)
		}
		defer sub.Close()
		got.Add(1)
		go func() {
			defer got.Done()
			for delivered.Load() < int64(2*n) {
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				batch, err := sub.Next(ctx)
				cancel()
				if err != nil {
					continue // done, or nothing for this stream yet
				}
				now := time.Now().UnixNano()
				for _, e := range batch {
					id, _ := strconv.Atoi(string(e.Record.Key))
					arrived[id][slot[id].Add(1)-1] = now
					delivered.Add(1)
				}
			}
		}()
	}
	b.ResetTimer()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				id := next.Add(1) - 1
				if id >= int64(n) {
					return
				}
				tx, err := store.Begin(context.Background())
				if err != nil {
					b.Error(err)
					return
				}
				rec := changelog.Record{Op: changelog.Update, NS: 1, DB: "db", Collection: "c", Key: strconv.AppendInt(nil, id, 10),
					Data:   fmt.Appendf(nil, `{"id":%d,"n":%d,"text":"after"}`, id, (id+1)%streams),
					Before: fmt.Appendf(nil, `{"id":%d,"n":%d,"text":"before"}`, id, id%streams)}
				tx.AppendLog(rec.Encode())
				called[id] = time.Now().UnixNano()
				if _, err := tx.Commit(context.Background()); err != nil {
					b.Error(err)
					return
				}
				acked[id] = time.Now().UnixNano()
			}
		}()
	}
	wg.Wait()
	got.Wait()
	b.StopTimer()
	var fromAck, fromCall []int64
	for id := range arrived {
		for _, t := range arrived[id] {
			fromAck = append(fromAck, max(t-acked[id], 0))
			fromCall = append(fromCall, t-called[id])
		}
	}
	slices.Sort(fromAck)
	slices.Sort(fromCall)
	pct := func(s []int64, p int) float64 { return float64(s[(len(s)-1)*p/100]) / 1e3 }
	b.ReportMetric(pct(fromAck, 50), "ack→delivery-p50-µs")
	b.ReportMetric(pct(fromAck, 99), "ack→delivery-p99-µs")
	b.ReportMetric(pct(fromCall, 50), "commit→delivery-p50-µs")
	b.ReportMetric(pct(fromCall, 99), "commit→delivery-p99-µs")
}
