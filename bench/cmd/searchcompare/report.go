package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/foliodb/folio/bench/benchrun"
)

// environment is what the report says about where and how it ran.
type environment struct {
	benchrun.Machine
	postgres              string
	folio                 string // what was built
	loadBefore, loadAfter string
	took                  time.Duration
}

// The engine the aim compares Folio with, and Folio's row in it.
const (
	baseline   = "SQLite FTS5"
	folioFirst = "Folio (Pebble)"
	floorName  = "HTTP floor"
)

func fmtDur(d time.Duration) string {
	us := float64(d) / float64(time.Microsecond)
	switch {
	case d == 0:
		return "–"
	case us >= 1e6:
		return fmt.Sprintf("%.2f s", us/1e6)
	case us >= 1e4:
		return fmt.Sprintf("%.0f ms", us/1e3)
	case us >= 1e3:
		return fmt.Sprintf("%.1f ms", us/1e3)
	}
	return fmt.Sprintf("%.0f µs", us)
}

func fmtRatio(a, b time.Duration) string {
	if a == 0 || b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

// p50p99 renders runs as "p50 / p99".
func p50p99(l latencies) string {
	if len(l) == 0 {
		return "–"
	}
	return fmtDur(l.percentile(50)) + " / " + fmtDur(l.percentile(99))
}

// row is one line of a corpus's latency table: a label, each engine's
// cell, and the ratios of Folio's p50 and p99 to the baseline's.
type row struct {
	label, desc string
	cells       []string
	ratios      [2]string
}

func (r *corpusResult) rows() []row {
	var out []row
	load := row{label: "indexing", desc: "documents a second, until the last is searchable"}
	for _, e := range r.engines {
		cell := "–" // not loaded: the floor
		if s := r.loadSeconds[e]; s > 0 {
			cell = fmt.Sprintf("%.0f docs/s", float64(len(r.corpus.docs))/s)
		}
		load.cells = append(load.cells, cell)
	}
	if f, b := r.loadSeconds[folioFirst], r.loadSeconds[baseline]; f > 0 && b > 0 {
		load.ratios = [2]string{fmt.Sprintf("%.2f", b/f), ""} // rates: baseline's time over Folio's
	}
	out = append(out, load)
	for _, k := range kinds {
		lat := r.lat[k.name]
		if lat == nil {
			continue
		}
		q := row{label: k.name, desc: k.desc}
		for _, e := range r.engines {
			q.cells = append(q.cells, p50p99(lat[e]))
		}
		f, b := lat[folioFirst], lat[baseline]
		q.ratios = [2]string{fmtRatio(f.percentile(50), b.percentile(50)), fmtRatio(f.percentile(99), b.percentile(99))}
		out = append(out, q)
	}
	if len(r.cts) > 0 || len(r.ctsErr) > 0 {
		c := row{label: "commit to searchable", desc: "16 writers: from an insert's acknowledgement to a search's answer that holds it"}
		for _, e := range r.engines {
			cell := p50p99(r.cts[e])
			if msg := r.ctsErr[e]; msg != "" {
				cell = "failed: " + msg
			}
			c.cells = append(c.cells, cell)
		}
		out = append(out, c)
	}
	return out
}

// checks is, per query kind, what each engine found: matches, the first
// hit's id (for sorted kinds, the same everywhere) and the facets' digest.
func (r *corpusResult) checks() [][]string {
	var out [][]string
	for _, q := range r.queries {
		line := []string{q.kind, q.String()}
		for _, e := range r.engines {
			o := r.out[q.kind][e]
			cell := fmt.Sprintf("%d, first %d", o.found, o.firstID)
			if o.facets != "" {
				cell += ", " + o.facets
			}
			line = append(line, cell)
		}
		out = append(out, line)
	}
	return out
}

func writeText(w io.Writer, results []*corpusResult) error {
	for _, r := range results {
		fmt.Fprintf(w, "\n%s\n", r.corpus.desc)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "p50 / p99\t%s\tFolio/SQLite p50\tp99\n", strings.Join(r.engines, "\t"))
		for _, row := range r.rows() {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", row.label, strings.Join(row.cells, "\t"), row.ratios[0], row.ratios[1])
		}
		tw.Flush()
		fmt.Fprintln(w, "found:")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, c := range r.checks() {
			fmt.Fprintln(tw, strings.Join(c, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, p := range r.profiles {
			fmt.Fprintf(w, "profile: %s\n", p)
		}
	}
	return nil
}

// The generated part of issue 14's section of docs/benchmarks.md.
var issue14 = benchrun.Section{
	Name:           "issue 14",
	Begin:          "<!-- issue 14: begin -->",
	End:            "<!-- issue 14: end -->",
	GeneratedBegin: "<!-- issue 14 search-compare: begin (written by make search-compare; edits here are lost) -->",
	GeneratedEnd:   "<!-- issue 14 search-compare: end -->",
	Template: "<!-- issue 14: begin -->\n## Issue 14: search\n\n" +
		"<!-- issue 14 search-compare: begin (written by make search-compare; edits here are lost) -->\n" +
		"<!-- issue 14 search-compare: end -->\n<!-- issue 14: end -->\n",
}

func markdown(cfg config, env *environment, results []*corpusResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %s, %d cores, %s RAM, %s; %s; PostgreSQL %s; Folio built from %s. "+
		"Load average (1, 5, 15 min) %s at the start, %s at the end. Whole run: %.1f minutes. "+
		"Each query kind ran on each engine up to %d times (at most %v) per round, %d rounds, one query at a time, "+
		"the engines taking turns query by query; %d documents per loading transaction from %d clients.\n",
		env.Date.Format("2006-01-02 15:04 MST"), env.CPU, env.Cores, env.Memory, env.OS, env.GoVersion, env.postgres, env.folio,
		orDash(env.loadBefore), orDash(env.loadAfter), env.took.Minutes(), cfg.runs, cfg.limit, cfg.rounds, cfg.batch, cfg.loadClients)
	for _, r := range results {
		t := r.corpus.terms
		fmt.Fprintf(&b, "\n**%s.** Terms picked by document frequency: rare `%s` (%d), common `%s` (%d), medium `%s` (%d), phrase `%s %s` (%d); filter tag `%s`, size in [%g, %g); deep page from hit %d.\n\n",
			r.corpus.desc, t.Rare, t.RareDF, t.Common, t.CommonDF, t.Medium, t.MediumDF, t.Phrase[0], t.Phrase[1], t.PhraseDF,
			t.FilterTag, t.SizeLo, t.SizeHi, t.DeepOffset+1)
		fmt.Fprintf(&b, "| p50 / p99 | | %s | Folio (Pebble) / SQLite, p50 | p99 |\n", strings.Join(r.engines, " | "))
		b.WriteString("|---|---|" + strings.Repeat("---:|", len(r.engines)) + "---:|---:|\n")
		for _, row := range r.rows() {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", row.label, row.desc, strings.Join(row.cells, " | "), orDash(row.ratios[0]), orDash(row.ratios[1]))
		}
		b.WriteString("\nWhat each engine found (matches, first hit's id; facets: the first value of tag and of source with their counts, rank's count and sum):\n\n")
		fmt.Fprintf(&b, "| kind | query | %s |\n|---|---|%s\n", strings.Join(r.engines, " | "), strings.Repeat("---|", len(r.engines)))
		for _, c := range r.checks() {
			fmt.Fprintf(&b, "| %s |\n", strings.Join(c, " | "))
		}
	}
	b.WriteString("\nIndexing's ratio is SQLite's loading time over Folio's (above 1: Folio indexes faster); the query ratios are Folio's latency over SQLite's (at or below 1 meets the aim). " +
		"The HTTP floor is a trivial server that answers each search with the bytes Folio answered it with, read by the same client: " +
		"what the request and its answer cost over HTTP whatever the server does (Folio's latency less the floor's is Folio's own work); " +
		"where the floor is above SQLite's latency, no server over HTTP meets the aim.\n")
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
