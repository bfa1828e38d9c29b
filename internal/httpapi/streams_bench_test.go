package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodb/folio/tests/backendtest"
)

// The stream benchmarks, end to end over loopback HTTP: writers
// commit through the API while stream clients read; each item's delivery
// time is compared with the moment its writer got the commit's answer
// (ack→delivery) and with the moment the writer sent the request
// (send→delivery). The store makes a commit visible to streams just before
// it answers the writer, so an event can reach a stream before the writer
// has read its answer: those count as zero in ack→delivery, and the share
// of them is reported as before-ack-%.

const streamWriters = 16

// streamBench is a server on a fresh store with one database.
type streamBench struct {
	base string
	hc   *http.Client
}

func newStreamBench(b *testing.B) *streamBench {
	b.Helper()
	sb := &streamBench{base: serveNode(b, backendtest.OpenPebble(b)),
		hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * streamWriters, DisableCompression: true}}}
	sb.must(b, "POST", "/v1/databases/bench/create", "")
	return sb
}

func (sb *streamBench) post(method, path, body string) error {
	req, err := http.NewRequest(method, sb.base+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := sb.hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, out)
	}
	return err
}

func (sb *streamBench) must(b *testing.B, method, path, body string) {
	b.Helper()
	if err := sb.post(method, path, body); err != nil {
		b.Fatal(err)
	}
}

// streamReader is one open stream that notes when each item arrived, by the
// integer found after marker in its line.
type streamReader struct {
	arrived []int64 // Unix nanoseconds, by item number
	got     atomic.Int64
	done    chan error
}

func (sb *streamBench) open(b *testing.B, ctx context.Context, path, body, marker string, n int) *streamReader {
	b.Helper()
	req, err := http.NewRequestWithContext(ctx, "POST", sb.base+path, strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := (&http.Client{}).Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		b.Fatalf("open stream %s: %v %v", path, res, err)
	}
	r := &streamReader{arrived: make([]int64, n), done: make(chan error, 1)}
	go func() {
		defer res.Body.Close()
		rd := bufio.NewReaderSize(res.Body, 64<<10)
		m := []byte(marker)
		for r.got.Load() < int64(n) {
			line, err := rd.ReadSlice('\n')
			if err != nil {
				r.done <- err
				return
			}
			now := time.Now().UnixNano()
			i := bytes.Index(line, m)
			if i < 0 {
				r.done <- fmt.Errorf("unexpected line %q", line)
				return
			}
			rest := line[i+len(m):]
			end := bytes.IndexAny(rest, ",}")
			id, err := strconv.Atoi(string(rest[:end]))
			if err != nil || id < 0 || id >= n {
				r.done <- fmt.Errorf("item number in %q: %v", line, err)
				return
			}
			r.arrived[id] = now
			r.got.Add(1)
		}
		r.done <- nil
	}()
	return r
}

