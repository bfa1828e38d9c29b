package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/pebblekv"
	"github.com/foliodb/folio/internal/kv/sqlkv"
	"github.com/foliodb/folio/internal/metrics"
)

// MetricsPath is where the Prometheus metrics are served.
const MetricsPath = "/metrics"

// metricSources hands the metrics the Stats of the node's parts; the
// store's engine decides which backend's are there.
func (n *Node) metricSources() metrics.Sources {
	src := metrics.Sources{
		Sessions:  n.sessions.Stats,
		ChangeLog: n.changeLog.Stats,
		LogBytes:  n.changeLog.Bytes,
		Streams:   n.hub.Stats,
		Search:    n.search.Stats,
		Expired:   func() uint64 { return n.expiry.Stats().Expired },
		// ops is made after the metrics (it reports its calls to them),
		// and read only at a scrape.
		Forwards: func() (uint64, uint64) {
			st := n.ops.ForwardStats()
			return st.Forwarded, st.Failed
		},
	}
	if c, ok := n.store.(kv.Counted); ok {
		src.Tx = c.TxCounters().Stats
	}
	switch s := n.store.(type) {
	case *pebblekv.Store:
		src.Pebble = s.Stats
	case *sqlkv.Store:
		src.Postgres = s.Stats
	}
	return src
}

// withMetrics serves GET /metrics beside the API on its port, unless the
// metrics have a listener of their own. The API has no path outside /v1/,
// so nothing of it is hidden.
func (n *Node) withMetrics(api http.Handler) http.Handler {
	if n.cfg.MetricsAddr != "" {
		return api
	}
	scrape := n.metrics.Handler()
	hosts := n.hosts()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A request the API refuses for its Host goes there to be.
		if r.URL.Path == MetricsPath && r.Method == http.MethodGet && !hosts.Refuses(r.Host) {
			scrape.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// serveMetrics serves the metrics on a listener of their own, so that a
// deployment can keep them off the API's address (which may be public).
func (n *Node) serveMetrics(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+MetricsPath, n.metrics.Handler())
	n.metricsHTTP = &http.Server{Handler: checkingHost(n.hostsOf(ln, addr), mux), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := n.metricsHTTP.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			n.failures.fail(fmt.Errorf("metrics listener: %w", err))
		}
	}()
	n.metricsLn = ln
	n.log.Info("metrics listening", "addr", ln.Addr().String(), "path", MetricsPath)
	return nil
}

// stopMetrics stops the metrics' server: Shutdown, not Close, for a
// scrape in flight reads the parts, which must not be stopped under it.
func (n *Node) stopMetrics() error {
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.ShutdownTimeout)
	defer cancel()
	n.metricsHTTP.Shutdown(ctx)
	return nil
}

// MetricsAddr is the address of the metrics' listener of their own, nil
// without one.
func (n *Node) MetricsAddr() net.Addr {
	if n.metricsLn == nil {
		return nil
	}
	return n.metricsLn.Addr()
}
