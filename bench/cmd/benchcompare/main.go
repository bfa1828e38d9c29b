// Command benchcompare runs the same workloads against Folio and against
// PostgreSQL 15 side by side, and writes the comparison into
// docs/benchmarks.md and docs/bench-compare.svg. `make bench-compare` runs it.
//
// It builds folio, starts a throwaway PostgreSQL cluster and a Folio server
// on temporary directories on loopback, both durable (fsync on, synchronous
// commit on), loads the same documents into both, then runs every workload
// on each side in turn, round after round, alternating which side goes
// first, so that drift of the machine (other load, caches, compactions)
// falls on both. It stops both servers and prints, per workload, the
// operations per second of each side, their ratio Folio/PostgreSQL, and the
// geometric mean of the ratios. A yardstick row runs one workload against
// a trivial Go HTTP handler with the same client: the floor of HTTP and
// JSON cost under every Folio figure. A second Folio column runs some
// workloads (a point read, an insert and a transaction unless told
// otherwise) on the same server over its gRPC API, the official clients'
// default, in the same rounds.
//
// It runs from the repository's root, where it builds folio and finds docs/
// (it lives in the bench module, so build it there first):
//
//	go build -C bench -o ../benchcompare ./cmd/benchcompare
//	./benchcompare [-docs 50000] [-clients 16] [-duration 15s] [-rounds 2] [-workloads all]
//	               [-grpc-workloads C,insert,tx] [-profile eq,range] [-profile-dir DIR] [-md docs/benchmarks.md] [-svg docs/bench-compare.svg]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/foliodb/folio/bench/benchrun"
	"github.com/foliodb/folio/internal/loadgen"
	"github.com/foliodb/folio/tests/pgtest"
)

