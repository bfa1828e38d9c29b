package main

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/foliodb/folio/bench/benchrun"
	"github.com/foliodb/folio/internal/loadgen"
)

// row is one workload's comparison.
type row struct {
	workload  loadgen.Workload
	folio, pg *loadgen.Result
	// folioCPU and pgCPU are what the operations cost each side's server
	// and the client.
	folioCPU, pgCPU *cpuUse
	// ratio is Folio's operations per second over PostgreSQL's; 0 when
	// either side did nothing.
	ratio float64
	// grpc, grpcCPU and grpcRatio are the same for Folio over gRPC; grpc
	// is nil where the workload did not run there.
	grpc      *loadgen.Result
	grpcCPU   *cpuUse
	grpcRatio float64
}

// comparison is the outcome of the rounds.
type comparison struct {
	rows    []row
	geomean float64
	// yardstick is the trivial handler's result, and yardstickPG the
	// PostgreSQL result of the same workload, if it ran.
	yardstick, yardstickPG *loadgen.Result
	yardstickCPU           *cpuUse
	// grpc is whether any workload ran over gRPC: its columns are shown
	// then only.
	grpc bool
}

// compare pairs each side's results by workload; grpc and yard may be nil.
func compare(cfg config, folio, grpc, pg, yard *side) *comparison {
	c := &comparison{}
	var ratios []float64
	for _, w := range cfg.workloads {
		r := row{workload: w, folio: folio.results[w.Name], pg: pg.results[w.Name], folioCPU: folio.cpu[w.Name], pgCPU: pg.cpu[w.Name]}
		if r.folio == nil || r.pg == nil {
			continue
		}
		if f, p := r.folio.OpsPerSecond(), r.pg.OpsPerSecond(); f > 0 && p > 0 {
			r.ratio = f / p
			ratios = append(ratios, r.ratio)
		}
		if grpc != nil && grpc.results[w.Name] != nil {
			r.grpc, r.grpcCPU = grpc.results[w.Name], grpc.cpu[w.Name]
			if g, p := r.grpc.OpsPerSecond(), r.pg.OpsPerSecond(); g > 0 && p > 0 {
				r.grpcRatio = g / p
			}
			c.grpc = true
		}
		c.rows = append(c.rows, r)
	}
	c.geomean = geomean(ratios)
	if yard != nil {
		c.yardstick = yard.results[cfg.yardstick]
		c.yardstickPG = pg.results[cfg.yardstick]
		c.yardstickCPU = yard.cpu[cfg.yardstick]
	}
	return c
}

// slowest returns the n workloads with the lowest ratio, lowest first.
func (c *comparison) slowest(n int) []loadgen.Workload {
	rows := slices.Clone(c.rows)
	slices.SortStableFunc(rows, func(a, b row) int { return cmp.Compare(a.ratio, b.ratio) })
	var out []loadgen.Workload
	for _, r := range rows[:min(n, len(rows))] {
		out = append(out, r.workload)
	}
	return out
}

// geomean returns the geometric mean of positive values, 0 for none.
func geomean(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	sum := 0.0
	for _, v := range vs {
		sum += math.Log(v)
	}
	return math.Exp(sum / float64(len(vs)))
}

// columns renders the server's CPU, what of it came after the run, and the
// client's, per operation in µs; "–" where nothing was measured.
func (u *cpuUse) columns() (server, after, client string) {
	if u == nil || u.ops == 0 {
		return "–", "–", "–"
	}
	s, a, c := u.perOp()
	return fmt.Sprintf("%.1f", s), fmt.Sprintf("%.1f", a), fmt.Sprintf("%.1f", c)
}

// latencies renders an operation mix's p50 and p99 over all its operations.
func latencies(r *loadgen.Result) string {
	t := r.Summary().Total
	return fmtMicros(t.P50Micros) + " / " + fmtMicros(t.P99Micros)
}

func fmtMicros(us float64) string {
	switch {
	case us >= 1e6:
		return fmt.Sprintf("%.2f s", us/1e6)
	case us >= 1e4:
		return fmt.Sprintf("%.0f ms", us/1e3)
	case us >= 1e3:
		return fmt.Sprintf("%.1f ms", us/1e3)
	}
	return fmt.Sprintf("%.0f µs", us)
}

// failures renders errors and aborts of a result as "errors/aborts".
func failures(r *loadgen.Result) (errs, aborts int64) {
	t := r.Total()
	return t.Errors, t.Aborts
}

