package apitest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
	"github.com/foliodb/folio/tests/testenv"
)

// scrape is one scrape of /metrics, parsed, with its text for promtool.
type scrape struct {
	text     string
	families map[string]*dto.MetricFamily
}

func (c *client) scrape(t testing.TB) *scrape {
	t.Helper()
	r := c.do(t, "GET", "/metrics", "")
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %s", r.status, r.header.Get("Content-Type"))
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	families, err := p.TextToMetricFamilies(strings.NewReader(string(r.body)))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, r.body)
	}
	return &scrape{text: string(r.body), families: families}
}

// value is the value of the series of family name with the given labels
// ("name=value" pairs, every label of the series): a counter's or gauge's
// value, a histogram's count. A series that is not there is 0, as a
// counter that never moved is not exported yet.
func (s *scrape) value(t testing.TB, name string, labels ...string) float64 {
	t.Helper()
	f, ok := s.families[name]
	if !ok {
		return 0
	}
	for _, m := range f.Metric {
		if len(m.Label) != len(labels) {
			continue
		}
		match := true
		for i, l := range m.Label { // the text format sorts labels by name
			if labels[i] != l.GetName()+"="+l.GetValue() {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return 0
}

// histogramSum is a histogram's sum of observations.
func (s *scrape) histogramSum(t testing.TB, name string) float64 {
	t.Helper()
	f, ok := s.families[name]
	if !ok || len(f.Metric) != 1 || f.Metric[0].Histogram == nil {
		t.Fatalf("%s: no histogram", name)
	}
	return f.Metric[0].Histogram.GetSampleSum()
}

// TestMetrics runs a known workload and checks that the metrics moved by
// what it did: calls by operation, transport and code, interactive
// transactions, the store's commits and conflicts, the backend's own
// figures; and that promtool finds the scrape well-formed.
func TestMetrics(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		n := startNode(t, b.Open(t), node.DefaultConfigWith(func(nc *node.Config) {
			nc.Version = "test-1"
		}))
		defer n.Close()
		c := newClient("http://" + n.Addr().String())
		setupAccounts(t, c, 1, 100)
		before := c.scrape(t)

		const inserts, reads = 5, 3
		for i := 1; i <= inserts; i++ {
			c.insert(t, "bank", "accounts", fmt.Sprintf(`{"id":%d,"owner":"o","balance":1}`, i))
		}
		for range reads {
			c.docs(t, "bank", "accounts", `{"filter":{"id":1}}`)
		}
		// A conflicting pair: both read account 0 and update it; the
		// second commit is ABORTED.
		a, b2 := c.begin(t, "bank"), c.begin(t, "bank")
		time.Sleep(10 * time.Millisecond)
		during := c.scrape(t)
		if open := during.value(t, "folio_transactions_open"); open != 2 {
			t.Errorf("folio_transactions_open %v with two open, want 2", open)
		}
		if age := during.value(t, "folio_transactions_oldest_age_seconds"); age < 0.01 || age > 60 {
			t.Errorf("folio_transactions_oldest_age_seconds %v, want the oldest's age (10 ms or more)", age)
		}
		a.docs(t, "accounts", `{"id":0}`)
		b2.docs(t, "accounts", `{"id":0}`)
		a.ok(t, "PUT", docPath("bank", "accounts", "update"), `{"filter":{"id":0},"fields":{"$set":{"balance":50}}}`)
		b2.ok(t, "PUT", docPath("bank", "accounts", "update"), `{"filter":{"id":0},"fields":{"$set":{"balance":70}}}`)
		if r := a.commit(t); r.status != http.StatusOK {
			t.Fatalf("first commit: %s", r)
		}
		if r := b2.commit(t); r.status != http.StatusConflict {
			t.Fatalf("conflicting commit: %s, want 409", r)
		}
		if r := c.begin(t, "bank").rollback(t); r.status != http.StatusOK {
			t.Fatalf("rollback: %s", r)
		}
		// A 404, and a call over gRPC.
		wantError(t, c.do(t, "POST", collPath("bank", "nosuch", "describe"), `{}`), http.StatusNotFound, "NOT_FOUND", anyMessage)
		listOverGRPC(t, n.Addr().String())

		after := c.scrape(t)
		delta := func(name string, labels ...string) float64 {
			return after.value(t, name, labels...) - before.value(t, name, labels...)
		}
		calls := func(op, transport, code string) float64 {
			return delta("folio_requests_total", "code="+code, "operation="+op, "transport="+transport)
		}
		for _, w := range []struct {
			op, transport, code string
			want                float64
		}{
			{"Insert", "http", "OK", inserts},
			{"Read", "http", "OK", reads + 2}, // and one in each transaction
			{"Update", "http", "OK", 2},
			{"BeginTransaction", "http", "OK", 3},
			{"CommitTransaction", "http", "OK", 1},
			{"CommitTransaction", "http", "ABORTED", 1},
			{"RollbackTransaction", "http", "OK", 1},
			{"DescribeCollection", "http", "NOT_FOUND", 1},
			{"ListDatabases", "grpc", "OK", 1},
			{"ListDatabases", "http", "OK", 0},
			{"Insert", "grpc", "OK", 0},
		} {
			if got := calls(w.op, w.transport, w.code); got != w.want {
				t.Errorf("folio_requests_total{operation=%q,transport=%q,code=%q} moved by %v, want %v", w.op, w.transport, w.code, got, w.want)
			}
		}
		if got := delta("folio_request_duration_seconds", "operation=Insert", "transport=http"); got != inserts {
			t.Errorf("folio_request_duration_seconds{Insert,http} counted %v calls, want %d", got, inserts)
		}
		for outcome, want := range map[string]float64{"committed": 1, "aborted": 1, "rolled_back": 1, "expired": 0} {
			if got := delta("folio_transactions_ended_total", "outcome="+outcome); got != want {
				t.Errorf("folio_transactions_ended_total{outcome=%q} moved by %v, want %v", outcome, got, want)
			}
		}
		if open := after.value(t, "folio_transactions_open"); open != 0 {
			t.Errorf("folio_transactions_open %v after they all ended", open)
		}

		// The store: the inserts and the first transaction committed, the
		// second conflicted; nothing was retried (no request raced another).
		commits := delta("folio_kv_commits_total")
		for name, want := range map[string]float64{"folio_kv_commits_total": inserts + 1, "folio_kv_conflicts_total": 1,
			"folio_kv_commit_errors_total": 0, "folio_kv_retries_total": 0, "folio_kv_aborts_total": 0} {
			if got := delta(name); got != want {
				t.Errorf("%s moved by %v, want %v", name, got, want)
			}
		}
		if got := delta("folio_kv_commit_duration_seconds"); got != inserts+2 {
			t.Errorf("folio_kv_commit_duration_seconds counted %v commits, want %d (those that wrote, the conflict included)", got, inserts+2)
		}
		// Reads commit (having written nothing, they are not counted); the
		// client's rollback and the describe that failed roll back.
		if got := delta("folio_kv_rollbacks_total"); got != 2 {
			t.Errorf("folio_kv_rollbacks_total moved by %v, want 2", got)
		}
		if got := delta("folio_changelog_position"); got < commits {
			t.Errorf("folio_changelog_position moved by %v, want at least the %v commits", got, commits)
		}
		if got := after.value(t, "folio_changelog_readers", "reader=search"); got != 1 {
			t.Errorf("folio_changelog_readers{reader=search} %v, want the indexer's 1", got)
		}

		switch b.Name {
		case "pebble":
			if got := delta("folio_changelog_position"); got != commits {
				t.Errorf("folio_changelog_position moved by %v, want one position per commit (%v)", got, commits)
			}
			// Each commit is in exactly one group.
			if got := after.histogramSum(t, "folio_pebble_commit_group_size") - before.histogramSum(t, "folio_pebble_commit_group_size"); got != commits {
				t.Errorf("folio_pebble_commit_group_size summed %v commits, want %v", got, commits)
			}
			if got := delta("folio_pebble_fsync_duration_seconds"); got < 1 || got > commits {
				t.Errorf("folio_pebble_fsync_duration_seconds counted %v syncs for %v commits", got, commits)
			}
			if got := after.value(t, "folio_pebble_disk_bytes"); got <= 0 {
				t.Errorf("folio_pebble_disk_bytes %v", got)
			}
			if got := delta("folio_pebble_block_cache_hits_total") + delta("folio_pebble_block_cache_misses_total"); got < 0 {
				t.Errorf("block cache lookups went back by %v", got)
			}
			if _, ok := after.families["folio_postgres_pool_max_connections"]; ok {
				t.Error("PostgreSQL's pool metrics on the embedded engine")
			}
		case "postgres":
			if got := after.value(t, "folio_postgres_pool_max_connections"); got <= 0 {
				t.Errorf("folio_postgres_pool_max_connections %v", got)
			}
			if got := delta("folio_postgres_pool_acquires_total"); got < inserts+reads {
				t.Errorf("folio_postgres_pool_acquires_total moved by %v, want at least one per request", got)
			}
			if _, ok := after.families["folio_pebble_disk_bytes"]; ok {
				t.Error("Pebble's metrics on PostgreSQL")
			}
		}
		if after.value(t, "go_goroutines") <= 0 || after.value(t, "folio_build_info", "version=test-1") != 1 {
			t.Error("no Go runtime metrics, or no build info")
		}
		promtoolCheck(t, after.text)
	})
}

// listOverGRPC makes one call over gRPC on the API's port.
func listOverGRPC(t *testing.T, addr string) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := api.NewTigrisClient(conn).ListDatabases(ctx, &api.ListDatabasesRequest{}); err != nil {
		t.Fatalf("ListDatabases over gRPC: %v", err)
	}
}

