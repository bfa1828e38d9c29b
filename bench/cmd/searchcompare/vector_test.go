package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func smallVectorConfig(t *testing.T) vectorConfig {
	return vectorConfig{dims: 16, queries: 30, clusters: 10, m: 8, efC: 64, efSearch: []int{32}, k: 10, runs: 1, seed: 1,
		tmp: t.TempDir(), progress: func(string, ...any) {}, filterFractions: []float64{0.01, 0.10}}
}

// TestFolioVectorSide runs Folio's side of a small workload: the exact
// answers are the index's, so recall is measured, and the filters' too.
func TestFolioVectorSide(t *testing.T) {
	vc := smallVectorConfig(t)
	d, err := generateVectors(vc, 3000)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.truth) != vc.queries || len(d.truth[0]) != vc.k {
		t.Fatalf("truth: %d queries, %d each", len(d.truth), len(d.truth[0]))
	}
	r := runFolioVectors(vc, d)
	if len(r.byEf) != 1 || r.byEf[0].recall < 0.95 || r.build <= 0 || len(r.byEf[0].lat) != vc.queries || r.memPerVec <= 0 {
		t.Fatalf("folio: %+v, build %v, %.0f B a vector", r.byEf, r.build, r.memPerVec)
	}
	for _, frac := range vc.filterFractions {
		if f := r.filtered[frac]; f.recall < 0.95 {
			t.Errorf("filter %g: recall %.3f", frac, f.recall)
		}
	}
}

// hnswlibVectorConfig builds bench/hnswcompare with g++ (skipped when
// g++ or hnswlib's header is missing, but under CI, which installs both).
func hnswlibVectorConfig(t *testing.T) vectorConfig {
	missing := func(what string) {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s: CI installs it (.ci/run)", what)
		}
		t.Skip(what)
	}
	if _, err := os.Stat("/usr/include/hnswlib/hnswlib.h"); err != nil {
		missing("no hnswlib header (apt-get install libhnswlib-dev)")
	}
	gxx, err := exec.LookPath("g++")
	if err != nil {
		missing("no g++")
	}
	vc := smallVectorConfig(t)
	vc.hnswcompare = filepath.Join(vc.tmp, "hnswcompare")
	if out, err := exec.Command(gxx, "-O2", "-std=c++17", "-o", vc.hnswcompare, "../../hnswcompare/hnswcompare.cpp").CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	return vc
}

// TestHnswlibVectorSide: hnswlib's answers are read back as the same keys
// the exact search finds.
func TestHnswlibVectorSide(t *testing.T) {
	vc := hnswlibVectorConfig(t)
	d, err := generateVectors(vc, 2000)
	if err != nil {
		t.Fatal(err)
	}
	dataPath, queryPath := filepath.Join(vc.tmp, "v"), filepath.Join(vc.tmp, "q")
	if err := writeVectorFile(dataPath, d.data); err != nil {
		t.Fatal(err)
	}
	if err := writeVectorFile(queryPath, d.queries); err != nil {
		t.Fatal(err)
	}
	r, err := runHnswlib(context.Background(), vc, d, dataPath, queryPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.byEf) != 1 || r.byEf[0].recall < 0.95 || len(r.byEf[0].lat) != vc.queries || r.build <= 0 {
		t.Errorf("hnswlib: %+v, build %v", r.byEf, r.build)
	}
}

// TestVectorEfSearchSweep: with several efSearch values each side reports
// each, in order, from one build, and on a sparse graph (M 4,
// efConstruction 16) where a narrow search misses, the widest finds
// more on both sides and a wider one never finds less; the markdown has
// a row per side, run and ef, and the summary by ef.
func TestVectorEfSearchSweep(t *testing.T) {
	vc := hnswlibVectorConfig(t)
	vc.m, vc.efC, vc.efSearch = 4, 16, []int{10, 40, 160}
	vc.sizes, vc.queries, vc.dims, vc.clusters = []int{4000}, 50, 32, 20
	d, err := generateVectors(vc, 4000)
	if err != nil {
		t.Fatal(err)
	}
	dataPath, queryPath := filepath.Join(vc.tmp, "v"), filepath.Join(vc.tmp, "q")
	if err := writeVectorFile(dataPath, d.data); err != nil {
		t.Fatal(err)
	}
	if err := writeVectorFile(queryPath, d.queries); err != nil {
		t.Fatal(err)
	}
	h, err := runHnswlib(context.Background(), vc, d, dataPath, queryPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []vectorRun{runFolioVectors(vc, d), h} {
		if len(r.byEf) != len(vc.efSearch) {
			t.Fatalf("%s: %d efSearch figures, want %d", r.side, len(r.byEf), len(vc.efSearch))
		}
		for i, e := range r.byEf {
			t.Logf("%s ef %d: recall %.3f", r.side, e.ef, e.recall)
			if e.ef != vc.efSearch[i] || len(e.lat) != vc.queries {
				t.Errorf("%s: figure %d is ef %d with %d latencies", r.side, i, e.ef, len(e.lat))
			}
			if i > 0 && e.recall < r.byEf[i-1].recall {
				t.Errorf("%s: recall %.3f at ef %d, below %.3f at ef %d", r.side, e.recall, e.ef, r.byEf[i-1].recall, r.byEf[i-1].ef)
			}
		}
		if first, last := r.byEf[0].recall, r.byEf[len(r.byEf)-1].recall; last < first+0.1 {
			t.Errorf("%s: recall %.3f at ef 10, %.3f at ef 160: the efSearch is not applied", r.side, first, last)
		}
	}
	md, err := runVectors(context.Background(), vc)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"efSearch = 10, 40, 160", "| 4000 | folio | 1 | 40 |", "| 4000 | hnswlib | 1 | 160 |",
		"By efSearch", "| 4000 | 160 | "} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestVectorFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"-corpora", "", "-vectors", "100000,1000000"}, true},
		{[]string{"-corpora", "", "-vectors", ""}, false},
		{[]string{"-vectors", "500"}, false},
		{[]string{"-vectors", "many"}, false},
	} {
		cfg, err := parseFlags(tc.args)
		if (err == nil) != tc.ok {
			t.Errorf("%q: %v", tc.args, err)
		}
		if tc.ok && (len(cfg.vectors.sizes) != 2 || cfg.vectors.sizes[1] != 1_000_000) {
			t.Errorf("%q: sizes %v", tc.args, cfg.vectors.sizes)
		}
	}
	for _, tc := range []struct {
		arg  string
		want []int // nil: refused
	}{
		{"", nil},
		{"64,128,256,512", []int{64, 128, 256, 512}},
		{" 100 ", []int{100}},
		{"64,,128", []int{64, 128}},
		{"9", nil}, // below k
		{"65537", nil},
		{"64,many", nil},
		{",", nil},
	} {
		args := []string{"-corpora", ""}
		if tc.arg != "" {
			args = append(args, "-vector-ef-search", tc.arg)
		}
		cfg, err := parseFlags(args)
		want := tc.want
		if tc.arg == "" {
			want = []int{64} // the default: one efSearch, as before
		}
		if want == nil {
			if err == nil {
				t.Errorf("-vector-ef-search %q: accepted as %v", tc.arg, cfg.vectors.efSearch)
			}
			continue
		}
		if err != nil || fmt.Sprint(cfg.vectors.efSearch) != fmt.Sprint(want) {
			t.Errorf("-vector-ef-search %q: %v, %v; want %v", tc.arg, cfg.vectors.efSearch, err, want)
		}
	}
}
