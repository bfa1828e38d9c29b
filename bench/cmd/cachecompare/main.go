// Command cachecompare runs the same cache workloads against Folio's caches
// and against Redis 7 (Debian's redis-server) side by side, and writes the
// comparison into docs/benchmarks.md. `make cache-compare` runs it.
//
// It builds folio and starts it on a temporary data directory (the
// embedded engine), and two Redis servers on temporary directories of
// their own: one with durability off (appendonly no, save ""), one with
// every write fsynced (appendonly yes, appendfsync always). Folio has two
// caches in one project: a volatile one (entries in memory, nothing
// written to the store) and a durable one (entries in the store, each
// write a transaction committed with fsync). Each workload runs with the
// same number of clients, each with a connection of its own sending one
// request at a time (Redis over RESP, Folio over gRPC, its clients'
// default), values of the same size on random keys of a keyspace loaded
// first. The pairs (Redis without durability and Folio's volatile cache;
// Redis fsyncing and Folio's durable cache) run in rounds, alternating
// which side goes first, so that drift of the machine falls on both; the
// report gives the median of the rounds.
//
//	go build -C bench -o ../cachecompare ./cmd/cachecompare
//	./cachecompare [-clients 16] [-duration 10s] [-rounds 3] [-value 100] [-keys 10000] [-profile] [-md docs/benchmarks.md]
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/foliodb/folio/bench/benchrun"
)

type config struct {
	clients  int
	duration time.Duration
	rounds   int
	value    int
	keys     int
	redisBin string
	folioBin string
	mdPath   string
	profile  bool
}

func main() {
	var cfg config
	flag.IntVar(&cfg.clients, "clients", 16, "clients, each with a connection of its own")
	flag.DurationVar(&cfg.duration, "duration", 10*time.Second, "time of each workload on each side in each round")
	flag.IntVar(&cfg.rounds, "rounds", 3, "rounds")
	flag.IntVar(&cfg.value, "value", 100, "bytes of each value")
	flag.IntVar(&cfg.keys, "keys", 10_000, "keys loaded first, and the keyspace the workloads pick from")
	flag.StringVar(&cfg.redisBin, "redis-bin", "redis-server", "the Redis server")
	flag.StringVar(&cfg.folioBin, "folio-bin", "", "a folio binary (default: built from the working tree)")
	flag.StringVar(&cfg.mdPath, "md", "docs/benchmarks.md", "the file whose cache section is rewritten (\"\": none)")
	flag.BoolVar(&cfg.profile, "profile", false, "take a CPU profile of Folio during the last round's volatile get, into the temporary directory (kept)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "cachecompare:", err)
		os.Exit(1)
	}
}

// side is one server of a pair, ready to make its clients.
type side struct {
	name string
	// client opens a client's connection: its set and get of one key.
	client func() (c *client, err error)
	// cpu is the CPU the side's server has used so far.
	cpu func() (time.Duration, error)
}

type client struct {
	set   func(key string, value []byte) error
	get   func(key string) error
	close func()
}

// result is a workload's figure on a side in a round.
type result struct {
	pair, workload, side string
	round                int
	ops                  int64
	elapsed              time.Duration
	errs                 int64
	// cpu is the server's CPU over the workload: what it costs per
	// operation, whatever else the shared machine runs.
	cpu time.Duration
}

func (r result) cpuPerOp() time.Duration {
	if r.ops == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.ops)
}

func (r result) perSecond() float64 { return float64(r.ops) / r.elapsed.Seconds() }

