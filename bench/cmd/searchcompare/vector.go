package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/foliodb/folio/bench/benchrun"
	"github.com/foliodb/folio/internal/vector"
)

// The vector workloads (issue 37): Folio's HNSW index (internal/vector)
// against hnswlib, a C++ program (bench/hnswcompare, built by make
// search-compare) run in a process of its own, on the same generated
// vectors written to a file once, with the same M, efConstruction and
// efSearch, both single-threaded. For each size: recall@10 against exact
// search, query p50 and p99, build rate, memory per vector; and Folio's
// recall and p50 with filters keeping 1% and 10% of the keys (hnswlib
// 0.6.2, Debian's, has no filtered search). Given several efSearch
// values, each side builds once and runs the queries at each in turn:
// recall against query time on the same graph, which is what finding the
// efSearch that reaches a recall needs (a build at 1,000,000 vectors
// takes tens of minutes).

type vectorConfig struct {
	sizes           []int
	dims, queries   int
	clusters        int
	m, efC, k       int
	efSearch        []int // the first is the index's own, the filters' too
	runs            int
	hnswcompare     string
	seed            uint64
	progress        func(string, ...any)
	tmp             string
	filterFractions []float64
}

// vectorRun is one side's figures for one size.
type vectorRun struct {
	side        string
	build       time.Duration
	memPerVec   float64
	byEf        []vectorAtEf // in vectorConfig.efSearch's order
	filtered    map[float64]vectorFiltered
	statsPerVec float64
}

// vectorAtEf is the unfiltered queries' figures at one efSearch.
type vectorAtEf struct {
	ef     int
	recall float64
	lat    latencies
}

type vectorFiltered struct {
	recall float64
	lat    latencies
}

// vectorData is a generated workload: n clustered vectors, queries
// drawn alike, each query's exact 10 nearest (unfiltered and under each
// filter) by key index.
type vectorData struct {
	data, queries [][]float32
	truth         [][]int
	filters       map[float64]vector.Set
	filterTruth   map[float64][][]int
}

// clusteredVectors draws n vectors around clusters centres uniform in
// [-1, 1]^dims, at a Gaussian offset of 0.35 per component: the shape of
// embeddings, many near neighbours close together.
func clusteredVectors(n, dims, clusters int, r *rand.Rand, centres [][]float32) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		c := centres[r.IntN(clusters)]
		v := make([]float32, dims)
		for j := range v {
			v[j] = c[j] + float32(r.NormFloat64()*0.35)
		}
		out[i] = v
	}
	return out
}

func vectorKey(i int) string { return fmt.Sprintf("doc%08d", i) }