// writeAll runs writers goroutines that call do with item numbers 0..n-1 and
// note when each was sent and acknowledged.
func writeAll(b *testing.B, n, writers int, do func(id int) error) (sent, acked []int64) {
	b.Helper()
	sent, acked = make([]int64, n), make([]int64, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				id := int(next.Add(1) - 1)
				if id >= n {
					return
				}
				sent[id] = time.Now().UnixNano()
				if err := do(id); err != nil {
					errs <- err
					return
				}
				acked[id] = time.Now().UnixNano()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return sent, acked
}

// reportLatency waits for every reader to have every item and reports the
// latency percentiles.
func reportLatency(b *testing.B, readers []*streamReader, sent, acked []int64) {
	b.Helper()
	for _, r := range readers {
		select {
		case err := <-r.done:
			if err != nil {
				b.Fatal(err)
			}
		case <-time.After(time.Minute):
			b.Fatalf("a stream got %d of %d items", r.got.Load(), len(sent))
		}
	}
	var fromAck, fromSend []int64
	early := 0
	for _, r := range readers {
		for id, t := range r.arrived {
			d := t - acked[id]
			if d < 0 {
				early++
				d = 0
			}
			fromAck = append(fromAck, d)
			fromSend = append(fromSend, t-sent[id])
		}
	}
	slices.Sort(fromAck)
	slices.Sort(fromSend)
	pct := func(s []int64, p float64) float64 { return float64(s[int(p*float64(len(s)-1))]) / 1e3 }
	b.ReportMetric(pct(fromAck, 0.50), "ack→delivery-p50-µs")
	b.ReportMetric(pct(fromAck, 0.99), "ack→delivery-p99-µs")
	b.ReportMetric(pct(fromSend, 0.50), "send→delivery-p50-µs")
	b.ReportMetric(pct(fromSend, 0.99), "send→delivery-p99-µs")
	b.ReportMetric(100*float64(early)/float64(len(fromAck)), "before-ack-%")
}

// BenchmarkEvents: 16 writers insert one document per request while 4
// events streams are open on the collection; one op is one insert.
func BenchmarkEvents(b *testing.B) {
	sb := newStreamBench(b)
	sb.must(b, "POST", "/v1/databases/bench/collections/items/createOrUpdate",
		`{"schema":{"title":"items","primary_key":["id"],"properties":{"id":{"type":"integer"},"name":{"type":"string"}}}}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var readers []*streamReader
	for range 4 {
		readers = append(readers, sb.open(b, ctx, "/v1/databases/bench/collections/items/events", `{}`, `"data":{"id":`, b.N))
	}
	b.ResetTimer()
	start := time.Now()
	sent, acked := writeAll(b, b.N, streamWriters, func(id int) error {
		return sb.post("POST", "/v1/databases/bench/collections/items/documents/insert", fmt.Sprintf(`{"documents":[{"id":%d,"name":"item %d"}]}`, id, id))
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "commits/s")
	reportLatency(b, readers, sent, acked)
}

// BenchmarkPublishSubscribe: 16 publishers, one subscriber; batch messages
// per publish request. One op is one message.
func BenchmarkPublishSubscribe(b *testing.B) {
	for _, batch := range []int{1, 100} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			sb := newStreamBench(b)
			sb.must(b, "POST", "/v1/databases/bench/collections/feed/createOrUpdate",
				`{"schema":{"title":"feed","collection_type":"messages","properties":{"n":{"type":"integer"},"text":{"type":"string"}}}}`)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			requests := (b.N + batch - 1) / batch
			n := requests * batch
			sub := sb.open(b, ctx, "/v1/databases/bench/collections/feed/messages/subscribe", `{}`, `"message":{"n":`, n)
			b.ResetTimer()
			start := time.Now()
			reqSent, reqAcked := writeAll(b, requests, streamWriters, func(r int) error {
				var body strings.Builder
				body.WriteString(`{"messages":[`)
				for i := range batch {
					if i > 0 {
						body.WriteByte(',')
					}
					fmt.Fprintf(&body, `{"n":%d,"text":"message %d"}`, r*batch+i, r*batch+i)
				}
				body.WriteString(`]}`)
				return sb.post("POST", "/v1/databases/bench/collections/feed/messages/publish", body.String())
			})
			b.StopTimer()
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), "msgs/s")
			sent, acked := make([]int64, n), make([]int64, n)
			for i := range n {
				sent[i], acked[i] = reqSent[i/batch], reqAcked[i/batch]
			}
			reportLatency(b, []*streamReader{sub}, sent, acked)
		})
	}
}

// BenchmarkFilteredEvents: live queries end to end. 16 writers insert one
// document per request while 100 events streams are open on the collection,
// each with its own filter ({"k":K} for the K-th); document id has k =
// id%100, so each insert is delivered to exactly one stream and the server
// evaluates the 100 filters on it. One op is one insert.
func BenchmarkFilteredEvents(b *testing.B) {
	const streams = 100
	sb := newStreamBench(b)
	sb.must(b, "POST", "/v1/databases/bench/collections/items/createOrUpdate",
		`{"schema":{"title":"items","primary_key":["id"],"properties":{"id":{"type":"integer"},"k":{"type":"integer"},"name":{"type":"string"}}}}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// One reader holding every arrival: each item reaches one stream.
	all := &streamReader{arrived: make([]int64, b.N), done: make(chan error, streams)}
	for k := range streams {
		req, err := http.NewRequestWithContext(ctx, "POST", sb.base+"/v1/databases/bench/collections/items/events", strings.NewReader(fmt.Sprintf(`{"filter":{"k":%d}}`, k)))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := (&http.Client{}).Do(req)
		if err != nil || res.StatusCode != http.StatusOK {
			b.Fatalf("open stream %d: %v %v", k, res, err)
		}
		go func() {
			defer res.Body.Close()
			rd := bufio.NewReaderSize(res.Body, 64<<10)
			m := []byte(`"data":{"id":`)
			for {
				line, err := rd.ReadSlice('\n')
				if err != nil {
					return // the benchmark is over
				}
				now := time.Now().UnixNano()
				i := bytes.Index(line, m)
				if i < 0 {
					all.done <- fmt.Errorf("unexpected line %q", line)
					return
				}
				rest := line[i+len(m):]
				id, err := strconv.Atoi(string(rest[:bytes.IndexAny(rest, ",}")]))
				if err != nil || id < 0 || id >= b.N || id%streams != k {
					all.done <- fmt.Errorf("stream %d got %q: %v", k, line, err)
					return
				}
				all.arrived[id] = now
				if all.got.Add(1) == int64(b.N) {
					all.done <- nil
				}
			}
		}()
	}
	b.ResetTimer()
	start := time.Now()
	sent, acked := writeAll(b, b.N, streamWriters, func(id int) error {
		return sb.post("POST", "/v1/databases/bench/collections/items/documents/insert", fmt.Sprintf(`{"documents":[{"id":%d,"k":%d,"name":"item %d"}]}`, id, id%streams, id))
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "commits/s")
	reportLatency(b, []*streamReader{all}, sent, acked)
}