// config is the comparison's settings, from flags.
type config struct {
	docs            int64
	clients         int
	duration        time.Duration
	rounds          int
	workloads       []loadgen.Workload
	grpcWorkloads   []loadgen.Workload // those of workloads also run over gRPC
	seed            uint64
	yardstick       string // workload run against the trivial handler; "" for none
	folioBin        string
	rev             string // build folio from this commit rather than the working tree
	pgBin           string
	mdPath, svgPath string
	warmup          time.Duration
	profile         []loadgen.Workload
	profileSlowest  int
	profileDir      string
	profileSeconds  int
	httpClient      string // the client that sends Folio's and the yardstick's requests
	progress        io.Writer
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-serve-yardstick" {
		// The yardstick runs in a process of its own, as the servers do,
		// so that it does not share the client's scheduler.
		if err := serveYardstick(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "benchcompare: yardstick:", err)
			os.Exit(1)
		}
		return
	}
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "benchcompare:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "benchcompare:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("benchcompare", flag.ContinueOnError)
	fs.Int64Var(&cfg.docs, "docs", 50_000, "documents loaded on each side")
	fs.IntVar(&cfg.clients, "clients", 16, "concurrent clients")
	fs.DurationVar(&cfg.duration, "duration", 15*time.Second, "time per workload per side per round")
	fs.IntVar(&cfg.rounds, "rounds", 2, "rounds; each runs every workload once on each side")
	workloads := fs.String("workloads", "all", "workloads, comma-separated, or all")
	grpcWorkloads := fs.String("grpc-workloads", "C,insert,tx", "those of the workloads also run on Folio over gRPC, as a second Folio column (all: every one; empty: none)")
	fs.Uint64Var(&cfg.seed, "seed", 1, "seed of the documents and the clients")
	fs.StringVar(&cfg.yardstick, "yardstick", "C", "workload to run against a trivial HTTP handler each round (empty: none)")
	fs.StringVar(&cfg.folioBin, "folio", "", "folio binary to run (default: build ./cmd/folio)")
	fs.StringVar(&cfg.rev, "rev", "", "build folio from this git revision (git archive) instead of the working tree, which may hold others' unfinished changes")
	fs.StringVar(&cfg.pgBin, "pg-bin", "", "directory of PostgreSQL's initdb and postgres (default: the newest /usr/lib/postgresql/*/bin)")
	fs.StringVar(&cfg.mdPath, "md", "docs/benchmarks.md", "markdown file whose issue 8 section gets the results (empty: none)")
	fs.StringVar(&cfg.svgPath, "svg", "docs/bench-compare.svg", "SVG chart of the ratios (empty: none)")
	fs.DurationVar(&cfg.warmup, "warmup", 5*time.Second, "after the load, run workload A this long on each side, unreported (caches, and the work a load leaves behind)")
	profile := fs.String("profile", "", "after the rounds, run these workloads on Folio once more under a CPU profile of the server")
	fs.IntVar(&cfg.profileSlowest, "profile-slowest", 3, "also profile this many workloads with the lowest Folio/PostgreSQL ratio")
	fs.StringVar(&cfg.profileDir, "profile-dir", filepath.Join(os.TempDir(), "folio-bench-profiles"), "where the CPU profiles go")
	fs.IntVar(&cfg.profileSeconds, "profile-seconds", 10, "seconds of each profile")
	fs.StringVar(&cfg.httpClient, "http-client", loadgen.ClientFast, "HTTP client of Folio's and the yardstick's side: "+loadgen.ClientFast+" or "+loadgen.ClientStd)
	quiet := fs.Bool("quiet", false, "no progress lines")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if err := loadgen.CheckHTTPClient(cfg.httpClient); err != nil {
		return cfg, err
	}
	var err error
	if cfg.workloads, err = loadgen.ParseWorkloads(*workloads); err != nil {
		return cfg, err
	}
	if *grpcWorkloads != "" {
		list, err := loadgen.ParseWorkloads(*grpcWorkloads)
		if err != nil {
			return cfg, fmt.Errorf("grpc-workloads: %w", err)
		}
		// Only those the run has, in its order, each once.
		for _, w := range cfg.workloads {
			if slices.ContainsFunc(list, func(g loadgen.Workload) bool { return g.Name == w.Name }) &&
				!slices.ContainsFunc(cfg.grpcWorkloads, func(g loadgen.Workload) bool { return g.Name == w.Name }) {
				cfg.grpcWorkloads = append(cfg.grpcWorkloads, w)
			}
		}
	}
	if *profile != "" {
		if cfg.profile, err = loadgen.ParseWorkloads(*profile); err != nil {
			return cfg, fmt.Errorf("profile: %w", err)
		}
	}
	if cfg.yardstick != "" {
		if _, err := loadgen.LookupWorkload(cfg.yardstick); err != nil {
			return cfg, fmt.Errorf("yardstick: %w", err)
		}
	}
	if cfg.rounds < 1 || cfg.clients < 1 || cfg.docs < loadgen.RangeWidth+1 || cfg.duration <= 0 {
		return cfg, errors.New("rounds, clients and duration must be positive, docs above the range width")
	}
	cfg.progress = os.Stderr
	if *quiet {
		cfg.progress = nil
	}
	return cfg, nil
}

// side is one store under comparison.
type side struct {
	driver loadgen.Driver
	// results holds the merged rounds, by workload name.
	results map[string]*loadgen.Result
	// serverCPU reads the CPU the side's server has used so far; cpu sums,
	// by workload name, what its server and this client spent in the rounds.
	serverCPU func() (time.Duration, error)
	cpu       map[string]*cpuUse
}

// cpuUse is the CPU a workload's operations cost on one side, over the
// rounds: on a machine whose cores the client shares with the server, what
// each spends per operation bounds the throughput of both.
type cpuUse struct {
	// server holds after: what the server spent once the run was over,
	// until it went idle (compactions, checkpoints: the work its writes
	// left behind, which the next workload is not made to pay).
	server, after, client time.Duration
	ops                   int64
}

