package apitest

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
)

// BenchmarkCommitToSearchable: 16 writers each insert a document with a
// word of its own, and as soon as the insert is acknowledged search for
// that word. A search waits until the index holds every write acknowledged
// before it, so the time from the acknowledgement to the search's answer
// is how long a committed write takes to be searchable, as a client sees
// it (the search's own cost included). Reported: p50 and p99, and the
// inserts searched per second. The aim is a p99 under 100 ms. On
// both backends.
func BenchmarkCommitToSearchable(b *testing.B) {
	backendtest.EachB(b, benchmarkCommitToSearchable)
}

func benchmarkCommitToSearchable(b *testing.B, be backendtest.Backend) {
	n, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Store = be.Open(b)
		nc.Addr = "127.0.0.1:0"
		nc.Search.Dir = b.TempDir()
		nc.ShutdownTimeout = 10 * time.Second
	}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { n.Close() })
	c := newClient("http://" + n.Addr().String())
	c.createDB(b, "db1")
	c.createColl(b, "db1", "notes", `{"title":"notes","primary_key":["id"],"properties":{"id":{"type":"integer"},"text":{"type":"string"}}}`)
	const writers = 16
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 30) // about 800 bytes of text
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	b.ResetTimer()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < b.N; i += writers {
				word := fmt.Sprintf("tok%dx%d", w, i)
				body := fmt.Sprintf(`{"documents":[{"id":%d,"text":"%s %s"}]}`, i, filler, word)
				if r, err := c.send("POST", docPath("db1", "notes", "insert"), body); err != nil || r.status != http.StatusOK {
					b.Errorf("insert: %v %v", r, err)
					return
				}
				acked := time.Now()
				r, err := c.send("POST", docPath("db1", "notes", "search"), `{"q":"`+word+`","page":1}`)
				if err != nil || r.status != http.StatusOK || !strings.Contains(string(r.body), word) {
					b.Errorf("search for %s right after its insert: %v %v", word, r, err)
					return
				}
				d := time.Since(acked)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(len(lat))/b.Elapsed().Seconds(), "searched-inserts/s")
}
