package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/foliodb/folio/internal/loadgen"
)

const benchUsage = `usage: folio bench [flags]

Loads documents of about 1 KB into a collection, then runs workloads on it
from concurrent clients, each for --duration, printing a progress line a
second to stderr and a table (or JSON) of operations per second and
p50/p95/p99 latency per operation to stdout.

Workloads (--workload, comma-separated, or all):
`

// bench runs `folio bench`, the load generator.
func bench(args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprint(out, benchUsage)
		for _, w := range loadgen.Workloads {
			fmt.Fprintf(out, "  %-7s %s (%s keys)\n", w.Name, w.Description, w.Distribution)
		}
		fmt.Fprintln(out, "\nFlags:")
		fs.PrintDefaults()
	}
	driver := fs.String("driver", "folio", "what to load: folio (the HTTP API at --url) or postgres (--url is a PostgreSQL URL)")
	url := fs.String("url", "http://127.0.0.1:8081", "the server's base URL (several, comma-separated: nodes on one PostgreSQL database, sent requests in turn), or with --driver postgres a connection URL")
	db := fs.String("db", "bench", "database of the collection (folio)")
	coll := fs.String("collection", "usertable", "collection (table, on postgres) to load and query; dropped and recreated by the load")
	docs := fs.Int64("docs", 100_000, "documents loaded, ids 0 to docs-1")
	clients := fs.Int("clients", 16, "concurrent clients, one request in flight each")
	duration := fs.Duration("duration", 10*time.Second, "how long each workload runs")
	maxOps := fs.Int64("ops", 0, "stop a workload after this many operations, if sooner (0: no limit)")
	dist := fs.String("distribution", "", "key distribution for every workload: uniform, zipfian or latest (default: each workload's own)")
	seed := fs.Uint64("seed", 1, "seed of the documents and of every client's operations and keys")
	workloads := fs.String("workload", "all", "workloads to run, in order: names from the list above, comma-separated, or all")
	load := fs.Bool("load", true, "drop the collection and load --docs documents first; without it the collection must hold exactly those")
	warmup := fs.Duration("warmup", 5*time.Second, "run workload A this long before measuring, unreported, so that caches fill and the work a load leaves behind is done (0: none)")
	batch := fs.Int("batch", 500, "documents per insert request in the load")
	asJSON := fs.Bool("json", false, "print the results as JSON instead of tables")
	quiet := fs.Bool("quiet", false, "no progress lines")
	httpClient := fs.String("http-client", loadgen.ClientFast, "HTTP client of the folio driver: "+loadgen.ClientFast+" (reuses its buffers, reads and writes in the calling goroutine) or "+loadgen.ClientStd+" (Go's standard client)")
	cpuProfile := fs.String("cpu-profile", "", "write a CPU profile of this client, over the measured workloads only, to this file")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench: unexpected arguments %q", fs.Args())
	}
	list, err := loadgen.ParseWorkloads(*workloads)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if *dist != "" {
		if _, err := loadgen.NewKeyChooser(*dist, loadgen.NewKeyspace(1)); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
	}
	var progress io.Writer = os.Stderr
	if *quiet {
		progress = nil
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var d loadgen.Driver
	switch *driver {
	case "folio":
		if d, err = loadgen.NewFolio(loadgen.FolioOptions{URL: *url, Database: *db, Collection: *coll, Clients: *clients, HTTPClient: *httpClient}); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
	case "postgres":
		if d, err = loadgen.NewPostgres(ctx, *url, *coll, *clients); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
	default:
		return fmt.Errorf("bench: unknown driver %q (want folio or postgres)", *driver)
	}
	defer d.Close()

	data := loadgen.Dataset{Docs: *docs, Seed: *seed}
	if *load {
		took, err := loadgen.Load(ctx, loadgen.LoadConfig{Driver: d, Data: data, Clients: min(*clients, 4), BatchSize: *batch, Progress: progress})
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		if progress != nil {
			fmt.Fprintf(progress, "%s: loaded %d documents in %.1fs\n", d.Name(), *docs, took.Seconds())
		}
	}
	if *warmup > 0 {
		if progress != nil {
			fmt.Fprintf(progress, "%s: warming up with workload A for %v (not reported)\n", d.Name(), *warmup)
		}
		a, _ := loadgen.LookupWorkload("A")
		if _, err := loadgen.Run(ctx, loadgen.RunConfig{Driver: d, Workload: a, Data: data, Clients: *clients,
			Duration: *warmup, Seed: *seed + 1, Progress: progress}); err != nil {
			return fmt.Errorf("bench: warm-up: %w", err)
		}
	}
	if *cpuProfile != "" {
		// The client's own cost: with the server on the same machine,
		// every microsecond it spends is one the server does not get.
		stopProfile, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		defer stopProfile()
	}
	var results []*loadgen.Result
	for _, w := range list {
		res, err := loadgen.Run(ctx, loadgen.RunConfig{Driver: d, Workload: w, Data: data, Clients: *clients,
			Duration: *duration, MaxOps: *maxOps, Distribution: *dist, Seed: *seed, Progress: progress})
		if res != nil {
			results = append(results, res)
		}
		if err != nil {
			// Show what ran before the interruption or failure.
			printResults(results, *asJSON)
			return fmt.Errorf("bench: %w", err)
		}
	}
	return printResults(results, *asJSON)
}

func printResults(results []*loadgen.Result, asJSON bool) error {
	if len(results) == 0 {
		return nil
	}
	if asJSON {
		return loadgen.WriteJSON(os.Stdout, results)
	}
	var sb strings.Builder
	if err := loadgen.WriteTable(&sb, results); err != nil {
		return err
	}
	_, err := io.WriteString(os.Stdout, sb.String())
	return err
}

// startCPUProfile starts a CPU profile into path; the function it returns
// stops it and closes the file.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