func writeVectorFile(path string, vs [][]float32) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(len(vs)))
	w.Write(b[:])
	binary.LittleEndian.PutUint32(b[:], uint32(len(vs[0])))
	w.Write(b[:])
	for _, v := range vs {
		for _, x := range v {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
			w.Write(b[:])
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func runVectors(ctx context.Context, vc vectorConfig) (string, error) {
	var md strings.Builder
	m := benchrun.DescribeMachine()
	fmt.Fprintf(&md, "Machine: %s, %d cores, %s, %s, %s; %s. Load average before: %s.\n\n", m.CPU, m.Cores, m.Memory, m.OS, m.GoVersion,
		m.Date.Format("2006-01-02"), benchrun.LoadAverage())
	fmt.Fprintf(&md, "%d dimensions, %d clusters, Euclidean, k = %d, M = %d, efConstruction = %d, efSearch = %s, %d queries, both sides single-threaded; %d runs of each side, alternated (Folio, hnswlib, Folio, ...), each run a fresh build",
		vc.dims, vc.clusters, vc.k, vc.m, vc.efC, joinInts(vc.efSearch, ", "), vc.queries, vc.runs)
	if len(vc.efSearch) > 1 {
		fmt.Fprintf(&md, ", queried at each efSearch in turn (the filters at %d)", vc.efSearch[0])
	}
	md.WriteString(".\n\n")
	md.WriteString("| Vectors | Side | Run | efSearch | Recall@10 | Query p50 | Query p99 | Build (vectors/s) | Memory per vector |\n|---|---|---|---|---|---|---|---|---|\n")
	var filteredRows strings.Builder
	var runs []vectorSummaryRun
	for _, n := range vc.sizes {
		vc.progress("vectors: generating %d and %d queries, and their exact neighbours", n, vc.queries)
		d, err := generateVectors(vc, n)
		if err != nil {
			return "", err
		}
		dataPath, queryPath := filepath.Join(vc.tmp, "vectors.f32"), filepath.Join(vc.tmp, "queries.f32")
		if err := writeVectorFile(dataPath, d.data); err != nil {
			return "", err
		}
		if err := writeVectorFile(queryPath, d.queries); err != nil {
			return "", err
		}
		for run := 1; run <= vc.runs; run++ {
			for _, side := range []string{"folio", "hnswlib"} {
				if err := ctx.Err(); err != nil {
					return "", err
				}
				vc.progress("vectors: %d, run %d: %s", n, run, side)
				var r vectorRun
				if side == "folio" {
					r = runFolioVectors(vc, d)
				} else if r, err = runHnswlib(ctx, vc, d, dataPath, queryPath); err != nil {
					return "", err
				}
				mem := fmt.Sprintf("%.0f B", r.memPerVec)
				if r.statsPerVec > 0 {
					mem += fmt.Sprintf(" (Stats: %.0f B)", r.statsPerVec)
				}
				for _, e := range r.byEf {
					row := fmt.Sprintf("| %d | %s | %d | %d | %.3f | %s | %s | %.0f | %s |", n, side, run, e.ef, e.recall,
						fmtMicros(e.lat.percentile(50)), fmtMicros(e.lat.percentile(99)), float64(n)/r.build.Seconds(), mem)
					vc.progress("%s", row)
					md.WriteString(row + "\n")
				}
				runs = append(runs, vectorSummaryRun{n, r})
				for _, frac := range vc.filterFractions {
					if f, ok := r.filtered[frac]; ok {
						fmt.Fprintf(&filteredRows, "| %d | %g%% (%d keys) | %d | %.3f | %s | %s |\n", n, frac*100, len(d.filters[frac]), run, f.recall,
							fmtMicros(f.lat.percentile(50)), fmtMicros(f.lat.percentile(99)))
					}
				}
			}
		}
		os.Remove(dataPath)
		os.Remove(queryPath)
	}
	md.WriteString("\nFolio with a filter (a set of keys drawn at random; recall against the exact 10 nearest allowed keys):\n\n")
	md.WriteString("| Vectors | Filter keeps | Run | Recall@10 | Query p50 | Query p99 |\n|---|---|---|---|---|---|\n")
	md.WriteString(filteredRows.String())
	if len(vc.efSearch) > 1 {
		md.WriteString("\nBy efSearch (recall: mean of the runs; p50: median of the runs' p50s):\n\n")
		md.WriteString(summarizeByEf(runs, vc.efSearch))
	}
	fmt.Fprintf(&md, "\nLoad average after: %s.\n", benchrun.LoadAverage())
	return md.String(), nil
}

// vectorSummaryRun is one side's run at one size, for summarizeByEf.
type vectorSummaryRun struct {
	n int
	r vectorRun
}

// summarizeByEf tabulates, per size and efSearch, each side's recall
// and p50 and the ratio of the p50s: where the recall aim is reached and
// what it costs against hnswlib.
func summarizeByEf(runs []vectorSummaryRun, efs []int) string {
	type key struct {
		n, ef int
		side  string
	}
	recalls, p50s := map[key][]float64{}, map[key]latencies{}
	var sizes []int
	for _, sr := range runs {
		if len(sizes) == 0 || sizes[len(sizes)-1] != sr.n {
			sizes = append(sizes, sr.n)
		}
		for _, e := range sr.r.byEf {
			k := key{sr.n, e.ef, sr.r.side}
			recalls[k] = append(recalls[k], e.recall)
			p50s[k] = append(p50s[k], e.lat.percentile(50))
		}
	}
	mean := func(xs []float64) float64 {
		var s float64
		for _, x := range xs {
			s += x
		}
		return s / float64(len(xs))
	}
	var b strings.Builder
	b.WriteString("| Vectors | efSearch | Recall@10 Folio | Recall@10 hnswlib | p50 Folio | p50 hnswlib | p50 ratio |\n|---|---|---|---|---|---|---|\n")
	for _, n := range sizes {
		for _, ef := range efs {
			f, h := key{n, ef, "folio"}, key{n, ef, "hnswlib"}
			if len(recalls[f]) == 0 || len(recalls[h]) == 0 {
				continue
			}
			fp, hp := p50s[f].percentile(50), p50s[h].percentile(50)
			fmt.Fprintf(&b, "| %d | %d | %.3f | %.3f | %s | %s | %.2f× |\n", n, ef, mean(recalls[f]), mean(recalls[h]),
				fmtMicros(fp), fmtMicros(hp), float64(fp)/float64(hp))
		}
	}
	return b.String()
}

func joinInts(xs []int, sep string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, sep)
}

func fmtMicros(d time.Duration) string {
	return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
}

func generateVectors(vc vectorConfig, n int) (*vectorData, error) {
	r := rand.New(rand.NewPCG(vc.seed, uint64(n)))
	centres := make([][]float32, vc.clusters)
	for i := range centres {
		centres[i] = make([]float32, vc.dims)
		for j := range centres[i] {
			centres[i][j] = r.Float32()*2 - 1
		}
	}
	d := &vectorData{
		data:        clusteredVectors(n, vc.dims, vc.clusters, r, centres),
		queries:     clusteredVectors(vc.queries, vc.dims, vc.clusters, r, centres),
		filters:     map[float64]vector.Set{},
		filterTruth: map[float64][][]int{},
	}
	for _, frac := range vc.filterFractions {
		d.filters[frac] = vector.NewSet()
	}
	for i := range n {
		p := r.Float64()
		for _, frac := range vc.filterFractions {
			if p < frac {
				d.filters[frac][vectorKey(i)] = struct{}{}
			}
		}
	}
	// The exact answers, by an exhaustive search of an index (its scan
	// compares every vector); the graph it builds is not used.
	x := vector.New(vc.dims, vector.Euclidean, vector.Options{M: 2, EfConstruction: 1})
	for i, v := range d.data {
		if err := x.Put(vectorKey(i), v); err != nil {
			return nil, err
		}
	}
	exact := func(q []float32, f vector.Filter) []int {
		hits, err := x.SearchExact(q, vc.k, f)
		if err != nil {
			panic(err)
		}
		out := make([]int, len(hits))
		for i, h := range hits {
			out[i], _ = strconv.Atoi(strings.TrimPrefix(h.Key, "doc"))
		}
		return out
	}
	for _, q := range d.queries {
		d.truth = append(d.truth, exact(q, nil))
		for _, frac := range vc.filterFractions {
			d.filterTruth[frac] = append(d.filterTruth[frac], exact(q, d.filters[frac]))
		}
	}
	return d, nil
}

func recallOf(got, want []int) float64 {
	in := make(map[int]bool, len(want))
	for _, w := range want {
		in[w] = true
	}
	n := 0
	for _, g := range got {
		if in[g] {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func runFolioVectors(vc vectorConfig, d *vectorData) vectorRun {
	r := vectorRun{side: "folio", filtered: map[float64]vectorFiltered{}}
	keys := make([]string, len(d.data))
	for i := range keys {
		keys[i] = vectorKey(i) // made before the measure: the caller holds its keys already
	}
	before := heapInUse()
	start := time.Now()
	x := vector.New(vc.dims, vector.Euclidean, vector.Options{M: vc.m, EfConstruction: vc.efC, EfSearch: vc.efSearch[0], Seed: 1})
	for i, v := range d.data {
		if err := x.Put(keys[i], v); err != nil {
			panic(err)
		}
	}
	r.build = time.Since(start)
	// The keys' bytes are shared with keys, which the index holds too.
	r.memPerVec = float64(heapInUse()-before) / float64(len(d.data))
	r.statsPerVec = float64(x.Stats().Bytes) / float64(len(d.data))
	search := func(ef int, f vector.Filter, truth [][]int) (float64, latencies) {
		var sum float64
		lat := make(latencies, 0, len(d.queries))
		for i, q := range d.queries {
			t0 := time.Now()
			hits, err := x.SearchEf(q, vc.k, ef, f)
			lat = append(lat, time.Since(t0))
			if err != nil {
				panic(err)
			}
			got := make([]int, len(hits))
			for j, h := range hits {
				got[j], _ = strconv.Atoi(strings.TrimPrefix(h.Key, "doc"))
			}
			sum += recallOf(got, truth[i])
		}
		return sum / float64(len(d.queries)), lat
	}
	for _, ef := range vc.efSearch {
		rec, lat := search(ef, nil, d.truth)
		r.byEf = append(r.byEf, vectorAtEf{ef, rec, lat})
	}
	for _, frac := range vc.filterFractions {
		rec, lat := search(0, d.filters[frac], d.filterTruth[frac])
		r.filtered[frac] = vectorFiltered{rec, lat}
	}
	runtime.KeepAlive(keys)
	return r
}

func runHnswlib(ctx context.Context, vc vectorConfig, d *vectorData, dataPath, queryPath string) (vectorRun, error) {
	r := vectorRun{side: "hnswlib"}
	resPath := filepath.Join(vc.tmp, "hnswlib-results")
	cmd := exec.CommandContext(ctx, vc.hnswcompare, dataPath, queryPath, resPath,
		strconv.Itoa(vc.m), strconv.Itoa(vc.efC), joinInts(vc.efSearch, ","), strconv.Itoa(vc.k))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return r, fmt.Errorf("hnswcompare: %w", err)
	}
	fields := strings.Fields(string(out))
	nq := len(d.queries)
	if len(fields) != 2+len(vc.efSearch)*nq {
		return r, fmt.Errorf("hnswcompare: %d figures, want %d", len(fields), 2+len(vc.efSearch)*nq)
	}
	secs, _ := strconv.ParseFloat(fields[0], 64)
	mem, _ := strconv.ParseFloat(fields[1], 64)
	r.build = time.Duration(secs * float64(time.Second))
	r.memPerVec = mem / float64(len(d.data))
	f, err := os.Open(resPath)
	if err != nil {
		return r, err
	}
	defer f.Close()
	ids := make([]uint32, len(vc.efSearch)*nq*vc.k)
	if err := binary.Read(bufio.NewReader(f), binary.LittleEndian, ids); err != nil {
		return r, fmt.Errorf("hnswcompare results: %w", err)
	}
	// Both come ef by ef, each ef's queries in order.
	for e, ef := range vc.efSearch {
		at := vectorAtEf{ef: ef}
		for _, f := range fields[2+e*nq : 2+(e+1)*nq] {
			us, _ := strconv.ParseFloat(f, 64)
			at.lat = append(at.lat, time.Duration(us*float64(time.Microsecond)))
		}
		var sum float64
		for i := range nq {
			got := make([]int, vc.k)
			for j := range got {
				got[j] = int(ids[(e*nq+i)*vc.k+j])
			}
			sum += recallOf(got, d.truth[i])
		}
		at.recall = sum / float64(nq)
		r.byEf = append(r.byEf, at)
	}
	return r, nil
}

// vectors runs the vector workloads and writes their markdown where
// -vectors-md says (docs/benchmarks.md's "Issue 37: vector search" holds
// a run, with what it shows).
func vectors(ctx context.Context, cfg config) error {
	tmp, err := os.MkdirTemp("", "folio-vectorcompare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	vc := cfg.vectors
	vc.tmp = tmp
	vc.progress = cfg.logf
	md, err := runVectors(ctx, vc)
	if err != nil {
		return err
	}
	if cfg.vectorsMD == "" {
		fmt.Print(md)
		return nil
	}
	return os.WriteFile(cfg.vectorsMD, []byte(md), 0o644)
}