func run(ctx context.Context, cfg config) error {
	tmp, err := os.MkdirTemp("", "cachecompare-")
	if err != nil {
		return err
	}
	keep := cfg.profile
	defer func() {
		if !keep {
			os.RemoveAll(tmp)
		}
	}()
	built := "the binary " + cfg.folioBin
	if cfg.folioBin == "" {
		cfg.folioBin = filepath.Join(tmp, "folio")
		if built, err = benchrun.BuildFolio(ctx, "", tmp, cfg.folioBin); err != nil {
			return err
		}
	}
	redisVersion, _ := exec.Command(cfg.redisBin, "--version").Output()

	fast, err := startRedis(ctx, cfg.redisBin, filepath.Join(tmp, "redis-fast"), "--appendonly", "no", "--save", "")
	if err != nil {
		return err
	}
	defer fast.stop()
	durable, err := startRedis(ctx, cfg.redisBin, filepath.Join(tmp, "redis-fsync"), "--appendonly", "yes", "--appendfsync", "always", "--save", "")
	if err != nil {
		return err
	}
	defer durable.stop()
	folio, err := benchrun.StartFolio(ctx, cfg.folioBin, "--data-dir", filepath.Join(tmp, "folio-data"))
	if err != nil {
		return err
	}
	defer folio.Stop()
	grpcAddr := strings.TrimPrefix(folio.URL, "http://")
	if err := setupFolio(ctx, grpcAddr); err != nil {
		return err
	}

	pairs := []struct {
		name       string
		redis, fol side
	}{
		{"durability off", redisSide("Redis (appendonly no)", fast), folioSide("Folio (volatile cache)", grpcAddr, "volatile", folio.CPUTime)},
		{"durable", redisSide("Redis (appendfsync always)", durable), folioSide("Folio (durable cache)", grpcAddr, "durable", folio.CPUTime)},
	}
	value := make([]byte, cfg.value)
	for i := range value {
		value[i] = 'a' + byte(i%26)
	}
	// Every side holds the keyspace before the gets.
	for _, p := range pairs {
		for _, s := range []side{p.redis, p.fol} {
			if err := load(s, cfg.keys, value); err != nil {
				return fmt.Errorf("%s: load: %w", s.name, err)
			}
		}
	}
	var results []result
	workloads := []string{"set", "get"}
	for round := range cfg.rounds {
		for _, p := range pairs {
			for _, w := range workloads {
				sides := []side{p.redis, p.fol}
				if round%2 == 1 {
					sides = []side{p.fol, p.redis}
				}
				for _, s := range sides {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					var profiled chan error
					if cfg.profile && round == cfg.rounds-1 && w == "get" && s.name == p.fol.name && p.name == "durability off" {
						profiled = make(chan error, 1)
						path := filepath.Join(tmp, "folio-volatile-get.pprof")
						go func() {
							err := benchrun.FetchProfile(ctx, folio.PprofURL, int(cfg.duration.Seconds()*0.8), path)
							if err == nil {
								err = benchrun.ProfileTop(ctx, path)
							}
							profiled <- err
						}()
						fmt.Fprintln(os.Stderr, "profile:", path)
					}
					r, err := measure(s, w, cfg, value)
					if err != nil {
						return fmt.Errorf("%s %s: %w", s.name, w, err)
					}
					if profiled != nil {
						if err := <-profiled; err != nil {
							fmt.Fprintln(os.Stderr, "cachecompare: profile:", err)
						}
					}
					r.pair, r.round = p.name, round+1
					results = append(results, r)
					fmt.Fprintf(os.Stderr, "round %d  %-28s %-4s %10.0f ops/s %6.1f µs CPU/op (%d errors)\n", round+1, s.name, w, r.perSecond(), float64(r.cpuPerOp().Nanoseconds())/1000, r.errs)
				}
			}
		}
	}
	report := render(cfg, results, built, strings.TrimSpace(string(redisVersion)))
	fmt.Println(report)
	if cfg.mdPath != "" {
		return cacheSection.Update(cfg.mdPath, report)
	}
	return nil
}

// load sets every key of the keyspace once, with the clients at once.
func load(s side, keys int, value []byte) error {
	c, err := s.client()
	if err != nil {
		return err
	}
	defer c.close()
	for i := range keys {
		if err := c.set(key(i), value); err != nil {
			return err
		}
	}
	return nil
}

func key(i int) string { return fmt.Sprintf("key:%08d", i) }

// measure runs workload w on s with the clients for the duration, each
// client's requests one at a time on its own connection.
func measure(s side, w string, cfg config, value []byte) (result, error) {
	clients := make([]*client, cfg.clients)
	for i := range clients {
		c, err := s.client()
		if err != nil {
			return result{}, err
		}
		defer c.close()
		clients[i] = c
	}
	cpu0, err := s.cpu()
	if err != nil {
		return result{}, err
	}
	var ops, errs atomic.Int64
	var firstErr atomic.Value
	var stop atomic.Bool
	var wg sync.WaitGroup
	start := time.Now()
	for i, c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), uint64(start.UnixNano())))
			for !stop.Load() {
				k := key(rng.IntN(cfg.keys))
				var err error
				if w == "set" {
					err = c.set(k, value)
				} else {
					err = c.get(k)
				}
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				ops.Add(1)
			}
		})
	}
	time.Sleep(cfg.duration)
	stop.Store(true)
	wg.Wait()
	r := result{workload: w, side: s.name, ops: ops.Load(), elapsed: time.Since(start), errs: errs.Load()}
	cpu1, err := s.cpu()
	if err != nil {
		return result{}, err
	}
	r.cpu = cpu1 - cpu0
	if r.errs > 0 && r.ops == 0 {
		return r, fmt.Errorf("every request failed: %v", firstErr.Load())
	}
	return r, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
