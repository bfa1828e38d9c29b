package loadgen

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// draw returns how often each key came up in n draws.
func draw(t *testing.T, dist string, ks *Keyspace, seed uint64, n int) map[int64]int {
	t.Helper()
	c, err := NewKeyChooser(dist, ks)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 0))
	counts := map[int64]int{}
	for range n {
		k := c.Next(r)
		if k < 0 || k >= max(ks.Count(), 1) {
			t.Fatalf("%s drew key %d, outside [0, %d)", dist, k, ks.Count())
		}
		counts[k]++
	}
	return counts
}

// share returns the fraction of draws that went to the top fraction of keys
// by frequency.
func share(counts map[int64]int, keys int, top float64) float64 {
	freqs := make([]int, 0, len(counts))
	total := 0
	for _, c := range counts {
		freqs = append(freqs, c)
		total += c
	}
	slices.Sort(freqs)
	slices.Reverse(freqs)
	sum := 0
	for i := 0; i < int(top*float64(keys)) && i < len(freqs); i++ {
		sum += freqs[i]
	}
	return float64(sum) / float64(total)
}

func TestUniformSpreadsEvenly(t *testing.T) {
	const keys, n = 100, 200_000
	counts := draw(t, Uniform, NewKeyspace(keys), 1, n)
	if len(counts) != keys {
		t.Fatalf("%d of %d keys drawn", len(counts), keys)
	}
	// Chi-square with 99 degrees of freedom: above 150 happens by chance
	// less than once in a thousand runs.
	want := float64(n) / keys
	chi2 := 0.0
	for _, c := range counts {
		chi2 += (float64(c) - want) * (float64(c) - want) / want
	}
	if chi2 > 150 {
		t.Errorf("uniform draws: chi-square %.1f over %d keys, too uneven", chi2, keys)
	}
}

func TestZipfianIsSkewedAndScrambled(t *testing.T) {
	const keys, n = 1000, 200_000
	counts := draw(t, Zipfian, NewKeyspace(keys), 1, n)
	// With theta 0.99 over 1,000 keys the top 10% of ranks get about 69%
	// of the draws; hashing merges a few ranks, which only adds to it.
	if s := share(counts, keys, 0.10); s < 0.6 {
		t.Errorf("top 10%% of keys got %.0f%% of zipfian draws, want over 60%%", 100*s)
	}
	// The hottest key gets about 1/zeta(1000) ≈ 13%.
	hottest, most := int64(0), 0
	for k, c := range counts {
		if c > most {
			hottest, most = k, c
		}
	}
	if f := float64(most) / n; f < 0.10 || f > 0.20 {
		t.Errorf("the hottest key got %.1f%% of draws, want about 13%%", 100*f)
	}
	// Scrambled: the hot keys are spread over the keyspace rather than
	// bunched at its start, as YCSB's scrambled zipfian does.
	var hot []int64
	for k, c := range counts {
		if float64(c)/n > 0.005 {
			hot = append(hot, k)
		}
	}
	slices.Sort(hot)
	if len(hot) < 10 || hot[len(hot)-1]-hot[0] < keys/2 {
		t.Errorf("hot keys %v: want them spread over the keyspace", hot)
	}
	t.Logf("hottest key %d (%.1f%%), %d keys over 0.5%%", hottest, 100*float64(most)/n, len(hot))
}

func TestZipfRanks(t *testing.T) {
	z := newZipf(ZipfTheta)
	z.setItems(1000)
	r := rand.New(rand.NewPCG(7, 7))
	counts := make([]int, 1000)
	const n = 500_000
	for range n {
		counts[z.next(r)]++
	}
	// P(rank i) ∝ 1/(i+1)^theta: rank 0 is 2^theta times as likely as
	// rank 1 and 10^theta as rank 9.
	for _, tt := range []struct {
		a, b int
		want float64
	}{{0, 1, math.Pow(2, ZipfTheta)}, {0, 9, math.Pow(10, ZipfTheta)}, {1, 3, math.Pow(2, ZipfTheta)}} {
		got := float64(counts[tt.a]) / float64(counts[tt.b])
		if math.Abs(got-tt.want)/tt.want > 0.1 {
			t.Errorf("P(rank %d)/P(rank %d) = %.2f, want %.2f", tt.a, tt.b, got, tt.want)
		}
	}
	if p0, want := float64(counts[0])/n, 1/z.zetan; math.Abs(p0-want)/want > 0.05 {
		t.Errorf("P(rank 0) = %.4f, want 1/zeta = %.4f", p0, want)
	}
}

