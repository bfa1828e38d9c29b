package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func smallVectorConfig(t *testing.T) vectorConfig {
	return vectorConfig{dims: 16, queries: 30, clusters: 10, m: 8, efC: 64, efS: 32, k: 10, runs: 1, seed: 1,
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
	if r.recall < 0.95 || r.build <= 0 || len(r.lat) != vc.queries || r.memPerVec <= 0 {
		t.Errorf("folio: recall %.3f, build %v, %d latencies, %.0f B a vector", r.recall, r.build, len(r.lat), r.memPerVec)
	}
	for _, frac := range vc.filterFractions {
		if f := r.filtered[frac]; f.recall < 0.95 {
			t.Errorf("filter %g: recall %.3f", frac, f.recall)
		}
	}
}

// TestHnswlibVectorSide builds bench/hnswcompare with g++ (skipped when
// g++ or hnswlib's header is missing, but under CI, which installs both)
// and checks its answers are read back as the same keys the exact search
// finds.
func TestHnswlibVectorSide(t *testing.T) {
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
	if r.recall < 0.95 || len(r.lat) != vc.queries || r.build <= 0 {
		t.Errorf("hnswlib: recall %.3f, %d latencies, build %v", r.recall, len(r.lat), r.build)
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
}
