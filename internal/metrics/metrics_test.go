package metrics

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/kv"
	dto "github.com/prometheus/client_model/go"
)

func gather(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	families, err := m.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range families {
		out[f.GetName()] = f
	}
	return out
}

// TestHistogramsAreCumulative: kv's histograms count per bucket,
// Prometheus's cumulatively up to each bound.
func TestHistogramsAreCumulative(t *testing.T) {
	h := kv.NewHistogram([]float64{0.001, 0.01, 0.1})
	for _, v := range []float64{0.0005, 0.002, 0.003, 0.05, 3} {
		h.Observe(v)
	}
	m := New("v", Sources{Tx: func() kv.TxStats { return kv.TxStats{Commits: 4, CommitSeconds: h.Snapshot()} }})
	f := gather(t, m)
	hist := f["folio_kv_commit_duration_seconds"].Metric[0].Histogram
	var got []uint64
	for _, b := range hist.Bucket {
		got = append(got, b.GetCumulativeCount())
	}
	if want := []uint64{1, 3, 4}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || hist.GetSampleCount() != 5 {
		t.Fatalf("buckets %v count %d, want %v and 5", got, hist.GetSampleCount(), want)
	}
	if v := f["folio_kv_commits_total"].Metric[0].Counter.GetValue(); v != 4 {
		t.Fatalf("commits %v", v)
	}
	if _, ok := f["folio_pebble_disk_bytes"]; ok {
		t.Fatal("a part left out of the sources was reported")
	}
}

// TestReaderLag: each kind of change-log reader reports its count and
// the lag of the one furthest behind; a kind with none reports 0.
func TestReaderLag(t *testing.T) {
	m := New("v", Sources{ChangeLog: func(context.Context) (changelog.Stats, error) {
		return changelog.Stats{LastPosition: 100, Readers: []changelog.ReaderStats{{Name: "streams", Position: 90}, {Name: "streams", Position: 60}, {Name: "streams", Position: 100}}}, nil
	}})
	f := gather(t, m)
	got := map[string][2]float64{}
	for _, name := range []string{"folio_changelog_readers", "folio_changelog_reader_lag_positions"} {
		for _, s := range f[name].Metric {
			v := got[s.Label[0].GetValue()]
			if name == "folio_changelog_readers" {
				v[0] = s.Gauge.GetValue()
			} else {
				v[1] = s.Gauge.GetValue()
			}
			got[s.Label[0].GetValue()] = v
		}
	}
	if got["streams"] != [2]float64{3, 40} || got["search"] != [2]float64{0, 0} {
		t.Fatalf("readers and lag by kind: %v, want streams 3 readers 40 behind, search none", got)
	}
}

// TestPartFailing: a part whose stats cannot be read fails the scrape's
// gather with its error, and the handler (ContinueOnError) still serves
// the rest.
func TestPartFailing(t *testing.T) {
	m := New("v", Sources{LogBytes: func(context.Context) (int64, error) { return 0, errors.New("store unreachable") }})
	m.ObserveCall("Insert", "http", apierror.Code("OK"), time.Millisecond)
	families, err := m.registry.Gather()
	if err == nil {
		t.Fatal("no error for a part that failed")
	}
	found := false
	for _, f := range families {
		found = found || f.GetName() == "folio_requests_total"
	}
	if !found {
		t.Fatal("the other metrics went with the failed part")
	}
}

// A scrape is in the Prometheus text format unless the scraper asks for
// OpenMetrics, as docs/operations.md says (issue 41, item 10: it was
// always text/plain).
func TestScrapeFormatFollowsAccept(t *testing.T) {
	m := New("v", Sources{})
	m.ObserveCall("Insert", "http", apierror.Code("OK"), time.Millisecond)
	for _, tc := range []struct{ accept, wantType, wantEnd string }{
		{"", "text/plain; version=0.0.4", ""},
		{"application/openmetrics-text; version=1.0.0,text/plain;version=0.0.4;q=0.5", "application/openmetrics-text; version=1.0.0", "# EOF\n"},
	} {
		r := httptest.NewRequest("GET", "/metrics", nil)
		if tc.accept != "" {
			r.Header.Set("Accept", tc.accept)
		}
		w := httptest.NewRecorder()
		m.Handler().ServeHTTP(w, r)
		if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, tc.wantType) {
			t.Errorf("Accept %q: Content-Type %q, want %q", tc.accept, ct, tc.wantType)
		}
		if !strings.Contains(w.Body.String(), "folio_requests_total") || !strings.HasSuffix(w.Body.String(), tc.wantEnd) {
			t.Errorf("Accept %q: body ends %q", tc.accept, w.Body.String()[max(0, w.Body.Len()-40):])
		}
	}
}

// BenchmarkObserveCall is what each API call pays for the request metrics.
func BenchmarkObserveCall(b *testing.B) {
	m := New("v", Sources{})
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.ObserveCall("Insert", "http", apierror.Code("OK"), time.Millisecond)
		}
	})
}
