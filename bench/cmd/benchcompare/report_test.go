package main

import (
	"encoding/xml"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/bench/benchrun"
	"github.com/foliodb/folio/internal/loadgen"
)

func TestReplaceSection(t *testing.T) {
	other := "<!-- issue 3: begin -->\n## Issue 3\nkv numbers\n<!-- issue 3: end -->\n"
	handWritten := "\n### Notes written by hand\nkept\n"
	withSection := "# Benchmarks\n\n" + other + "\n" + sectionBegin + "\n## Issue 8\nintro\n\n" +
		generatedBegin + "\nold table\n" + generatedEnd + handWritten + sectionEnd + "\n\n## After\nmore\n"
	tests := []struct {
		name     string
		doc      string
		want     []string // in this order
		wantGone []string
		err      bool
	}{
		{name: "no file", doc: "", want: []string{"# Benchmarks", sectionBegin, generatedBegin, "NEW", generatedEnd, sectionEnd}},
		{name: "file without the section", doc: "# Benchmarks\n\n" + other,
			want: []string{other, sectionBegin, generatedBegin, "NEW", generatedEnd, sectionEnd}},
		{name: "section replaced, the rest kept", doc: withSection,
			want:     []string{"# Benchmarks", other, sectionBegin, "intro", generatedBegin, "NEW", generatedEnd, "Notes written by hand", sectionEnd, "## After"},
			wantGone: []string{"old table"}},
		{name: "section without the generated part", doc: sectionBegin + "\nintro\n" + sectionEnd + "\n",
			want: []string{sectionBegin, "intro", generatedBegin, "NEW", generatedEnd, sectionEnd}},
		{name: "end marker missing", doc: sectionBegin + "\nintro\n", err: true},
		{name: "generated end missing", doc: sectionBegin + "\n" + generatedBegin + "\n" + sectionEnd, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := replaceSection([]byte(tt.doc), "NEW\n")
			if (err != nil) != tt.err {
				t.Fatalf("error %v, want error %v", err, tt.err)
			}
			s := string(out)
			at := 0
			for _, w := range tt.want {
				i := strings.Index(s[at:], w)
				if i < 0 {
					t.Fatalf("%q missing or out of order in:\n%s", w, s)
				}
				at += i + len(w)
			}
			for _, g := range tt.wantGone {
				if strings.Contains(s, g) {
					t.Errorf("%q still there:\n%s", g, s)
				}
			}
			if strings.Count(s, generatedBegin) > 1 || strings.Count(s, sectionBegin) > 1 {
				t.Errorf("markers doubled:\n%s", s)
			}
			// Running it again must change nothing.
			if again, _ := replaceSection(out, "NEW\n"); string(again) != s && !tt.err {
				t.Errorf("not idempotent:\n%s\nthen\n%s", s, again)
			}
		})
	}
}