// perOp returns the server's CPU (all of it, and what came after the
// run) and the client's per operation, in µs.
func (u *cpuUse) perOp() (server, after, client float64) {
	if u == nil || u.ops == 0 {
		return 0, 0, 0
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(u.ops) }
	return per(u.server), per(u.after), per(u.client)
}

// Waiting for the servers to go idle around each run: one is idle when
// it uses at most idleBusy of a core over idleWindow; it is waited for
// idleTimeout at most.
const (
	idleBusy    = 0.05
	idleWindow  = time.Second
	idleTimeout = time.Minute
)

// clientCPU is the user and system CPU this process has used so far.
func clientCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func run(ctx context.Context, cfg config) error {
	start := time.Now()
	tmp, err := os.MkdirTemp("", "folio-benchcompare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	folioBin, folioDesc := cfg.folioBin, "binary "+cfg.folioBin
	if folioBin == "" {
		folioBin = filepath.Join(tmp, "folio")
		cfg.logf("building folio")
		if folioDesc, err = benchrun.BuildFolio(ctx, cfg.rev, tmp, folioBin); err != nil {
			return err
		}
	}
	cfg.logf("starting PostgreSQL")
	// The tests' throwaway cluster, durable: fsync, synchronous_commit and
	// full_page_writes on, as Folio syncs every commit.
	pg, err := pgtest.StartCluster(cfg.pgBin)
	if err != nil {
		return err
	}
	defer pg.Stop()
	cfg.logf("starting folio")
	folio, err := benchrun.StartFolio(ctx, folioBin, "--data-dir", filepath.Join(tmp, "folio-data"))
	if err != nil {
		return err
	}
	defer folio.Stop()
	var yard *benchrun.Process
	if cfg.yardstick != "" {
		if yard, err = startYardstick(ctx); err != nil {
			return err
		}
		defer yard.Stop()
	}

	data := loadgen.Dataset{Docs: cfg.docs, Seed: cfg.seed}
	pgDriver, err := loadgen.NewPostgres(ctx, pg.URL, "usertable", cfg.clients)
	if err != nil {
		return err
	}
	defer pgDriver.Close()
	folioDriver, err := loadgen.NewFolio(loadgen.FolioOptions{URL: folio.URL, Clients: cfg.clients, HTTPClient: cfg.httpClient})
	if err != nil {
		return err
	}
	defer folioDriver.Close()
	// The gRPC side is a second client of the same server: it is loaded
	// with the HTTP side's documents, and left out of the sides waited for
	// (its server is theirs).
	var grpcSide *side
	if len(cfg.grpcWorkloads) > 0 {
		grpcDriver, err := loadgen.NewFolioGRPC(loadgen.FolioOptions{URL: folio.URL, Clients: cfg.clients})
		if err != nil {
			return err
		}
		defer grpcDriver.Close()
		grpcSide = &side{driver: grpcDriver, results: map[string]*loadgen.Result{}, serverCPU: folio.CPUTime, cpu: map[string]*cpuUse{}}
	}
	sides := []*side{
		{driver: folioDriver, results: map[string]*loadgen.Result{}, serverCPU: folio.CPUTime, cpu: map[string]*cpuUse{}},
		{driver: pgDriver, results: map[string]*loadgen.Result{}, serverCPU: func() (time.Duration, error) { return benchrun.TreeCPUTime(pg.PID()) },
			cpu: map[string]*cpuUse{}},
	}
	env, err := describeEnvironment(ctx, pg.URL)
	if err != nil {
		return err
	}
	env.folio = folioDesc
	for _, s := range sides {
		took, err := loadgen.Load(ctx, loadgen.LoadConfig{Driver: s.driver, Data: data, Clients: 4, Progress: cfg.progress})
		if err != nil {
			return err
		}
		env.loadTimes = append(env.loadTimes, fmt.Sprintf("%s %.1fs", s.driver.Name(), took.Seconds()))
		cfg.logf("%s: loaded %d documents in %.1fs", s.driver.Name(), cfg.docs, took.Seconds())
	}
	if cfg.warmup > 0 {
		a, _ := loadgen.LookupWorkload("A")
		for _, s := range sides {
			cfg.logf("warming %s up with workload A for %v", s.driver.Name(), cfg.warmup)
			res, err := loadgen.Run(ctx, loadgen.RunConfig{Driver: s.driver, Workload: a, Data: data, Clients: cfg.clients,
				Duration: cfg.warmup, Seed: cfg.seed + 1000, Progress: cfg.progress, ProgressInterval: time.Second})
			if err != nil {
				return err
			}
			env.warmups = append(env.warmups, fmt.Sprintf("%s %.0f ops/s in %.1fs", s.driver.Name(), res.OpsPerSecond(), res.Elapsed.Seconds()))
		}
	}
	var yardSide *side
	if yard != nil {
		yardDriver, err := loadgen.NewFolio(loadgen.FolioOptions{URL: yard.URL, Clients: cfg.clients, Name: "yardstick", HTTPClient: cfg.httpClient})
		if err != nil {
			return err
		}
		defer yardDriver.Close()
		yardSide = &side{driver: yardDriver, results: map[string]*loadgen.Result{}, serverCPU: yard.CPUTime, cpu: map[string]*cpuUse{}}
	}

	all := sides
	if yardSide != nil {
		all = append(slices.Clone(sides), yardSide)
	}
	for round := 1; round <= cfg.rounds; round++ {
		for _, w := range cfg.workloads {
			for _, s := range roundOrder(round, sides[0], grpcSide, sides[1], cfg.overGRPC(w)) {
				cfg.logf("round %d of %d: workload %s on %s", round, cfg.rounds, w.Name, s.driver.Name())
				if err := s.run(ctx, cfg, w, data, all); err != nil {
					return err
				}
			}
		}
		if yardSide != nil {
			w, _ := loadgen.LookupWorkload(cfg.yardstick)
			cfg.logf("round %d of %d: workload %s on the yardstick", round, cfg.rounds, w.Name)
			if err := yardSide.run(ctx, cfg, w, data, all); err != nil {
				return err
			}
		}
	}
	cmp := compare(cfg, sides[0], grpcSide, sides[1], yardSide)
	env.took = time.Since(start)

	for _, w := range append(cfg.profile, cmp.slowest(cfg.profileSlowest)...) {
		path, err := profileFolio(ctx, cfg, sides[0], folio, w, data)
		if err != nil {
			return err
		}
		cfg.logf("CPU profile of folio under %s: %s (go tool pprof -top %s)", w.Name, path, path)
	}

	if err := cmp.writeText(os.Stdout); err != nil {
		return err
	}
	if cfg.svgPath != "" {
		if err := os.WriteFile(cfg.svgPath, cmp.svg(), 0o644); err != nil {
			return err
		}
	}
	if cfg.mdPath != "" {
		if err := issue8.Update(cfg.mdPath, cmp.markdown(cfg, env, cfg.svgPath, cfg.mdPath)); err != nil {
			return err
		}
		cfg.logf("wrote %s and %s", cfg.mdPath, cfg.svgPath)
	}
	return nil
}

// overGRPC reports whether w runs on the gRPC side too.
func (c config) overGRPC(w loadgen.Workload) bool {
	return slices.ContainsFunc(c.grpcWorkloads, func(g loadgen.Workload) bool { return g.Name == w.Name })
}

// roundOrder is the order in which a round runs a workload on the sides:
// Folio over HTTP, over gRPC if it runs there, then PostgreSQL; backwards
// in even rounds, so that drift of the machine falls on every side.
func roundOrder(round int, folio, grpc, pg *side, overGRPC bool) []*side {
	order := []*side{folio}
	if overGRPC && grpc != nil {
		order = append(order, grpc)
	}
	order = append(order, pg)
	if round%2 == 0 {
		slices.Reverse(order)
	}
	return order
}

// readServerCPU is serverCPU with the side named in its error.
func (s *side) readServerCPU() (time.Duration, error) {
	d, err := s.serverCPU()
	if err != nil {
		return 0, fmt.Errorf("%s's CPU: %w", s.driver.Name(), err)
	}
	return d, nil
}

// settle waits for every side's server to go idle (or idleTimeout to pass
// for each).
func settle(ctx context.Context, sides []*side) error {
	for _, s := range sides {
		if _, _, err := benchrun.WaitIdle(ctx, s.serverCPU, idleBusy, idleWindow, idleTimeout); err != nil {
			return fmt.Errorf("waiting for %s to go idle: %w", s.driver.Name(), err)
		}
	}
	return nil
}

// run runs one workload on the side and merges the result into its rounds,
// and what the run cost the server and the client into its CPU. all are
// every side's servers, which share the machine.
func (s *side) run(ctx context.Context, cfg config, w loadgen.Workload, data loadgen.Dataset, all []*side) error {
	// Run deletes what earlier runs inserted before it starts; do it here
	// (Run's own then finds nothing) and let every server settle, so that
	// neither the deletes nor the work they leave count towards this run.
	if err := s.driver.Trim(ctx, data.Docs); err != nil {
		return fmt.Errorf("trim %s: %w", s.driver.Name(), err)
	}
	if err := settle(ctx, all); err != nil {
		return err
	}
	server0, err := s.readServerCPU()
	if err != nil {
		return err
	}
	client0 := clientCPU()
	res, err := loadgen.Run(ctx, loadgen.RunConfig{Driver: s.driver, Workload: w, Data: data, Clients: cfg.clients,
		Duration: cfg.duration, Seed: cfg.seed, Progress: cfg.progress, ProgressInterval: 5 * time.Second})
	if err != nil {
		return err
	}
	client := clientCPU() - client0
	server1, err := s.readServerCPU()
	if err != nil {
		return err
	}
	waited, idle, err := benchrun.WaitIdle(ctx, s.serverCPU, idleBusy, idleWindow, idleTimeout)
	if err != nil {
		return fmt.Errorf("waiting for %s to go idle: %w", s.driver.Name(), err)
	}
	if !idle {
		cfg.logf("%s still busy %v after %s", s.driver.Name(), waited.Round(time.Second), w.Name)
	}
	server2, err := s.readServerCPU()
	if err != nil {
		return err
	}
	u := s.cpu[w.Name]
	if u == nil {
		u = &cpuUse{}
		s.cpu[w.Name] = u
	}
	u.server += server2 - server0
	u.after += server2 - server1
	u.client += client
	u.ops += res.Total().Hist.Count()
	if prev := s.results[w.Name]; prev != nil {
		return prev.Merge(res)
	}
	s.results[w.Name] = res
	return nil
}

func (c config) logf(format string, args ...any) {
	if c.progress != nil {
		fmt.Fprintf(c.progress, "benchcompare: "+format+"\n", args...)
	}
}

// profileFolio runs w on Folio while the server records a CPU profile.
func profileFolio(ctx context.Context, cfg config, s *side, folio *benchrun.Process, w loadgen.Workload, data loadgen.Dataset) (string, error) {
	if err := os.MkdirAll(cfg.profileDir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(cfg.profileDir, "folio-"+strings.ToLower(w.Name)+".pprof")
	// The run is a second longer on each end than the profile, so that the
	// profile sees only the workload.
	got := make(chan error, 1)
	go func() {
		time.Sleep(time.Second)
		got <- benchrun.FetchProfile(ctx, folio.PprofURL, cfg.profileSeconds, path)
	}()
	_, err := loadgen.Run(ctx, loadgen.RunConfig{Driver: s.driver, Workload: w, Data: data, Clients: cfg.clients,
		Duration: time.Duration(cfg.profileSeconds+2) * time.Second, Seed: cfg.seed + 1})
	if perr := <-got; err == nil {
		err = perr
	}
	if err != nil {
		return path, err
	}
	return path, benchrun.ProfileTop(ctx, path)
}
