// Command aggcompare times Folio's aggregation call (documents/aggregate)
// against PostgreSQL's GROUP BY on the same data: count, and count with a
// sum, grouped by a field of 100 values, over every document and under a
// selective filter, with an index on the group field and on the filter's
// field on the PostgreSQL side (Folio indexes every field). `make
// agg-compare` runs it; issue 40's figures are the 1,000,000-document run:
//
//	make agg-compare AGG_COMPARE_FLAGS='-docs 1000000'
//
// It builds folio, starts it on a temporary data directory (the embedded
// engine) and a throwaway PostgreSQL cluster, loads the same documents
// into both (PostgreSQL then VACUUM ANALYZE, so that its index-only scans
// can be taken), checks that both sides answer each query alike, and then
// runs each query in rounds, alternating which side goes first, one query
// at a time (a query's latency, not a throughput). It prints the median
// latency of each side and their ratio, Folio/PostgreSQL, and the plan
// Folio's explain names.
//
//	go build -C bench -o ../aggcompare ./cmd/aggcompare
//	./aggcompare [-docs 100000] [-rounds 7] [-folio-bin PATH] [-pg-bin DIR]
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/foliodb/folio/bench/benchrun"
	"github.com/foliodb/folio/tests/pgtest"
)

type config struct {
	docs     int
	rounds   int
	folioBin string
	pgBin    string
}

func main() {
	var cfg config
	flag.IntVar(&cfg.docs, "docs", 100_000, "documents loaded on each side")
	flag.IntVar(&cfg.rounds, "rounds", 7, "rounds of each query on each side")
	flag.StringVar(&cfg.folioBin, "folio-bin", "", "a folio binary (default: built from the working tree)")
	flag.StringVar(&cfg.pgBin, "pg-bin", "", "directory of PostgreSQL's server programs (default: the newest /usr/lib/postgresql/*/bin)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "aggcompare:", err)
		os.Exit(1)
	}
}

// kinds is the group field's number of values; tags the filter field's,
// so that tag = 7 selects 1 document in 1,000.
const (
	kinds = 100
	tags  = 1000
)

// query is one aggregation, as each side asks it.
type query struct {
	name  string
	folio string // the body of documents/aggregate
	sql   string
}

var queries = []query{
	{"count by kind",
		`{"group_by":["kind"],"fields":{"n":{"$count":{}}}}`,
		`SELECT kind, count(*) FROM items GROUP BY kind ORDER BY kind`},
	{"count and sum by kind",
		`{"group_by":["kind"],"fields":{"n":{"$count":{}},"s":{"$sum":"price"}}}`,
		`SELECT kind, count(*), sum(price) FROM items GROUP BY kind ORDER BY kind`},
	{"count by kind, kind >= k050",
		`{"filter":{"kind":{"$gte":"k050"}},"group_by":["kind"],"fields":{"n":{"$count":{}}}}`,
		`SELECT kind, count(*) FROM items WHERE kind >= 'k050' GROUP BY kind ORDER BY kind`},
	{"count and sum by kind, tag = 7 (0.1%)",
		`{"filter":{"tag":7},"group_by":["kind"],"fields":{"n":{"$count":{}},"s":{"$sum":"price"}}}`,
		`SELECT kind, count(*), sum(price) FROM items WHERE tag = 7 GROUP BY kind ORDER BY kind`},
}

// doc is document i, the same on both sides.
func doc(i int) (kind string, tag int, price float64) {
	return fmt.Sprintf("k%03d", (i*7919)%kinds), (i * 31) % tags, float64(i%1000) / 4
}

