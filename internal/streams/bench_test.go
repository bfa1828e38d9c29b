package streams

import (
	"context"
	"encoding/binary"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/kv/pebblekv"
)

// BenchmarkHub measures the stream machinery without HTTP: 16 goroutines
// commit one record each per transaction on a Pebble store while 4
// subscriptions take them; one op is one commit. Latency runs from the
// moment Commit returned to the moment Next returned the record
// (ack→delivery), and from the moment Commit was called (commit→delivery,
// which includes the group commit's fsync). The store
// publishes a commit to readers just before Commit returns, so a record can
// arrive first: those count as zero, and their share is before-ack-%.
func BenchmarkHub(b *testing.B) {
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
	const writers, readers = 16, 4
	n := b.N
	called, acked := make([]int64, n), make([]int64, n)
	arrived := make([][]int64, readers)
	var got sync.WaitGroup
	for r := range readers {
		arrived[r] = make([]int64, n)
		sub, err := h.Subscribe(context.Background(), After(last), Changes(1, "db", "c"))
		if err != nil {
			b.Fatal(err)
		}
		defer sub.Close()
		got.Add(1)
		go func() {
			defer got.Done()
			for seen := 0; seen < n; {
				batch, err := sub.Next(context.Background())
				if err != nil {
					b.Error(err)
					return
				}
				now := time.Now().UnixNano()
				for _, e := range batch {
					arrived[r][binary.BigEndian.Uint64(e.Record.Data)] = now
					seen++
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
				rec := changelog.Record{Op: changelog.Insert, NS: 1, DB: "db", Collection: "c", Key: []byte("k"), Data: binary.BigEndian.AppendUint64(nil, uint64(id))}
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
	early := 0
	for r := range readers {
		for id, t := range arrived[r] {
			d := t - acked[id]
			if d < 0 {
				early++
				d = 0
			}
			fromAck = append(fromAck, d)
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
	b.ReportMetric(100*float64(early)/float64(len(fromAck)), "before-ack-%")
}
