// Package metrics serves Folio's metrics in the Prometheus text format. It
// is the only package that imports the Prometheus client: the parts report
// plain Stats() structs (kv, the backends, sessions, the change log,
// streams, search), which a scrape reads through custom collectors, and
// the operations report each call's outcome to an ops.Observer, which
// Metrics is. A node owns one Metrics and its registry: nothing is
// registered globally, so several nodes in one process (the tests) each
// report their own.
package metrics

import (
	"net/http"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is a node's registry: the request counters and latency
// histograms, the parts' collectors and Go's runtime.
type Metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// requestBuckets are the bounds, in seconds, of call durations: from a
// point read to a long read or search streaming its results.
var requestBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// New returns the metrics of a node whose parts are src, and of the Go
// runtime and process it runs in; version goes into folio_build_info.
func New(version string, src Sources) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "folio_requests_total",
			Help: "API calls that reached an operation, by operation, transport and the API code they answered (OK when they succeeded).",
		}, []string{"operation", "transport", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "folio_request_duration_seconds",
			Help:    "Time of API calls, by operation and transport; reads and searches until their last result was handed over, events and subscribe until the stream was open.",
			Buckets: requestBuckets,
		}, []string{"operation", "transport"}),
	}
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "folio_build_info",
		Help:        "Always 1: the version of the running server, as a label.",
		ConstLabels: prometheus.Labels{"version": version},
	})
	info.Set(1)
	m.registry.MustRegister(m.requests, m.duration, info, &parts{src: src},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ObserveCall counts one call (ops.Observer).
func (m *Metrics) ObserveCall(op, transport string, code apierror.Code, took time.Duration) {
	m.requests.WithLabelValues(op, transport, string(code)).Inc()
	m.duration.WithLabelValues(op, transport).Observe(took.Seconds())
}

// Handler serves a scrape: every metric, in the Prometheus text format (or
// OpenMetrics when the scraper asks for it).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{
		// A part whose stats cannot be read now (the store unreachable)
		// leaves its metrics out; the rest is still served.
		ErrorHandling: promhttp.ContinueOnError,
		Timeout:       scrapeTimeout,
		// A scraper that asks for OpenMetrics (its Accept header) gets it.
		EnableOpenMetrics: true,
	})
}

// scrapeTimeout bounds one scrape: the parts' stats include a read of the
// store (the change log's end and size) and a walk of the search indexes.
const scrapeTimeout = 10 * time.Second