func run(ctx context.Context, cfg config) error {
	tmp, err := os.MkdirTemp("", "aggcompare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin, built := cfg.folioBin, "the given binary"
	if bin == "" {
		bin = filepath.Join(tmp, "folio")
		if built, err = benchrun.BuildFolio(ctx, "", tmp, bin); err != nil {
			return err
		}
	}
	folio, err := benchrun.StartFolio(ctx, bin, "--data-dir", filepath.Join(tmp, "data"))
	if err != nil {
		return err
	}
	defer folio.Stop()
	cluster, err := pgtest.StartCluster(cfg.pgBin)
	if err != nil {
		return err
	}
	defer cluster.Stop()
	dsn, err := cluster.CreateDatabase(ctx, "aggbench")
	if err != nil {
		return err
	}
	pg, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer pg.Close(ctx)

	start := time.Now()
	if err := loadFolio(ctx, folio.URL, cfg.docs); err != nil {
		return fmt.Errorf("load folio: %w", err)
	}
	fmt.Fprintf(os.Stderr, "folio: %d documents loaded in %v\n", cfg.docs, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	if err := loadPostgres(ctx, pg, cfg.docs); err != nil {
		return fmt.Errorf("load postgres: %w", err)
	}
	fmt.Fprintf(os.Stderr, "postgres: %d rows loaded and analyzed in %v\n", cfg.docs, time.Since(start).Round(time.Millisecond))

	m := benchrun.DescribeMachine()
	fmt.Printf("aggcompare: %d documents, %d groups, %d rounds per query per side, alternating; folio from %s; %s, %d cores, load %s\n\n",
		cfg.docs, kinds, cfg.rounds, built, m.CPU, m.Cores, benchrun.LoadAverage())
	fmt.Println("| query | Folio (median) | PostgreSQL (median) | Folio/PostgreSQL | Folio's plan | PostgreSQL's plan |")
	fmt.Println("|---|---:|---:|---:|---|---|")
	for _, q := range queries {
		fres, err := aggregateFolio(ctx, folio.URL, q.folio)
		if err != nil {
			return fmt.Errorf("%s: folio: %w", q.name, err)
		}
		pres, err := aggregatePostgres(ctx, pg, q.sql)
		if err != nil {
			return fmt.Errorf("%s: postgres: %w", q.name, err)
		}
		if err := agree(fres, pres); err != nil {
			return fmt.Errorf("%s: the sides disagree: %w", q.name, err)
		}
		plan, err := explainFolio(ctx, folio.URL, q.folio)
		if err != nil {
			return fmt.Errorf("%s: explain: %w", q.name, err)
		}
		pgPlan, err := explainPostgres(ctx, pg, q.sql)
		if err != nil {
			return fmt.Errorf("%s: explain: %w", q.name, err)
		}
		var ft, pt []time.Duration
		for r := 0; r < cfg.rounds; r++ {
			sides := []func() error{
				func() error {
					d, err := timed(func() error { _, err := aggregateFolio(ctx, folio.URL, q.folio); return err })
					ft = append(ft, d)
					return err
				},
				func() error {
					d, err := timed(func() error { _, err := aggregatePostgres(ctx, pg, q.sql); return err })
					pt = append(pt, d)
					return err
				},
			}
			if r%2 == 1 {
				slices.Reverse(sides)
			}
			for _, side := range sides {
				if err := side(); err != nil {
					return fmt.Errorf("%s: %w", q.name, err)
				}
			}
		}
		f, p := median(ft), median(pt)
		fmt.Printf("| %s | %v | %v | %.2f | %s | %s |\n", q.name, f.Round(10*time.Microsecond), p.Round(10*time.Microsecond), float64(f)/float64(p), plan, pgPlan)
	}
	return nil
}

// explainPostgres names PostgreSQL's plan for sql by its nodes, outermost
// first, with the workers a parallel plan launched: PostgreSQL may scan
// with several processes where Folio folds in one goroutine.
func explainPostgres(ctx context.Context, pg *pgx.Conn, sql string) (string, error) {
	rows, err := pg.Query(ctx, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) "+sql)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var nodes []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return "", err
		}
		t := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "->"))
		switch {
		case strings.HasPrefix(t, "Workers Launched:"):
			nodes = append(nodes, strings.ToLower(t))
		case !strings.Contains(t, ":"):
			if i := strings.Index(t, " (actual"); i >= 0 {
				t = t[:i]
			}
			nodes = append(nodes, t)
		}
	}
	return strings.Join(nodes, " / "), rows.Err()
}

func timed(fn func() error) (time.Duration, error) {
	start := time.Now()
	err := fn()
	return time.Since(start), err
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

const base = "/v1/databases/aggbench/collections/items"

func post(ctx context.Context, url, body string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %d %s", url, resp.StatusCode, b)
	}
	return b, nil
}

