package loadgen

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// result returns a two-second run of workload A: reads of 1 ms each,
// updates of 3 ms each.
func result(reads, updates int, errors int64) *Result {
	r := &Result{Driver: "folio", Workload: "A", Distribution: Zipfian, Clients: 4, Docs: 100, Seed: 1,
		Elapsed: 2 * time.Second, Ops: []*OpResult{{Op: OpRead}, {Op: OpUpdate, Errors: errors, FirstError: "boom"}}}
	for range reads {
		r.Ops[0].Hist.Record(time.Millisecond)
	}
	for range updates {
		r.Ops[1].Hist.Record(3 * time.Millisecond)
	}
	if errors == 0 {
		r.Ops[1].FirstError = ""
	}
	return r
}

func TestSummary(t *testing.T) {
	s := result(300, 100, 2).Summary()
	tests := []struct {
		name string
		got  OpSummary
		want OpSummary
	}{
		{"read", s.Ops[0], OpSummary{Op: "read", Count: 300, OpsPerSec: 150, MeanMicros: 1000, P50Micros: 1000, P95Micros: 1000, P99Micros: 1000, MaxMicros: 1000}},
		{"update", s.Ops[1], OpSummary{Op: "update", Count: 100, OpsPerSec: 50, MeanMicros: 3000, P50Micros: 3000, P95Micros: 3000, P99Micros: 3000, MaxMicros: 3000, Errors: 2, FirstError: "boom"}},
		// Total: 400 operations, three quarters at 1 ms. Its p50 is the
		// middle of the bucket holding 1 ms (no longer clamped by the
		// minimum and maximum, as 1 ms and 3 ms are now both there).
		{"total", s.Total, OpSummary{Op: "total", Count: 400, OpsPerSec: 200, MeanMicros: 1500, P50Micros: 1001.5, P95Micros: 3000, P99Micros: 3000, MaxMicros: 3000, Errors: 2, FirstError: "boom"}},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, tt.got, tt.want)
		}
	}
	if s.Seconds != 2 || s.Driver != "folio" || s.Workload != "A" || s.Clients != 4 {
		t.Errorf("summary header %+v", s)
	}
}

func TestMergeRounds(t *testing.T) {
	r := result(300, 100, 0)
	if err := r.Merge(result(100, 100, 1)); err != nil {
		t.Fatal(err)
	}
	if r.Elapsed != 4*time.Second || r.Ops[0].Hist.Count() != 400 || r.Ops[1].Hist.Count() != 200 || r.Ops[1].Errors != 1 {
		t.Errorf("merged: %v, %d reads, %d updates, %d errors", r.Elapsed, r.Ops[0].Hist.Count(), r.Ops[1].Hist.Count(), r.Ops[1].Errors)
	}
	if got := r.OpsPerSecond(); got != 150 {
		t.Errorf("merged ops/s %v, want 600 ops / 4 s = 150", got)
	}
	if r.Ops[1].FirstError != "boom" {
		t.Errorf("first error %q, want the second round's", r.Ops[1].FirstError)
	}
	other := result(1, 1, 0)
	other.Driver = "postgres"
	if err := r.Merge(other); err == nil {
		t.Error("merged results of two drivers")
	}
}

func TestWriteJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, []*Result{result(300, 100, 2), result(10, 0, 0)}); err != nil {
		t.Fatal(err)
	}
	var got []Summary
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if len(got) != 2 || got[0].Total.Count != 400 || got[0].Ops[1].P99Micros != 3000 || got[1].Total.OpsPerSec != 5 {
		t.Errorf("JSON read back: %+v", got)
	}
	for _, key := range []string{`"ops_per_sec"`, `"p50_us"`, `"p95_us"`, `"p99_us"`, `"errors"`, `"aborts"`, `"workload"`} {
		if !strings.Contains(buf.String(), key) {
			t.Errorf("JSON has no %s", key)
		}
	}
}

func TestWriteTable(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTable(&buf, []*Result{result(300, 100, 2)}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"folio, workload A", "ops/s", "p99", "read", "update", "total", "150.0", "3.00ms", "first update error: boom"} {
		if !strings.Contains(out, want) {
			t.Errorf("table has no %q:\n%s", want, out)
		}
	}
}
