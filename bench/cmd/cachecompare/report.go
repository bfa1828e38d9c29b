package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/foliodb/folio/bench/benchrun"
)

// cacheSection is issue 38's part of docs/benchmarks.md.
var cacheSection = benchrun.Section{
	Name:           "issue 38",
	Begin:          "<!-- issue 38: begin -->",
	End:            "<!-- issue 38: end -->",
	GeneratedBegin: "<!-- issue 38 cache-compare: begin (written by make cache-compare; edits here are lost) -->",
	GeneratedEnd:   "<!-- issue 38 cache-compare: end -->",
	Template: "<!-- issue 38: begin -->\n## Issue 38: caches against Redis\n\n" +
		"<!-- issue 38 cache-compare: begin (written by make cache-compare; edits here are lost) -->\n" +
		"<!-- issue 38 cache-compare: end -->\n<!-- issue 38: end -->\n",
}

// render is the generated part of the section: the setting, then per pair
// and workload the median of each side's rounds and their ratio.
func render(cfg config, results []result, built, redisVersion string) string {
	m := benchrun.DescribeMachine()
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %s (%d cores, %s), %s; load average at the end %s. Folio: %s. Redis: %s.\n\n",
		m.Date.Format(time.DateOnly), m.CPU, m.Cores, m.Memory, m.OS, benchrun.LoadAverage(), built, redisVersion)
	fmt.Fprintf(&b, "%d clients, each on a connection of its own sending one request at a time (Redis: RESP; Folio: gRPC), "+
		"values of %d bytes on random keys of %d loaded first; %d rounds of %s per workload and side, alternating which side goes first; "+
		"the median of the rounds in operations per second, and the server's CPU per operation (its process's user and system time over the workload, divided by the operations: a figure the other work on a shared machine moves less).\n\n", cfg.clients, cfg.value, cfg.keys, cfg.rounds, cfg.duration)
	b.WriteString("| durability | workload | Redis ops/s | Folio ops/s | Folio / Redis | Redis CPU/op | Folio CPU/op |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, pair := range []string{"durability off", "durable"} {
		for _, w := range []string{"set", "get"} {
			var redis, folio, redisCPU, folioCPU []float64
			var redisName, folioName string
			for _, r := range results {
				if r.pair != pair || r.workload != w {
					continue
				}
				if strings.HasPrefix(r.side, "Redis") {
					redis, redisName = append(redis, r.perSecond()), r.side
					redisCPU = append(redisCPU, float64(r.cpuPerOp().Nanoseconds())/1000)
				} else {
					folio, folioName = append(folio, r.perSecond()), r.side
					folioCPU = append(folioCPU, float64(r.cpuPerOp().Nanoseconds())/1000)
				}
			}
			rm, fm := median(redis), median(folio)
			ratio := 0.0
			if rm > 0 {
				ratio = fm / rm
			}
			fmt.Fprintf(&b, "| %s: %s, %s | %s | %.0f | %.0f | %.2f | %.1f µs | %.1f µs |\n", pair, redisName, folioName, w, rm, fm, ratio, median(redisCPU), median(folioCPU))
		}
	}
	return b.String()
}
