package loadgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
)

// Key distributions (--distribution).
const (
	Uniform = "uniform"
	Zipfian = "zipfian"
	Latest  = "latest"
)

// Distributions lists the key distributions a run may use.
var Distributions = []string{Uniform, Zipfian, Latest}

// Keyspace hands out the ids of new documents and knows which ids are safe
// to read. Documents 0 to Loaded-1 exist when a run starts; inserts take
// the ids after them. An id counts as present only once its insert and the
// inserts of every smaller id were answered, so that a reader never asks
// for a document whose insert is still in flight (YCSB's acknowledged
// counter). It is safe for concurrent use.
type Keyspace struct {
	loaded int64

	mu        sync.Mutex
	next      int64          // the next id to hand out
	watermark int64          // every id below it is present
	done      map[int64]bool // answered ids at or above the watermark
}

// NewKeyspace returns the keyspace of a collection holding ids 0 to
// loaded-1.
func NewKeyspace(loaded int64) *Keyspace {
	return &Keyspace{loaded: loaded, next: loaded, watermark: loaded, done: map[int64]bool{}}
}

// Loaded returns the number of documents the run started with.
func (k *Keyspace) Loaded() int64 { return k.loaded }

// Allocate returns the id for a new document.
func (k *Keyspace) Allocate() int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	id := k.next
	k.next++
	return id
}

// Ack records that the insert of id was answered, successfully or not: a
// failed insert must not hold readers back forever.
func (k *Keyspace) Ack(id int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.done[id] = true
	for k.done[k.watermark] {
		delete(k.done, k.watermark)
		k.watermark++
	}
}

// Count returns the number of ids that are safe to read: 0 to Count()-1.
func (k *Keyspace) Count() int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.watermark
}

// Allocated returns one past the largest id handed out.
func (k *Keyspace) Allocated() int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.next
}

// KeyChooser picks the key of the next operation. Each client has its own
// (they keep per-client state) and passes its own random source.
type KeyChooser interface {
	Next(r *rand.Rand) int64
}

// NewKeyChooser returns a chooser of the named distribution over ks.
//
//   - uniform: every present id equally likely.
//   - zipfian: YCSB's scrambled zipfian (theta 0.99) over the loaded ids: a
//     few keys are very hot, and the hot keys are spread over the keyspace
//     by a hash rather than bunched at its start.
//   - latest: zipfian by recency, the newest present id the most likely
//     (YCSB's workload D).
func NewKeyChooser(name string, ks *Keyspace) (KeyChooser, error) {
	switch name {
	case Uniform:
		return uniformChooser{ks}, nil
	case Zipfian:
		z := newZipf(ZipfTheta)
		z.setItems(max(ks.Loaded(), 1))
		return &scrambledZipfChooser{z: z, n: max(ks.Loaded(), 1)}, nil
	case Latest:
		return &latestChooser{ks: ks, z: newZipf(ZipfTheta)}, nil
	}
	return nil, fmt.Errorf("unknown key distribution %q (want one of %v)", name, Distributions)
}

type uniformChooser struct{ ks *Keyspace }

func (c uniformChooser) Next(r *rand.Rand) int64 { return r.Int64N(max(c.ks.Count(), 1)) }

type scrambledZipfChooser struct {
	z *zipf
	n int64
}

func (c *scrambledZipfChooser) Next(r *rand.Rand) int64 {
	return int64(fnv64(uint64(c.z.next(r))) % uint64(c.n))
}

type latestChooser struct {
	ks *Keyspace
	z  *zipf
}

func (c *latestChooser) Next(r *rand.Rand) int64 {
	n := max(c.ks.Count(), 1)
	c.z.setItems(n)
	return n - 1 - c.z.next(r)
}

// ZipfTheta is the skew of the zipfian distributions, YCSB's default.
const ZipfTheta = 0.99

// zipf draws ranks 0..n-1 with P(rank i) proportional to 1/(i+1)^theta, by
// the method of Gray et al., "Quickly Generating Billion-Record Synthetic
// Databases" (SIGMOD 1994), as YCSB does. The item count may grow between
// draws; zeta is then extended rather than recomputed.
type zipf struct {
	theta, alpha, zeta2 float64
	items               int64
	zetan, eta          float64
}

func newZipf(theta float64) *zipf {
	return &zipf{theta: theta, alpha: 1 / (1 - theta), zeta2: 1 + math.Pow(0.5, theta)}
}

func (z *zipf) setItems(n int64) {
	if n == z.items {
		return
	}
	if n < z.items {
		z.items, z.zetan = 0, 0
	}
	for i := z.items + 1; i <= n; i++ {
		z.zetan += 1 / math.Pow(float64(i), z.theta)
	}
	z.items = n
	z.eta = (1 - math.Pow(2/float64(n), 1-z.theta)) / (1 - z.zeta2/z.zetan)
}

func (z *zipf) next(r *rand.Rand) int64 {
	u := r.Float64()
	uz := u * z.zetan
	switch {
	case uz < 1 || z.items == 1:
		return 0
	case uz < z.zeta2:
		return 1
	}
	rank := int64(float64(z.items) * math.Pow(z.eta*u-z.eta+1, z.alpha))
	return min(rank, z.items-1)
}

// fnv64 is the 64-bit FNV-1a hash of v's eight bytes, which YCSB uses to
// scramble zipfian ranks over the keyspace.
func fnv64(v uint64) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < 8; i++ {
		h ^= v & 0xff
		h *= 0x100000001b3
		v >>= 8
	}
	return h
}