// loadFolio creates the collection and inserts the documents, a thousand
// a request, four requests at a time.
func loadFolio(ctx context.Context, url string, n int) error {
	if _, err := post(ctx, url+"/v1/databases/aggbench/create", ""); err != nil {
		return err
	}
	schema := `{"schema":{"title":"items","primary_key":["id"],"properties":{"id":{"type":"integer"},"kind":{"type":"string"},"tag":{"type":"integer"},"price":{"type":"number"}}}}`
	if _, err := post(ctx, url+base+"/createOrUpdate", schema); err != nil {
		return err
	}
	const batch, workers = 1000, 4
	starts := make(chan int)
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func() {
			var err error
			for from := range starts {
				if err != nil {
					continue
				}
				var b strings.Builder
				b.WriteString(`{"documents":[`)
				for i := from; i < min(from+batch, n); i++ {
					if i > from {
						b.WriteByte(',')
					}
					kind, tag, price := doc(i)
					fmt.Fprintf(&b, `{"id":%d,"kind":%q,"tag":%d,"price":%g}`, i, kind, tag, price)
				}
				b.WriteString(`]}`)
				_, err = post(ctx, url+base+"/documents/insert", b.String())
			}
			errs <- err
		}()
	}
	for from := 0; from < n; from += batch {
		starts <- from
	}
	close(starts)
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

func loadPostgres(ctx context.Context, pg *pgx.Conn, n int) error {
	for _, stmt := range []string{
		`CREATE TABLE items (id bigint PRIMARY KEY, kind text NOT NULL, tag bigint NOT NULL, price double precision NOT NULL)`,
	} {
		if _, err := pg.Exec(ctx, stmt); err != nil {
			return err
		}
	}
	rows := make([][]any, n)
	for i := range rows {
		kind, tag, price := doc(i)
		rows[i] = []any{int64(i), kind, int64(tag), price}
	}
	if _, err := pg.CopyFrom(ctx, pgx.Identifier{"items"}, []string{"id", "kind", "tag", "price"}, pgx.CopyFromRows(rows)); err != nil {
		return err
	}
	for _, stmt := range []string{
		`CREATE INDEX items_kind ON items (kind)`,
		`CREATE INDEX items_tag ON items (tag)`,
		`VACUUM ANALYZE items`,
	} {
		if _, err := pg.Exec(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// group is one group's answer: its kind, count and sum (NaN: none asked).
type group struct {
	kind string
	n    int64
	sum  float64
}

func aggregateFolio(ctx context.Context, url, body string) ([]group, error) {
	b, err := post(ctx, url+base+"/documents/aggregate", body)
	if err != nil {
		return nil, err
	}
	var out []group
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var line struct {
			Result struct {
				Group struct {
					Kind string `json:"kind"`
				} `json:"group"`
				N int64    `json:"n"`
				S *float64 `json:"s"`
			} `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return nil, fmt.Errorf("%s: %w", sc.Bytes(), err)
		}
		g := group{kind: line.Result.Group.Kind, n: line.Result.N, sum: math.NaN()}
		if line.Result.S != nil {
			g.sum = *line.Result.S
		}
		out = append(out, g)
	}
	return out, sc.Err()
}

func explainFolio(ctx context.Context, url, body string) (string, error) {
	b, err := post(ctx, url+base+"/documents/aggregate", `{"explain":true,`+strings.TrimPrefix(body, "{"))
	if err != nil {
		return "", err
	}
	var ex struct {
		Explain struct {
			Plan string `json:"plan"`
		} `json:"explain"`
	}
	err = json.Unmarshal(b, &ex)
	return ex.Explain.Plan, err
}

func aggregatePostgres(ctx context.Context, pg *pgx.Conn, sql string) ([]group, error) {
	rows, err := pg.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []group
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, err
		}
		g := group{kind: vals[0].(string), n: vals[1].(int64), sum: math.NaN()}
		if len(vals) > 2 {
			g.sum = vals[2].(float64)
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// agree checks that both sides found the same groups and counts, and sums
// equal but for the order of float additions.
func agree(f, p []group) error {
	sort.Slice(f, func(i, j int) bool { return f[i].kind < f[j].kind })
	if len(f) != len(p) {
		return fmt.Errorf("%d groups against %d", len(f), len(p))
	}
	for i := range f {
		a, b := f[i], p[i]
		if a.kind != b.kind || a.n != b.n || math.IsNaN(a.sum) != math.IsNaN(b.sum) ||
			(!math.IsNaN(a.sum) && math.Abs(a.sum-b.sum) > 1e-9*math.Max(1, math.Abs(b.sum))) {
			return fmt.Errorf("group %d: folio %+v, postgres %+v", i, a, b)
		}
	}
	return nil
}