// promtoolCheck runs `promtool check metrics` (Prometheus's linter:
// format, naming conventions, help texts) on a scrape.
func promtoolCheck(t *testing.T, text string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		testenv.Missing(t, "promtool (Debian's prometheus package) checks the metrics' format")
		return
	}
	f := filepath.Join(t.TempDir(), "metrics.txt")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(promtool, "check", "metrics")
	in, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd.Stdin = in
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestMetricsOnTheirOwnListener: with MetricsAddr, /metrics is served
// there and no longer on the API's port. On loopback, it refuses a request
// that names another host than the server's, as the API does (DNS
// rebinding).
func TestMetricsOnTheirOwnListener(t *testing.T) {
	n := startNode(t, backendtest.OpenPebble(t), node.DefaultConfigWith(func(nc *node.Config) {
		nc.MetricsAddr = "127.0.0.1:0"
	}))
	defer n.Close()
	api := newClient("http://" + n.Addr().String())
	api.ok(t, "POST", "/v1/databases/list", "")
	wantError(t, api.do(t, "GET", "/metrics", ""), http.StatusNotFound, "NOT_FOUND", anyMessage)
	own := newClient("http://" + n.MetricsAddr().String())
	if got := own.scrape(t).value(t, "folio_requests_total", "code=OK", "operation=ListDatabases", "transport=http"); got != 1 {
		t.Fatalf("folio_requests_total for the list on the metrics' listener: %v, want 1", got)
	}
	req, err := http.NewRequest("GET", own.base+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "evil.example"
	if r := own.doRequest(t, req); r.status != http.StatusForbidden {
		t.Errorf("a scrape naming another host: %s, want 403", r)
	}
}
