package grpcapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
)

// The transports side by side: the same calls over HTTP/1.1 (JSON), over
// gRPC on the shared port (through the HTTP server) and over gRPC on a
// listener of its own (gRPC's native transport), from 16 concurrent
// clients over loopback, on the collection of internal/httpapi's
// benchmarks (100,000 documents of about 1 KB).

const (
	benchDocs    = 100_000
	benchClients = 16
)

func benchDoc(id int64) string {
	return fmt.Sprintf(`{"id":%d,"name":"user %d","age":%d,"group":%d,"email":"user%d@example.com","bio":"%s"}`,
		id, id, id%100, id%5000, id, strings.Repeat("lorem ipsum ", 75))
}

// transport is one way of making the benchmarked calls.
type transport interface {
	read(ctx context.Context, id int64) error
	insert(ctx context.Context, doc string) error
	// transaction runs begin, two point reads, two updates and commit; it
	// reports an aborted commit as aborted, not as an error.
	transaction(ctx context.Context, k1, k2 int64, age int) (aborted bool, err error)
}

func BenchmarkTransports(b *testing.B) {
	backendtest.EachB(b, func(b *testing.B, be backendtest.Backend) {
		// The 16 clients' transactions may all be open at once (on
		// PostgreSQL the default bound is a quarter of the pool, 8).
		n, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
			nc.Store = be.Open(b)
			nc.Addr = "127.0.0.1:0"
			nc.GRPCAddr = "127.0.0.1:0"
			nc.Sessions.MaxOpen = -1
		}))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { n.Close() })
		shared := api.NewTigrisClient(dial(b, n.Addr().String()))
		load(b, shared)
		var next atomic.Int64
		next.Store(benchDocs)
		transports := []struct {
			name string
			t    transport
		}{
			{"HTTP", &httpTransport{base: "http://" + n.Addr().String() + "/v1/databases/bench",
				c: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * benchClients, DisableCompression: true}}}},
			{"gRPC", grpcTransport{shared}},
			{"gRPC-own-listener", grpcTransport{api.NewTigrisClient(dial(b, n.GRPCAddr().String()))}},
		}
		for _, tr := range transports {
			b.Run("PointRead/"+tr.name, func(b *testing.B) {
				runClients(b, func(rng *rand.Rand) error { return tr.t.read(context.Background(), rng.Int64N(benchDocs)) })
			})
		}
		for _, tr := range transports {
			b.Run("Insert/"+tr.name, func(b *testing.B) {
				runClients(b, func(rng *rand.Rand) error { return tr.t.insert(context.Background(), benchDoc(next.Add(1))) })
			})
		}
		for _, tr := range transports {
			b.Run("Transaction/"+tr.name, func(b *testing.B) {
				var aborts atomic.Int64
				runClients(b, func(rng *rand.Rand) error {
					aborted, err := tr.t.transaction(context.Background(), rng.Int64N(benchDocs), rng.Int64N(benchDocs), rng.IntN(100))
					if aborted {
						aborts.Add(1)
					}
					return err
				})
				b.ReportMetric(float64(aborts.Load())/float64(b.N)*100, "abort-%")
			})
		}
	})
}

// load creates the collection and its documents over gRPC.
func load(b *testing.B, c api.TigrisClient) {
	ctx := context.Background()
	if _, err := c.CreateDatabase(ctx, &api.CreateDatabaseRequest{Db: "bench"}); err != nil {
		b.Fatal(err)
	}
	_, err := c.CreateOrUpdateCollection(ctx, &api.CreateOrUpdateCollectionRequest{Project: "bench", Collection: "users", Schema: []byte(`{"title":"users","primary_key":["id"],"properties":{
		"id":{"type":"integer"},"name":{"type":"string"},"age":{"type":"integer"},"group":{"type":"integer"},"email":{"type":"string"},"bio":{"type":"string"}}}`)})
	if err != nil {
		b.Fatal(err)
	}
	for start := int64(0); start < benchDocs; start += 1000 {
		docs := make([][]byte, 0, 1000)
		for id := start; id < start+1000; id++ {
			docs = append(docs, []byte(benchDoc(id)))
		}
		if _, err := c.Insert(ctx, &api.InsertRequest{Project: "bench", Collection: "users", Documents: docs}); err != nil {
			b.Fatal(err)
		}
	}
}

// runClients spreads b.N calls over the clients and reports calls per
// second and latency percentiles, as internal/httpapi's benchmarks do, and
// the CPU time of the process (client and server) per call, which depends
// far less than the others on what else the machine is running.
func runClients(b *testing.B, call func(rng *rand.Rand) error) {
	b.ReportAllocs()
	cpu0 := cpuTime()
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	var failed atomic.Int64
	b.ResetTimer()
	for w := range benchClients {
		n := b.N / benchClients
		if w == 0 {
			n += b.N % benchClients
		}
		wg.Add(1)
		go func(seed uint64, n int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 99))
			local := make([]time.Duration, 0, n)
			for range n {
				start := time.Now()
				if err := call(rng); err != nil && failed.Add(1) == 1 {
					b.Error(err)
				}
				local = append(local, time.Since(start))
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		}(uint64(w), n)
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/req")
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
}

// cpuTime is the user and system CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type grpcTransport struct{ c api.TigrisClient }

func (g grpcTransport) read(ctx context.Context, id int64) error {
	st, err := g.c.Read(ctx, &api.ReadRequest{Project: "bench", Collection: "users", Filter: fmt.Appendf(nil, `{"id":%d}`, id)})
	if err != nil {
		return err
	}
	found := false
	for {
		r, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		found = bytes.Contains(r.Data, fmt.Appendf(nil, `"id":%d,`, id))
	}
	if !found {
		return fmt.Errorf("read %d: not found", id)
	}
	return nil
}