func (c *comparison) writeText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	grpcHead := ""
	if c.grpc {
		grpcHead = "folio gRPC ops/s\tgRPC/postgres\tgRPC p50/p99\terrors/aborts gRPC\t"
	}
	fmt.Fprintln(tw, "workload\tfolio ops/s\tpostgres ops/s\tfolio/postgres\tfolio p50/p99\tpostgres p50/p99\terrors f/pg\taborts f/pg\t"+grpcHead)
	for _, r := range c.rows {
		fe, fa := failures(r.folio)
		pe, pa := failures(r.pg)
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.3f\t%s\t%s\t%d/%d\t%d/%d\t", r.workload.Name, r.folio.OpsPerSecond(), r.pg.OpsPerSecond(),
			r.ratio, latencies(r.folio), latencies(r.pg), fe, pe, fa, pa)
		switch {
		case r.grpc != nil:
			ge, ga := failures(r.grpc)
			fmt.Fprintf(tw, "%.0f\t%.3f\t%s\t%d/%d\t", r.grpc.OpsPerSecond(), r.grpcRatio, latencies(r.grpc), ge, ga)
		case c.grpc:
			fmt.Fprint(tw, "–\t–\t–\t–\t")
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintf(tw, "geomean\t\t\t%.3f\t\t\t\t\t\n", c.geomean)
	if c.yardstick != nil {
		ye, _ := failures(c.yardstick)
		fmt.Fprintf(tw, "yardstick %s\t%.0f\t\t\t%s\t\t%d/-\t\t\n", c.yardstick.Workload, c.yardstick.OpsPerSecond(), latencies(c.yardstick), ye)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if c.grpc {
		grpcHead = "folio gRPC server\t(after)\tfolio gRPC's client\t"
	}
	fmt.Fprintln(tw, "CPU µs/op\tfolio server\t(after)\tfolio's client\tpostgres server\t(after)\tpostgres's client\t"+grpcHead)
	for _, r := range c.rows {
		fs, fa, fc := r.folioCPU.columns()
		ps, pa, pc := r.pgCPU.columns()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t", r.workload.Name, fs, fa, fc, ps, pa, pc)
		if c.grpc {
			gs, ga, gc := r.grpcCPU.columns()
			fmt.Fprintf(tw, "%s\t%s\t%s\t", gs, ga, gc)
		}
		fmt.Fprintln(tw)
	}
	if c.yardstick != nil {
		ys, ya, yc := c.yardstickCPU.columns()
		fmt.Fprintf(tw, "yardstick %s\t%s\t%s\t%s\t\t\t\t\n", c.yardstick.Workload, ys, ya, yc)
	}
	return tw.Flush()
}

// The markers around the section of docs/benchmarks.md that holds the
// comparison (docs/benchmarks.md keeps one section per piece of work, named
// by the issue that asked for it), and around the part of it this program
// rewrites. What is outside the generated part is written by hand and kept.
const (
	sectionBegin   = "<!-- issue 8: begin -->"
	sectionEnd     = "<!-- issue 8: end -->"
	generatedBegin = "<!-- issue 8 bench-compare: begin (written by make bench-compare; edits here are lost) -->"
	generatedEnd   = "<!-- issue 8 bench-compare: end -->"
)

// markdown renders the generated part of the section.
func (c *comparison) markdown(cfg config, env *environment, svgPath, mdPath string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %s, %d cores, %s RAM, %s; %s, PostgreSQL %s; Folio built from %s. ",
		env.Date.Format("2006-01-02 15:04 MST"), env.CPU, env.Cores, env.Memory, env.OS, env.GoVersion, env.postgres, env.folio)
	fmt.Fprintf(&b, "%d documents of about 1 KB on each side, %d clients (Folio's over %s's HTTP client, PostgreSQL's over pgx), %d round(s) of %v per workload per side, "+
		"interleaved and alternating which side goes first; seed %d. Load (not compared): %s; then a warm-up of workload A, unreported: %s. Whole run: %.1f minutes.\n\n",
		cfg.docs, cfg.clients, cfg.httpClient, cfg.rounds, cfg.duration, cfg.seed, strings.Join(env.loadTimes, ", "), orNone(env.warmups), env.took.Minutes())
	// The gRPC columns, where some workloads ran over gRPC: an empty cell
	// each in the rows that have none.
	grpcHead, grpcRule, grpcNone := "", "", ""
	if c.grpc {
		grpcHead, grpcRule, grpcNone = " Folio gRPC ops/s | gRPC / PostgreSQL | gRPC p50 / p99 | errors / aborted gRPC |", "---:|---:|---:|---:|", " | | | |"
	}
	b.WriteString("| workload | operations | Folio ops/s | PostgreSQL ops/s | Folio / PostgreSQL | Folio p50 / p99 | PostgreSQL p50 / p99 | errors Folio / PG | aborted Folio / PG |" + grpcHead + "\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|" + grpcRule + "\n")
	for _, r := range c.rows {
		fe, fa := failures(r.folio)
		pe, pa := failures(r.pg)
		fmt.Fprintf(&b, "| %s | %s | %.0f | %.0f | %s | %s | %s | %d / %d | %d / %d |", r.workload.Name, r.workload.Description,
			r.folio.OpsPerSecond(), r.pg.OpsPerSecond(), fmtRatio(r.ratio), latencies(r.folio), latencies(r.pg), fe, pe, fa, pa)
		switch {
		case r.grpc != nil:
			ge, ga := failures(r.grpc)
			fmt.Fprintf(&b, " %.0f | %s | %s | %d / %d |", r.grpc.OpsPerSecond(), fmtRatio(r.grpcRatio), latencies(r.grpc), ge, ga)
		case c.grpc:
			b.WriteString(" – | – | – | – |")
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "| **geometric mean** | | | | **%s** | | | | |%s\n", fmtRatio(c.geomean), grpcNone)
	if c.yardstick != nil {
		ye, _ := failures(c.yardstick)
		ceiling := ""
		if c.yardstickPG != nil && c.yardstickPG.OpsPerSecond() > 0 {
			ceiling = "(" + fmtRatio(c.yardstick.OpsPerSecond()/c.yardstickPG.OpsPerSecond()) + ")"
		}
		fmt.Fprintf(&b, "| yardstick | workload %s against a trivial Go HTTP handler, same client | %.0f | | %s | %s | | %d / – | |%s\n",
			c.yardstick.Workload, c.yardstick.OpsPerSecond(), ceiling, latencies(c.yardstick), ye, grpcNone)
	}
	b.WriteString("\nops/s counts successful operations (a transaction, a read-modify-write or a scan is one); latencies are " +
		"over all operations of the mix. The yardstick's ratio, in parentheses, is over PostgreSQL's figure for the same " +
		"workload: the most an HTTP/JSON server could reach against PostgreSQL with this client on this machine.")
	if c.grpc {
		b.WriteString(" The gRPC columns are the same Folio server over its gRPC API on the same port, as the official " +
			"clients call it by default: the generated stubs, one connection shared by the clients (as the official Go client " +
			"keeps one), run in the same rounds between the HTTP side and PostgreSQL; the geometric mean is the HTTP side's.")
	}
	b.WriteString("\n")
	b.WriteString("\nCPU per successful operation (aborted and failed ones' CPU included), µs, over the rounds: the server's " +
		"(Folio's process; PostgreSQL's postmaster and its children, running or ended) and the client's (this benchmark's " +
		"process, while it drove that side). Before each run the documents earlier runs inserted are deleted (PostgreSQL's " +
		"table then vacuumed) and every server is left to go idle, unmeasured; after it, the run's server is waited for again " +
		"and what it spends until idle, in parentheses, is charged to the run. PostgreSQL's timed checkpoints fall where " +
		"they fall. Client and servers share the machine's cores.\n\n")
	grpcHead, grpcRule, grpcNone = "", "", ""
	if c.grpc {
		grpcHead, grpcRule, grpcNone = " Folio gRPC server (after) | Folio gRPC's client |", "---:|---:|", " | |"
	}
	b.WriteString("| workload | Folio server (after) | Folio's client | PostgreSQL server (after) | PostgreSQL's client |" + grpcHead +
		"\n|---|---:|---:|---:|---:|" + grpcRule + "\n")
	for _, r := range c.rows {
		fs, fa, fc := r.folioCPU.columns()
		ps, pa, pc := r.pgCPU.columns()
		fmt.Fprintf(&b, "| %s | %s (%s) | %s | %s (%s) | %s |", r.workload.Name, fs, fa, fc, ps, pa, pc)
		if c.grpc {
			gs, ga, gc := r.grpcCPU.columns()
			fmt.Fprintf(&b, " %s (%s) | %s |", gs, ga, gc)
		}
		b.WriteString("\n")
	}
	if c.yardstick != nil {
		ys, ya, yc := c.yardstickCPU.columns()
		fmt.Fprintf(&b, "| yardstick (%s) | %s (%s) | %s | | |%s\n", c.yardstick.Workload, ys, ya, yc, grpcNone)
	}
	if svgPath != "" {
		rel, err := filepath.Rel(filepath.Dir(mdPath), svgPath)
		if err != nil {
			rel = svgPath
		}
		fmt.Fprintf(&b, "\n![Folio / PostgreSQL throughput per workload, log scale](%s)\n", filepath.ToSlash(rel))
	}
	return b.String()
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func fmtRatio(r float64) string {
	switch {
	case r == 0:
		return "–"
	case r < 0.01:
		return fmt.Sprintf("%.4f", r)
	case r < 10:
		return fmt.Sprintf("%.2f", r)
	}
	return fmt.Sprintf("%.1f", r)
}

// sectionTemplate is issue 8's section when the file does not have it yet.
const sectionTemplate = sectionBegin + `
## Issue 8: ` + "`folio bench`" + ` and the comparison with PostgreSQL

` + "`make bench-compare`" + ` (bench/cmd/benchcompare) runs the same workloads, data, seeds and clients against a fresh
Folio server and a throwaway PostgreSQL 15 cluster (documents as jsonb, expression indexes on the queried
fields, fsync and synchronous_commit on), and rewrites the part below between its markers.

` + generatedBegin + "\n" + generatedEnd + "\n" + sectionEnd + "\n"

// issue8 is the section of docs/benchmarks.md this program rewrites.
var issue8 = benchrun.Section{Name: "issue 8", Begin: sectionBegin, End: sectionEnd,
	GeneratedBegin: generatedBegin, GeneratedEnd: generatedEnd, Template: sectionTemplate}

func replaceSection(doc []byte, generated string) ([]byte, error) {
	return issue8.Replace(doc, generated)
}
