package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/sqlkv"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
)

// The HTTP benchmarks: 16 concurrent clients over loopback, on a
// collection of 100,000 documents of about 1 KB, next to a trivial Go
// handler measured with the same client (the floor of HTTP and JSON cost).

const (
	benchDocs    = 100_000
	benchClients = 16
)

var (
	yardstickOnce sync.Once
	yardstickURL  string
	nextID        atomic.Int64
)

func TestMain(m *testing.M) { os.Exit(backendtest.Main(m)) }

func benchDoc(id int64) string {
	return fmt.Sprintf(`{"id":%d,"name":"user %d","age":%d,"group":%d,"email":"user%d@example.com","bio":"%s"}`,
		id, id, id%100, id%5000, id, strings.Repeat("lorem ipsum ", 75))
}

// yardstick is a trivial Go handler returning a small fixed JSON body.
func yardstick() string {
	yardstickOnce.Do(func() {
		yardstickURL = listen(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"result":{"data":{"id":1,"name":"x"}}}` + "\n"))
		}))
	})
	return yardstickURL
}

// fixture serves the API over store with the collection loaded, until the
// end of b.
func fixture(b *testing.B, store kv.Store) string {
	url := serveNode(b, store)
	c := client()
	post := func(method, path, body string) {
		if _, err := call(c, method, url+path, body); err != nil {
			b.Fatal(err)
		}
	}
	post("POST", "/v1/databases/bench/create", "")
	post("POST", "/v1/databases/bench/collections/users/createOrUpdate", `{"schema":{"title":"users","primary_key":["id"],"properties":{
		"id":{"type":"integer"},"name":{"type":"string"},"age":{"type":"integer"},"group":{"type":"integer"},"email":{"type":"string"},"bio":{"type":"string"}}}}`)
	for start := int64(0); start < benchDocs; start += 1000 {
		var sb strings.Builder
		sb.WriteString(`{"documents":[`)
		for id := start; id < start+1000; id++ {
			if id > start {
				sb.WriteByte(',')
			}
			sb.WriteString(benchDoc(id))
		}
		sb.WriteString(`]}`)
		post("POST", "/v1/databases/bench/collections/users/documents/insert", sb.String())
	}
	nextID.Store(benchDocs)
	settle(b)
	return url
}

// BenchmarkHTTP runs every HTTP benchmark on each backend: the document
// API's, interactive transactions and indexed reads, on one loaded
// collection per backend.
func BenchmarkHTTP(b *testing.B) {
	backendtest.EachB(b, func(b *testing.B, be backendtest.Backend) {
		store := be.Open(b)
		benchStore, _ = store.(*sqlkv.Store)
		url := fixture(b, store)
		benchDocuments(b, url)
		benchTransactions(b, url)
		benchIndexed(b, url)
	})
}

// serveNode runs a node over store until the end of b and returns its URL.
func serveNode(b *testing.B, store kv.Store) string {
	// Every client may hold a transaction open (on PostgreSQL the default
	// bound is a quarter of the pool, 8, below the 16 clients).
	n, err := node.Start(context.Background(), node.DefaultConfigWith(func(ncfg *node.Config) {
		ncfg.Store = store
		ncfg.Addr = "127.0.0.1:0"
		ncfg.Sessions.MaxOpen = benchClients
		ncfg.HTTP1Server = *http1Server
	}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { n.Close() })
	benchNode = n
	return "http://" + n.Addr().String()
}

// http1Server picks the HTTP/1.1 server the benchmarks run on, to compare
// the two in one session: -http1-server net/http.
var http1Server = flag.String("http1-server", node.HTTP1FastHTTP, "the HTTP/1.1 server: fasthttp or net/http")

// benchNode is the node of the benchmark running, benchStore its store if
// it is PostgreSQL's.
var (
	benchNode  *node.Node
	benchStore *sqlkv.Store
)

// roundTrips is how many exchanges the PostgreSQL store has had with its
// server so far (0 on the embedded store).
func roundTrips() int64 {
	if benchStore == nil {
		return 0
	}
	return benchStore.Stats().RoundTrips
}

// settle waits until the search indexer has indexed every write so far:
// it indexes in the background, so a benchmark that did not wait would
// run beside the indexing of the fixture or of the one before, and one
// that wrote would not count the indexing of its own writes.
func settle(b *testing.B) {
	if benchNode == nil {
		return
	}
	deadline := time.Now().Add(10 * time.Minute)
	for benchNode.Stats().Search.LagPositions > 0 {
		if time.Now().After(deadline) {
			b.Fatal("the search indexer did not catch up within 10 minutes")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func listen(h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go http.Serve(ln, h)
	return "http://" + ln.Addr().String()
}

func client() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * benchClients, DisableCompression: true}}
}

func call(c *http.Client, method, url, body string) ([]byte, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, out)
	}
	return out, nil
}

// runClients spreads b.N requests over the clients and reports requests
// per second and latency percentiles.
func runClients(b *testing.B, request func(c *http.Client, rng *rand.Rand) error) {
	c := client()
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	var failed atomic.Int64
	cpu0, rt0 := cpuTime(), roundTrips()
	b.ResetTimer()
	for w := 0; w < benchClients; w++ {
		n := b.N / benchClients
		if w == 0 {
			n += b.N % benchClients
		}
		wg.Add(1)
		go func(seed uint64, n int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 99))
			local := make([]time.Duration, 0, n)
			for i := 0; i < n; i++ {
				start := time.Now()
				if err := request(c, rng); err != nil {
					if failed.Add(1) == 1 {
						b.Error(err)
					}
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
	settle(b)
	cpu := cpuTime() - cpu0
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	// Client and server share the process: its CPU time per request
	// (with the indexing of its writes) is what a request costs, whatever
	// else the machine is running.
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/req")
	if benchStore != nil {
		// The store's background work (log readers, folds) counts too.
		b.ReportMetric(float64(roundTrips()-rt0)/float64(b.N), "pg-round-trips/req")
	}
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
}

func benchDocuments(b *testing.B, url string) {
	yard := yardstick()
	coll := url + "/v1/databases/bench/collections/users/documents"
	b.Run("Yardstick", func(b *testing.B) {
		runClients(b, func(c *http.Client, rng *rand.Rand) error {
			_, err := call(c, "POST", yard, `{"filter":{"id":1}}`)
			return err
		})
	})
	b.Run("PointRead", func(b *testing.B) {
		runClients(b, func(c *http.Client, rng *rand.Rand) error {
			id := rng.Int64N(benchDocs)
			out, err := call(c, "POST", coll+"/read", fmt.Sprintf(`{"filter":{"id":%d}}`, id))
			if err == nil && !bytes.Contains(out, []byte(fmt.Sprintf(`"id":%d,`, id))) {
				err = fmt.Errorf("read %d: %s", id, out)
			}
			return err
		})
	})
	b.Run("Insert", func(b *testing.B) {
		runClients(b, func(c *http.Client, rng *rand.Rand) error {
			_, err := call(c, "POST", coll+"/insert", `{"documents":[`+benchDoc(nextID.Add(1))+`]}`)
			return err
		})
	})
	b.Run("UpdateField", func(b *testing.B) {
		runClients(b, func(c *http.Client, rng *rand.Rand) error {
			_, err := call(c, "PUT", coll+"/update", fmt.Sprintf(`{"filter":{"id":%d},"fields":{"$set":{"age":%d}}}`, rng.Int64N(benchDocs), rng.IntN(100)))
			return err
		})
	})
}

// BenchmarkHTTPTransaction: interactive transactions of begin, two point
// reads, two updates and commit, from 16 clients; an aborted commit counts
// as an operation and is reported as abort-%. "uniform" picks keys among
// all 100,000 documents, "hot" among 20.
func benchTransactions(b *testing.B, url string) {
	db := url + "/v1/databases/bench"
	coll := db + "/collections/users/documents"
	for _, keys := range []struct {
		name string
		n    int64
	}{{"uniform", benchDocs}, {"hot", 20}} {
		b.Run("Transaction/"+keys.name, func(b *testing.B) {
			var aborts atomic.Int64
			runClients(b, func(c *http.Client, rng *rand.Rand) error {
				out, err := call(c, "POST", db+"/transactions/begin", "")
				if err != nil {
					return err
				}
				var begin struct {
					TxCtx struct{ ID, Origin string } `json:"tx_ctx"`
				}
				if err := json.Unmarshal(out, &begin); err != nil {
					return err
				}
				inTx := func(method, url, body string) (int, []byte, error) {
					req, _ := http.NewRequest(method, url, strings.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Tigris-Tx-Id", begin.TxCtx.ID)
					req.Header.Set("Tigris-Tx-Origin", begin.TxCtx.Origin)
					resp, err := c.Do(req)
					if err != nil {
						return 0, nil, err
					}
					defer resp.Body.Close()
					out, err := io.ReadAll(resp.Body)
					return resp.StatusCode, out, err
				}
				k1, k2 := rng.Int64N(keys.n), rng.Int64N(keys.n)
				for _, k := range []int64{k1, k2} {
					if code, out, err := inTx("POST", coll+"/read", fmt.Sprintf(`{"filter":{"id":%d}}`, k)); err != nil || code != 200 {
						return fmt.Errorf("read in tx: %d %s %v", code, out, err)
					}
				}
				for _, k := range []int64{k1, k2} {
					if code, out, err := inTx("PUT", coll+"/update", fmt.Sprintf(`{"filter":{"id":%d},"fields":{"$set":{"age":%d}}}`, k, rng.IntN(100))); err != nil || code != 200 {
						return fmt.Errorf("update in tx: %d %s %v", code, out, err)
					}
				}
				code, out, err := inTx("POST", db+"/transactions/commit", "")
				switch {
				case err != nil:
					return err
				case code == http.StatusConflict:
					aborts.Add(1)
				case code != 200:
					return fmt.Errorf("commit: %d %s", code, out)
				}
				return nil
			})
			b.ReportMetric(float64(aborts.Load())/float64(b.N)*100, "abort-%")
		})
	}
}

// BenchmarkHTTPIndexed: filtered reads and updates served by the
// every-field indexes. group holds 20 documents per value, age
// 1,000.
func benchIndexed(b *testing.B, url string) {
	coll := url + "/v1/databases/bench/collections/users/documents"
	read := func(body string, want int) func(c *http.Client, rng *rand.Rand) error {
		return func(c *http.Client, rng *rand.Rand) error {
			out, err := call(c, "POST", coll+"/read", fmt.Sprintf(body, rng.IntN(5000)))
			if err == nil && bytes.Count(out, []byte("\n")) != want {
				err = fmt.Errorf("read returned %d documents, want %d", bytes.Count(out, []byte("\n")), want)
			}
			return err
		}
	}
	b.Run("Indexed/EqualityLimit10", func(b *testing.B) {
		runClients(b, read(`{"filter":{"group":%d},"options":{"limit":10}}`, 10))
	})
	b.Run("Indexed/RangeLimit50", func(b *testing.B) {
		runClients(b, func(c *http.Client, rng *rand.Rand) error {
			lo := rng.IntN(98)
			out, err := call(c, "POST", coll+"/read", fmt.Sprintf(`{"filter":{"$and":[{"age":{"$gte":%d}},{"age":{"$lt":%d}}]},"options":{"limit":50}}`, lo, lo+2))
			if err == nil && bytes.Count(out, []byte("\n")) != 50 {
				err = fmt.Errorf("range returned %d documents", bytes.Count(out, []byte("\n")))
			}
			return err
		})
	})
	b.Run("Indexed/OrOfTwoEqualities", func(b *testing.B) {
		runClients(b, func(c *http.Client, rng *rand.Rand) error {
			g1 := rng.IntN(2500)
			out, err := call(c, "POST", coll+"/read", fmt.Sprintf(`{"filter":{"$or":[{"group":%d},{"group":%d}]}}`, g1, g1+2500))
			// 20 documents a group from the load, and any the insert
			// benchmark added.
			if err == nil && bytes.Count(out, []byte("\n")) < 40 {
				err = fmt.Errorf("$or returned %d documents", bytes.Count(out, []byte("\n")))
			}
			return err
		})
	})
	b.Run("Indexed/UpdateByNonKeyField", func(b *testing.B) {
		runClients(b, func(c *http.Client, rng *rand.Rand) error {
			id := rng.Int64N(benchDocs)
			out, err := call(c, "PUT", coll+"/update", fmt.Sprintf(`{"filter":{"email":"user%d@example.com"},"fields":{"$set":{"age":%d}}}`, id, id%100))
			if err == nil && !bytes.Contains(out, []byte(`"modified_count":1`)) {
				err = fmt.Errorf("update by email: %s", out)
			}
			return err
		})
	})
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