func TestGeomean(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{2}, 2},
		{[]float64{0.5, 2}, 1},
		{[]float64{1, 10, 100}, 10},
	}
	for _, tt := range tests {
		if got := geomean(tt.in); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("geomean(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// result makes a result of n reads of 1 ms over one second.
func result(driver, workload string, n int) *loadgen.Result {
	r := &loadgen.Result{Driver: driver, Workload: workload, Elapsed: time.Second, Ops: []*loadgen.OpResult{{Op: loadgen.OpRead}}}
	for range n {
		r.Ops[0].Hist.Record(time.Millisecond)
	}
	return r
}

func TestCompareAndRender(t *testing.T) {
	a, _ := loadgen.LookupWorkload("A")
	eq, _ := loadgen.LookupWorkload("eq")
	cfg := config{workloads: []loadgen.Workload{a, eq}, yardstick: "C", docs: 1000, clients: 4, rounds: 2, duration: time.Second}
	folio := &side{results: map[string]*loadgen.Result{"A": result("folio", "A", 200), "eq": result("folio", "eq", 50)},
		cpu: map[string]*cpuUse{"A": {server: 50 * time.Millisecond, after: 20 * time.Millisecond, client: 10 * time.Millisecond, ops: 400}}}
	pg := &side{results: map[string]*loadgen.Result{"A": result("postgres", "A", 100), "eq": result("postgres", "eq", 500), "C": result("postgres", "C", 1000)},
		cpu: map[string]*cpuUse{"A": {server: 30 * time.Millisecond, client: 6 * time.Millisecond, ops: 200}}}
	yard := &side{results: map[string]*loadgen.Result{"C": result("yardstick", "C", 2000)},
		cpu: map[string]*cpuUse{"C": {server: 90 * time.Millisecond, client: 80 * time.Millisecond, ops: 4000}}}
	cmp := compare(cfg, folio, nil, pg, yard)
	if len(cmp.rows) != 2 || cmp.rows[0].ratio != 2 || cmp.rows[1].ratio != 0.1 {
		t.Fatalf("rows %+v", cmp.rows)
	}
	if want := math.Sqrt(2 * 0.1); math.Abs(cmp.geomean-want) > 1e-9 {
		t.Errorf("geomean %v, want %v", cmp.geomean, want)
	}
	env := &environment{Machine: benchrun.Machine{CPU: "Test CPU", Cores: 2, Memory: "1 GiB", OS: "test", GoVersion: "go"}, postgres: "15"}
	md := cmp.markdown(cfg, env, "docs/bench-compare.svg", "docs/benchmarks.md")
	for _, want := range []string{"| A |", "| 200 | 100 | 2.00 |", "| eq |", "0.10", "**0.45**", "yardstick", "(2.00)", "Test CPU, 2 cores", "](bench-compare.svg)",
		"| A | 125.0 (50.0) | 25.0 | 150.0 (0.0) | 30.0 |", "| eq | – (–) | – | – (–) | – |", "| yardstick (C) | 22.5 (0.0) | 20.0 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown has no %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "gRPC") {
		t.Errorf("gRPC columns without a gRPC side:\n%s", md)
	}
	var text strings.Builder
	if err := cmp.writeText(&text); err != nil || !strings.Contains(text.String(), "geomean") || strings.Contains(text.String(), "gRPC") ||
		!regexp.MustCompile(`\n +A +125\.0 +50\.0 +25\.0 +150\.0 +0\.0 +30\.0 *\n`).MatchString(text.String()) {
		t.Errorf("text table (%v):\n%s", err, text.String())
	}

	// The chart must be well-formed XML with a bar per workload, the
	// geometric mean and the yardstick.
	svg := cmp.svg()
	dec := xml.NewDecoder(strings.NewReader(string(svg)))
	rects := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed: %v\n%s", err, svg)
		}
		if el, ok := tok.(xml.StartElement); ok && el.Name.Local == "rect" {
			rects++
		}
	}
	if rects != 1+4 { // the background, then A, eq, geomean, yardstick
		t.Errorf("%d rects in the chart, want 5:\n%s", rects, svg)
	}
}

