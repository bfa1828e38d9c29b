package loadgen

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"
)

// Result is the outcome of a run, or of several runs of the same workload
// on the same driver merged together.
type Result struct {
	Driver       string
	Workload     string
	Distribution string
	Clients      int
	Docs         int64
	Seed         uint64
	// Elapsed is the time the clients ran (summed over merged runs).
	Elapsed time.Duration
	// Ops holds one entry per operation of the workload's mix, in its order.
	Ops []*OpResult
}

// OpResult is what one operation did in a run.
type OpResult struct {
	Op Op
	// Hist holds the latencies of the operations that succeeded.
	Hist Histogram
	// Errors counts failed operations, Aborts transactions refused for a
	// conflict; neither is in Hist.
	Errors, Aborts int64
	// FirstError is the first failure's message, to tell what went wrong.
	FirstError string
}

func (o *OpResult) merge(from *OpResult) {
	o.Hist.Merge(&from.Hist)
	o.Errors += from.Errors
	o.Aborts += from.Aborts
	if o.FirstError == "" {
		o.FirstError = from.FirstError
	}
}

// Total returns every operation of the run merged into one.
func (r *Result) Total() *OpResult {
	t := &OpResult{Op: "total"}
	for _, o := range r.Ops {
		t.merge(o)
	}
	return t
}

// OpsPerSecond returns the successful operations of every kind per second.
func (r *Result) OpsPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Total().Hist.Count()) / r.Elapsed.Seconds()
}

// Merge adds the operations and time of another run of the same workload on
// the same driver, as the comparison does with its rounds.
func (r *Result) Merge(o *Result) error {
	if r.Driver != o.Driver || r.Workload != o.Workload || len(r.Ops) != len(o.Ops) {
		return fmt.Errorf("merge %s on %s with %s on %s: not the same workload and driver", r.Workload, r.Driver, o.Workload, o.Driver)
	}
	for i, op := range o.Ops {
		if r.Ops[i].Op != op.Op {
			return fmt.Errorf("merge %s: operation %s against %s", r.Workload, r.Ops[i].Op, op.Op)
		}
		r.Ops[i].merge(op)
	}
	r.Elapsed += o.Elapsed
	return nil
}

// Summary is a Result as figures: what the table shows and --json prints.
type Summary struct {
	Driver       string      `json:"driver"`
	Workload     string      `json:"workload"`
	Distribution string      `json:"distribution"`
	Clients      int         `json:"clients"`
	Docs         int64       `json:"docs"`
	Seed         uint64      `json:"seed"`
	Seconds      float64     `json:"seconds"`
	Ops          []OpSummary `json:"ops"`
	Total        OpSummary   `json:"total"`
}

// OpSummary is one operation's figures; latencies are in microseconds.
type OpSummary struct {
	Op         string  `json:"op"`
	Count      int64   `json:"count"`
	OpsPerSec  float64 `json:"ops_per_sec"`
	MeanMicros float64 `json:"mean_us"`
	P50Micros  float64 `json:"p50_us"`
	P95Micros  float64 `json:"p95_us"`
	P99Micros  float64 `json:"p99_us"`
	MaxMicros  float64 `json:"max_us"`
	Errors     int64   `json:"errors"`
	Aborts     int64   `json:"aborts"`
	FirstError string  `json:"first_error,omitempty"`
}

// Summary returns the figures of r.
func (r *Result) Summary() Summary {
	s := Summary{Driver: r.Driver, Workload: r.Workload, Distribution: r.Distribution, Clients: r.Clients,
		Docs: r.Docs, Seed: r.Seed, Seconds: round(r.Elapsed.Seconds(), 3)}
	for _, o := range r.Ops {
		s.Ops = append(s.Ops, o.summary(r.Elapsed))
	}
	s.Total = r.Total().summary(r.Elapsed)
	return s
}

func (o *OpResult) summary(elapsed time.Duration) OpSummary {
	us := func(d time.Duration) float64 { return round(float64(d)/1e3, 1) }
	s := OpSummary{Op: string(o.Op), Count: o.Hist.Count(), Errors: o.Errors, Aborts: o.Aborts, FirstError: o.FirstError,
		MeanMicros: us(o.Hist.Mean()), P50Micros: us(o.Hist.Quantile(0.50)), P95Micros: us(o.Hist.Quantile(0.95)),
		P99Micros: us(o.Hist.Quantile(0.99)), MaxMicros: us(o.Hist.Max())}
	if elapsed > 0 {
		s.OpsPerSec = round(float64(s.Count)/elapsed.Seconds(), 1)
	}
	return s
}

func round(v float64, digits int) float64 {
	p := math.Pow10(digits)
	return math.Round(v*p) / p
}

// WriteJSON writes the summaries as one indented JSON array.
func WriteJSON(w io.Writer, results []*Result) error {
	out := make([]Summary, len(results))
	for i, r := range results {
		out[i] = r.Summary()
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// WriteTable writes a table per result: each operation, then the total.
func WriteTable(w io.Writer, results []*Result) error {
	for i, r := range results {
		s := r.Summary()
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s, workload %s: %s keys, %d clients, %d docs, %.1fs\n", s.Driver, s.Workload, s.Distribution, s.Clients, s.Docs, s.Seconds)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "op\tops\tops/s\tp50\tp95\tp99\terrors\taborts\t")
		rows := s.Ops
		if len(rows) > 1 {
			rows = append(rows, s.Total)
		}
		for _, o := range rows {
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%s\t%s\t%s\t%d\t%d\t\n", o.Op, o.Count, o.OpsPerSec,
				micros(o.P50Micros), micros(o.P95Micros), micros(o.P99Micros), o.Errors, o.Aborts)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, o := range s.Ops {
			if o.FirstError != "" {
				fmt.Fprintf(w, "first %s error: %s\n", o.Op, o.FirstError)
			}
		}
	}
	return nil
}

// micros formats a latency in microseconds with a unit that suits it.
func micros(us float64) string {
	switch {
	case us >= 1e6:
		return fmt.Sprintf("%.2fs", us/1e6)
	case us >= 1e3:
		return fmt.Sprintf("%.2fms", us/1e3)
	}
	return fmt.Sprintf("%.0fµs", us)
}
