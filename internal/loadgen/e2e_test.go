package loadgen_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/loadgen"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
	"github.com/foliodb/folio/tests/pgtest"
)

// TestMain stops the throwaway PostgreSQL cluster the tests may start.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// serve serves h on a loopback port until the test ends.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// folioServer starts the API over a Pebble store on a temporary directory.
func folioServer(t *testing.T) string {
	t.Helper()
	n, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Store = backendtest.OpenPebble(t)
		nc.Addr = "127.0.0.1:0"
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return "http://" + n.Addr().String()
}

// runAll loads a few documents through d and runs every workload but skip
// briefly, failing on any error and on a workload that did nothing.
func runAll(t *testing.T, d loadgen.Driver, each time.Duration, skip ...string) {
	t.Helper()
	ctx := context.Background()
	data := loadgen.Dataset{Docs: 300, Seed: 1}
	if _, err := loadgen.Load(ctx, loadgen.LoadConfig{Driver: d, Data: data, BatchSize: 100}); err != nil {
		t.Fatal(err)
	}
	for _, w := range loadgen.Workloads {
		if slices.Contains(skip, w.Name) {
			continue
		}
		// A loaded machine may finish no operation in a short run: the
		// run is tried again, longer, up to about two seconds in all.
		var total *loadgen.OpResult
		for dur := each; ; dur *= 2 {
			res, err := loadgen.Run(ctx, loadgen.RunConfig{Driver: d, Workload: w, Data: data, Clients: 4, Duration: dur, Seed: 1})
			if err != nil {
				t.Fatalf("%s: %v", w.Name, err)
			}
			total = res.Total()
			if total.Hist.Count() > 0 || total.Errors != 0 || dur >= time.Second {
				break
			}
		}
		if total.Hist.Count() == 0 || total.Errors != 0 {
			t.Errorf("%s on %s: %d operations, %d errors (first: %s)", w.Name, d.Name(), total.Hist.Count(), total.Errors, total.FirstError)
		}
	}
}

// newFolio returns a Folio driver that the test closes.
func newFolio(t *testing.T, opts loadgen.FolioOptions) *loadgen.FolioDriver {
	t.Helper()
	d, err := loadgen.NewFolio(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

var httpClients = []string{loadgen.ClientFast, loadgen.ClientStd}

// Every workload against a real Folio server, over each HTTP client: the
// driver speaks the API right, and the server answers what the driver
// checks.
func TestFolioEndToEnd(t *testing.T) {
	t.Parallel()
	for _, c := range httpClients {
		t.Run(c, func(t *testing.T) {
			runAll(t, newFolio(t, loadgen.FolioOptions{URL: folioServer(t), Clients: 4, HTTPClient: c}), 150*time.Millisecond)
		})
	}
}

func TestYardstickAnswersTheFolioDriver(t *testing.T) {
	t.Parallel()
	for _, c := range httpClients {
		t.Run(c, func(t *testing.T) {
			d := newFolio(t, loadgen.FolioOptions{URL: serve(t, loadgen.Yardstick()), Clients: 4, Name: "yardstick", HTTPClient: c})
			// It answers every read with one document, where these two want
			// ten, and has no count.
			runAll(t, d, 50*time.Millisecond, "eq-few", "range-wide", "count")
		})
	}
}

func TestPostgresEndToEnd(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	d, err := loadgen.NewPostgres(context.Background(), pgtest.NewDatabase(t), "", 4)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	runAll(t, d, 100*time.Millisecond)
}

// Every workload against two nodes on one PostgreSQL database, the driver
// sending requests to them in turn: a transaction's requests land on both,
// and the nodes relay them to the one that holds it.
func TestFolioAcrossNodes(t *testing.T) {
	var data backendtest.Durable
	for _, b := range backendtest.All {
		if b.Name == "postgres" {
			data = b.Durable(t)
		}
	}
	var urls []string
	for _, id := range []string{"n1", "n2"} {
		n, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
			nc.Store = data.Open()
			nc.Addr = "127.0.0.1:0"
			nc.Sessions.Origin = id
		}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		urls = append(urls, "http://"+n.Addr().String())
	}
	relayedBy := func(url string) int {
		t.Helper()
		res, err := http.Get(url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		m := regexp.MustCompile(`\nfolio_forwarded_requests_total\{result="relayed"\} ([0-9]+)`).FindSubmatch(b)
		if m == nil {
			return 0
		}
		n, _ := strconv.Atoi(string(m[1]))
		return n
	}
	runAll(t, newFolio(t, loadgen.FolioOptions{URL: strings.Join(urls, ","), Clients: 4}), 150*time.Millisecond)
	overHTTP := relayedBy(urls[1])
	if overHTTP == 0 {
		t.Errorf("the second node relayed no request of the first's transactions")
	}
	// The same over gRPC, whose calls are relayed over gRPC.
	runAll(t, newFolioGRPC(t, loadgen.FolioOptions{URL: strings.Join(urls, ","), Clients: 4}), 150*time.Millisecond)
	if relayedBy(urls[1]) == overHTTP {
		t.Errorf("the second node relayed no gRPC call of the first's transactions")
	}
}