// With a gRPC side, its columns show its result and ratio in the rows of
// the workloads it ran, and a dash in the others; the geometric mean stays
// the HTTP side's.
func TestCompareWithGRPC(t *testing.T) {
	a, _ := loadgen.LookupWorkload("A")
	c, _ := loadgen.LookupWorkload("C")
	cfg := config{workloads: []loadgen.Workload{a, c}, grpcWorkloads: []loadgen.Workload{c}, docs: 1000, clients: 4, rounds: 1, duration: time.Second}
	folio := &side{results: map[string]*loadgen.Result{"A": result("folio", "A", 200), "C": result("folio", "C", 300)}, cpu: map[string]*cpuUse{}}
	grpc := &side{results: map[string]*loadgen.Result{"C": result("folio-grpc", "C", 450)},
		cpu: map[string]*cpuUse{"C": {server: 90 * time.Millisecond, after: 9 * time.Millisecond, client: 30 * time.Millisecond, ops: 450}}}
	pg := &side{results: map[string]*loadgen.Result{"A": result("postgres", "A", 100), "C": result("postgres", "C", 300)}, cpu: map[string]*cpuUse{}}
	cmp := compare(cfg, folio, grpc, pg, nil)
	if !cmp.grpc || cmp.rows[0].grpc != nil || cmp.rows[1].grpcRatio != 1.5 {
		t.Fatalf("rows %+v", cmp.rows)
	}
	if want := math.Sqrt(2 * 1); math.Abs(cmp.geomean-want) > 1e-9 {
		t.Errorf("geomean %v, want %v, the HTTP side's alone", cmp.geomean, want)
	}
	env := &environment{Machine: benchrun.Machine{CPU: "Test CPU", Cores: 2}}
	md := cmp.markdown(cfg, env, "", "docs/benchmarks.md")
	for _, want := range []string{"| Folio gRPC ops/s | gRPC / PostgreSQL |",
		"| A | update heavy: 50% read, 50% update | 200 | 100 | 2.00 | 1.0 ms / 1.0 ms | 1.0 ms / 1.0 ms | 0 / 0 | 0 / 0 | – | – | – | – |\n",
		"| C | read only | 300 | 300 | 1.00 | 1.0 ms / 1.0 ms | 1.0 ms / 1.0 ms | 0 / 0 | 0 / 0 | 450 | 1.50 | 1.0 ms / 1.0 ms | 0 / 0 |\n",
		"| **geometric mean** | | | | **1.41** | | | | | | | | |\n",
		"| C | – (–) | – | – (–) | – | 200.0 (20.0) | 66.7 |\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown has no %q:\n%s", want, md)
		}
	}
	// Every row of a table has as many cells as its header.
	for _, table := range strings.Split(md, "\n\n") {
		lines := strings.Split(strings.TrimSpace(table), "\n")
		if !strings.HasPrefix(lines[0], "|") {
			continue
		}
		cells := strings.Count(lines[0], "|")
		for _, l := range lines[1:] {
			if strings.Count(l, "|") != cells {
				t.Errorf("row %q has %d bars, its header %d", l, strings.Count(l, "|"), cells)
			}
		}
	}
	var text strings.Builder
	if err := cmp.writeText(&text); err != nil ||
		!regexp.MustCompile(`\n +C +300 +300 +1\.000 .* 450 +1\.500 +1\.0 ms / 1\.0 ms +0/0 *\n`).MatchString(text.String()) ||
		!regexp.MustCompile(`\n +C( +–){6} +200\.0 +20\.0 +66\.7 *\n`).MatchString(text.String()) {
		t.Errorf("text table (%v):\n%s", err, text.String())
	}
	if svg := string(cmp.svg()); !strings.Contains(svg, ">C gRPC<") || !strings.Contains(svg, ">1.50<") {
		t.Errorf("no gRPC bar in the chart:\n%s", svg)
	}
}

func TestRoundOrder(t *testing.T) {
	folio, grpc, pg := &side{}, &side{}, &side{}
	tests := []struct {
		round    int
		grpc     *side
		overGRPC bool
		want     []*side
	}{
		{1, grpc, true, []*side{folio, grpc, pg}},
		{2, grpc, true, []*side{pg, grpc, folio}},
		{1, grpc, false, []*side{folio, pg}},
		{2, nil, true, []*side{pg, folio}},
	}
	for _, tt := range tests {
		if got := roundOrder(tt.round, folio, tt.grpc, pg, tt.overGRPC); !slices.Equal(got, tt.want) {
			t.Errorf("round %d, over gRPC %v: %v, want %v", tt.round, tt.overGRPC, got, tt.want)
		}
	}
}

func TestGRPCWorkloadsFlag(t *testing.T) {
	names := func(ws []loadgen.Workload) string {
		var out []string
		for _, w := range ws {
			out = append(out, w.Name)
		}
		return strings.Join(out, ",")
	}
	tests := []struct {
		args []string
		want string
		err  bool
	}{
		{nil, "C,insert,tx", false},
		{[]string{"-grpc-workloads", ""}, "", false},
		{[]string{"-workloads", "tx,C,A", "-grpc-workloads", "all"}, "tx,C,A", false},
		{[]string{"-workloads", "A,C", "-grpc-workloads", "insert,c,C"}, "C", false},
		{[]string{"-grpc-workloads", "nope"}, "", true},
	}
	for _, tt := range tests {
		cfg, err := parseFlags(append([]string{"-quiet"}, tt.args...))
		if (err != nil) != tt.err {
			t.Errorf("%v: error %v", tt.args, err)
			continue
		}
		if got := names(cfg.grpcWorkloads); err == nil && got != tt.want {
			t.Errorf("%v: gRPC workloads %q, want %q", tt.args, got, tt.want)
		}
	}
}