// Growing the item count must give the zeta a fresh computation gives.
func TestZipfGrowsIncrementally(t *testing.T) {
	grown := newZipf(ZipfTheta)
	for _, n := range []int64{1, 2, 10, 500, 501, 1000} {
		grown.setItems(n)
	}
	fresh := newZipf(ZipfTheta)
	fresh.setItems(1000)
	if math.Abs(grown.zetan-fresh.zetan) > 1e-9 || math.Abs(grown.eta-fresh.eta) > 1e-9 {
		t.Errorf("grown zeta %v eta %v, fresh zeta %v eta %v", grown.zetan, grown.eta, fresh.zetan, fresh.eta)
	}
	grown.setItems(10) // shrinking recomputes
	fresh.setItems(10)
	if math.Abs(grown.zetan-fresh.zetan) > 1e-9 {
		t.Errorf("after shrinking: zeta %v, want %v", grown.zetan, fresh.zetan)
	}
}

func TestLatestFavorsRecentKeys(t *testing.T) {
	const keys, n = 1000, 100_000
	ks := NewKeyspace(keys)
	counts := draw(t, Latest, ks, 1, n)
	recent := 0
	for k, c := range counts {
		if k >= keys-keys/10 {
			recent += c
		}
	}
	if f := float64(recent) / n; f < 0.6 {
		t.Errorf("the newest 10%% of keys got %.0f%% of draws, want over 60%%", 100*f)
	}
	if counts[keys-1] < counts[keys-2] || counts[keys-2] < counts[keys/2] {
		t.Errorf("newest key %d draws, next %d, middle %d: want newest first", counts[keys-1], counts[keys-2], counts[keys/2])
	}

	// New documents become the newest keys once acknowledged.
	for range 100 {
		ks.Ack(ks.Allocate())
	}
	counts = draw(t, Latest, ks, 2, n)
	if newest := int64(keys + 99); counts[newest] < counts[keys-1] {
		t.Errorf("after 100 inserts the newest key %d got %d draws, the old newest %d", newest, counts[newest], counts[keys-1])
	}
}

func TestChoosersAreDeterministic(t *testing.T) {
	for _, dist := range Distributions {
		seq := func(seed uint64) []int64 {
			c, err := NewKeyChooser(dist, NewKeyspace(10_000))
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(seed, 3))
			out := make([]int64, 1000)
			for i := range out {
				out[i] = c.Next(r)
			}
			return out
		}
		if !slices.Equal(seq(42), seq(42)) {
			t.Errorf("%s: the same seed gave different keys", dist)
		}
		if slices.Equal(seq(42), seq(43)) {
			t.Errorf("%s: different seeds gave the same keys", dist)
		}
	}
	if _, err := NewKeyChooser("pareto", NewKeyspace(1)); err == nil {
		t.Error("an unknown distribution was accepted")
	}
}

func TestKeyspaceWatermark(t *testing.T) {
	ks := NewKeyspace(10)
	a, b, c := ks.Allocate(), ks.Allocate(), ks.Allocate()
	if a != 10 || b != 11 || c != 12 {
		t.Fatalf("allocated %d %d %d, want 10 11 12", a, b, c)
	}
	steps := []struct {
		ack  int64
		want int64
	}{
		{c, 10}, // 10 and 11 still in flight
		{a, 11},
		{b, 13}, // the gap closes: 10 to 12 all present
	}
	for _, s := range steps {
		ks.Ack(s.ack)
		if got := ks.Count(); got != s.want {
			t.Errorf("after ack %d: count %d, want %d", s.ack, got, s.want)
		}
	}
	if ks.Allocated() != 13 || ks.Loaded() != 10 {
		t.Errorf("allocated %d loaded %d", ks.Allocated(), ks.Loaded())
	}
}