func (g grpcTransport) insert(ctx context.Context, doc string) error {
	_, err := g.c.Insert(ctx, &api.InsertRequest{Project: "bench", Collection: "users", Documents: [][]byte{[]byte(doc)}})
	return err
}

func (g grpcTransport) transaction(ctx context.Context, k1, k2 int64, age int) (bool, error) {
	res, err := g.c.BeginTransaction(ctx, &api.BeginTransactionRequest{Project: "bench"})
	if err != nil {
		return false, err
	}
	in := metadata.AppendToOutgoingContext(ctx, "tigris-tx-id", res.TxCtx.Id, "tigris-tx-origin", res.TxCtx.Origin)
	for _, k := range []int64{k1, k2} {
		if err := g.read(in, k); err != nil {
			return false, err
		}
	}
	for _, k := range []int64{k1, k2} {
		if _, err := g.c.Update(in, &api.UpdateRequest{Project: "bench", Collection: "users", Filter: fmt.Appendf(nil, `{"id":%d}`, k),
			Fields: fmt.Appendf(nil, `{"$set":{"age":%d}}`, age)}); err != nil {
			return false, err
		}
	}
	_, err = g.c.CommitTransaction(in, &api.CommitTransactionRequest{Project: "bench"})
	if grpcstatus.Code(err) == codes.Aborted {
		return true, nil
	}
	return false, err
}

type httpTransport struct {
	base string
	c    *http.Client
}

func (h *httpTransport) call(ctx context.Context, method, path, body string, tx *api.TransactionCtx) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, h.base+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if tx != nil {
		req.Header.Set("Tigris-Tx-Id", tx.Id)
		req.Header.Set("Tigris-Tx-Origin", tx.Origin)
	}
	res, err := h.c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	return res.StatusCode, out, err
}

func (h *httpTransport) ok(ctx context.Context, method, path, body string, tx *api.TransactionCtx) ([]byte, error) {
	code, out, err := h.call(ctx, method, path, body, tx)
	if err == nil && code != 200 {
		err = fmt.Errorf("%s %s: %d %s", method, path, code, out)
	}
	return out, err
}

func (h *httpTransport) readIn(ctx context.Context, id int64, tx *api.TransactionCtx) error {
	out, err := h.ok(ctx, "POST", "/collections/users/documents/read", fmt.Sprintf(`{"filter":{"id":%d}}`, id), tx)
	if err == nil && !bytes.Contains(out, fmt.Appendf(nil, `"id":%d,`, id)) {
		err = fmt.Errorf("read %d: %s", id, out)
	}
	return err
}

func (h *httpTransport) read(ctx context.Context, id int64) error { return h.readIn(ctx, id, nil) }

func (h *httpTransport) insert(ctx context.Context, doc string) error {
	_, err := h.ok(ctx, "POST", "/collections/users/documents/insert", `{"documents":[`+doc+`]}`, nil)
	return err
}

func (h *httpTransport) transaction(ctx context.Context, k1, k2 int64, age int) (bool, error) {
	out, err := h.ok(ctx, "POST", "/transactions/begin", "", nil)
	if err != nil {
		return false, err
	}
	var begin struct {
		TxCtx api.TransactionCtx `json:"tx_ctx"`
	}
	if err := json.Unmarshal(out, &begin); err != nil {
		return false, err
	}
	tx := &begin.TxCtx
	for _, k := range []int64{k1, k2} {
		if err := h.readIn(ctx, k, tx); err != nil {
			return false, err
		}
	}
	for _, k := range []int64{k1, k2} {
		if _, err := h.ok(ctx, "PUT", "/collections/users/documents/update", fmt.Sprintf(`{"filter":{"id":%d},"fields":{"$set":{"age":%d}}}`, k, age), tx); err != nil {
			return false, err
		}
	}
	code, out, err := h.call(ctx, "POST", "/transactions/commit", "", tx)
	switch {
	case err != nil:
		return false, err
	case code == http.StatusConflict:
		return true, nil
	case code != 200:
		return false, fmt.Errorf("commit: %d %s", code, out)
	}
	return false, nil
}

// BenchmarkCacheCalls measures a cache's set and get over gRPC, one call
// at a time from one client of the same process (so allocs/op counts the
// client's allocations with the server's), on a volatile and on a durable
// cache of the embedded store, values of 100 bytes on 1,000 keys.
func BenchmarkCacheCalls(b *testing.B) {
	s := start(b, backendtest.OpenPebble(b), node.DefaultConfig())
	ctx := context.Background()
	cc := api.NewCacheClient(s.conn)
	if _, err := s.rpc.CreateProject(ctx, &api.CreateProjectRequest{Project: "bench"}); err != nil {
		b.Fatal(err)
	}
	value := make([]byte, 100)
	const keys = 1000
	for _, volatile := range []bool{true, false} {
		name := "durable"
		if volatile {
			name = "volatile"
		}
		if _, err := cc.CreateCache(ctx, &api.CreateCacheRequest{Project: "bench", Name: name, Options: &api.CreateCacheOptions{Volatile: volatile}}); err != nil {
			b.Fatal(err)
		}
		key := make([]string, keys)
		for i := range key {
			key[i] = fmt.Sprint("key", i)
			if _, err := cc.Set(ctx, &api.SetRequest{Project: "bench", Name: name, Key: key[i], Value: value}); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(name+"/Set", func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if _, err := cc.Set(ctx, &api.SetRequest{Project: "bench", Name: name, Key: key[i%keys], Value: value}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/Get", func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if _, err := cc.Get(ctx, &api.GetRequest{Project: "bench", Name: name, Key: key[i%keys]}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
