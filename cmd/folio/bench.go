package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/foliodb/folio/internal/loadgen"
)

// benchWorkloads is the list of workloads `folio bench -h` shows.
func benchWorkloads() string {
	var b strings.Builder
	b.WriteString("Workloads (--workload, comma-separated, or all):")
	for _, w := range loadgen.Workloads {
		fmt.Fprintf(&b, "\n  %-7s %s (%s keys)", w.Name, w.Description, w.Distribution)
	}
	return b.String()
}

// benchCommand is `folio bench`, the load generator.
func benchCommand(fs *flag.FlagSet) runFunc {
	driver := fs.String("driver", "folio", "what to load: folio (the HTTP API at --url), folio-grpc (the gRPC API on the same port, as the official clients call it) or postgres (--url is a PostgreSQL URL)")
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
	return func(s *invocation, _ []string) error {
		list, err := loadgen.ParseWorkloads(*workloads)
		if err != nil {
			return err
		}
		if *dist != "" {
			if _, err := loadgen.NewKeyChooser(*dist, loadgen.NewKeyspace(1)); err != nil {
				return err
			}
		}
		var progress io.Writer = os.Stderr
		if *quiet {
			progress = nil
		}

		ctx := s.ctx
		var d loadgen.Driver
		switch *driver {
		case "folio":
			if d, err = loadgen.NewFolio(loadgen.FolioOptions{URL: *url, Database: *db, Collection: *coll, Clients: *clients, HTTPClient: *httpClient}); err != nil {
				return err
			}
		case "folio-grpc":
			if d, err = loadgen.NewFolioGRPC(loadgen.FolioOptions{URL: *url, Database: *db, Collection: *coll, Clients: *clients}); err != nil {
				return err
			}
		case "postgres":
			if d, err = loadgen.NewPostgres(ctx, *url, *coll, *clients); err != nil {
				return err
			}
		default:
			return fmt.Errorf("unknown driver %q (want folio, folio-grpc or postgres)", *driver)
		}
		defer d.Close()

		data := loadgen.Dataset{Docs: *docs, Seed: *seed}
		if *load {
			took, err := loadgen.Load(ctx, loadgen.LoadConfig{Driver: d, Data: data, Clients: min(*clients, 4), BatchSize: *batch, Progress: progress})
			if err != nil {
				return err
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
				return fmt.Errorf("warm-up: %w", err)
			}
		}
		if *cpuProfile != "" {
			// The client's own cost: with the server on the same machine,
			// every microsecond it spends is one the server does not get.
			stopProfile, err := startCPUProfile(*cpuProfile)
			if err != nil {
				return err
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
				printResults(s.out.w, results, *asJSON)
				return err
			}
		}
		return printResults(s.out.w, results, *asJSON)
	}
}

func printResults(w io.Writer, results []*loadgen.Result, asJSON bool) error {
	if len(results) == 0 {
		return nil
	}
	if asJSON {
		return loadgen.WriteJSON(w, results)
	}
	var sb strings.Builder
	if err := loadgen.WriteTable(&sb, results); err != nil {
		return err
	}
	_, err := io.WriteString(w, sb.String())
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
