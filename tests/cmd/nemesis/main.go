// Command nemesis runs Folio's nemesis test (issue 43; make nemesis):
// clients over HTTP and gRPC against a cluster under faults, their
// histories checked for isolation anomalies (tests/nemesis). Each run
// starts a fresh cluster of each setup asked for: three nodes on one
// PostgreSQL, one node on the embedded engine. It prints each run's
// report and exits 0 when every run found nothing, 1 when one found an
// anomaly, 2 when a run could not be carried out.
//
//	nemesis -duration 10m -runs 3
//	nemesis -setup pebble -duration 1m -faults kill,cut
//
// The histories, the faults' log and the nodes' output of each run are
// kept under -dir; `historycheck -realtime <dir>/.../append.jsonl`
// checks a history again.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/foliodb/folio/tests/nemesis"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("nemesis", flag.ContinueOnError)
	fs.SetOutput(stderr)
	setups := fs.String("setup", "postgres,pebble", "setups to run, comma-separated: postgres (3 nodes on one PostgreSQL), pebble (one embedded node)")
	duration := fs.Duration("duration", 10*time.Minute, "how long each run's clients and faults go on")
	minFaults := fs.Int("min-faults", 0, "keep each run going past -duration until this many faults were injected (at most three times -duration)")
	runs := fs.Int("runs", 1, "runs of each setup, one after the other")
	clients := fs.Int("clients", 16, "concurrent clients, half of them list-append, half bank")
	interval := fs.Duration("interval", 3*time.Second, "mean pause between two faults")
	faults := fs.String("faults", "", "fault kinds, comma-separated (kill, pause, cut, pg-restart, pg-pause); default: every kind of the setup")
	lease := fs.Duration("lease", time.Second, "the nodes' --node-lease")
	seed := fs.Uint64("seed", 0, "seed of the clients' and faults' choices (0: drawn)")
	dir := fs.String("dir", "", "where the runs' histories and logs go (default: a new directory under the system's temporary one)")
	folio := fs.String("folio", "", "the folio binary (default: built from this module with go build)")
	pgBin := fs.String("pg-bin", "", "PostgreSQL's server programs (default: the newest /usr/lib/postgresql/*/bin)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "folio-nemesis-"+time.Now().Format("20060102-150405")+"-")
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		*dir = d
	}
	if *folio == "" {
		*folio = filepath.Join(*dir, "folio")
		fmt.Fprintf(stdout, "building folio into %s\n", *folio)
		out, err := exec.Command("go", "build", "-o", *folio, "github.com/foliodb/folio/cmd/folio").CombinedOutput()
		if err != nil {
			fmt.Fprintf(stderr, "go build: %v\n%s", err, out)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var kinds []string
	if *faults != "" {
		kinds = strings.Split(*faults, ",")
	}
	code := 0
	var summary []string
	for i := range *runs {
		for _, setup := range strings.Split(*setups, ",") {
			if ctx.Err() != nil {
				return 2
			}
			cfg := nemesis.Config{Setup: setup, Folio: *folio, Dir: filepath.Join(*dir, fmt.Sprintf("%s-%d", setup, i+1)),
				Duration: *duration, MinFaults: *minFaults, Clients: *clients, FaultInterval: *interval, Faults: kinds, Lease: *lease, Seed: *seed, PGBin: *pgBin,
				Logf: func(format string, args ...any) {
					fmt.Fprintf(stdout, "%s  %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
				}}
			fmt.Fprintf(stdout, "== run %d of %d, %s, %v\n", i+1, *runs, setup, *duration)
			rep, err := nemesis.Run(ctx, cfg)
			if err != nil {
				fmt.Fprintf(stderr, "run %d, %s: %v (logs in %s)\n", i+1, setup, err, cfg.Dir)
				return 2
			}
			fmt.Fprintln(stdout, rep)
			verdict := "valid"
			if !rep.Valid() {
				verdict = "ANOMALIES"
				code = 1
			}
			summary = append(summary, fmt.Sprintf("run %d %s: %d faults, list-append %v, bank %v: %s", i+1, setup, rep.FaultCount(), rep.Append, rep.Bank, verdict))
		}
	}
	fmt.Fprintln(stdout, "== summary")
	for _, s := range summary {
		fmt.Fprintln(stdout, s)
	}
	return code
}
