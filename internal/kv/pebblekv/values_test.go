package pebblekv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
)

// setValue commits key = value (value nil: clears it) and returns the
// commit's position.
func setValue(t *testing.T, s *Store, key string, value []byte) kv.Position {
	t.Helper()
	pos, err := kv.Run(bg, s, func(tx kv.Tx) error {
		if value == nil {
			return tx.Clear([]byte(key))
		}
		return tx.Set([]byte(key), value)
	})
	if err != nil {
		t.Fatal(err)
	}
	return pos
}

// readIn reads key in tx: its value, or "<none>".
func readIn(t *testing.T, tx kv.Tx, key string) string {
	t.Helper()
	v, err := tx.Get(bg, []byte(key))
	if errors.Is(err, kv.ErrNotFound) {
		return "<none>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(v)
}

// readNew reads key in a transaction of its own.
func readNew(t *testing.T, s *Store, key string) string {
	t.Helper()
	tx, err := s.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	return readIn(t, tx, key)
}

// A read served by the value cache sees what Pebble would show at its
// version: the newest value for a new transaction, the older one for a
// transaction that began before the write, none after a clear or a
// cleared range, and a counter's sum after each Add.
func TestValueCacheServesEachReadItsVersion(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	setValue(t, s, "k", []byte("v1"))
	setValue(t, s, "other", []byte("x"))
	if got := readNew(t, s, "k"); got != "v1" {
		t.Fatalf("read %q, want v1", got)
	}
	hits := s.values.hits.Load()
	if got := readNew(t, s, "k"); got != "v1" {
		t.Fatalf("read again %q, want v1", got)
	}
	if s.values.hits.Load() != hits+1 {
		t.Fatalf("the second read of an unchanged key was not served by the cache (hits %d, then %d)", hits, s.values.hits.Load())
	}

	old, err := s.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Rollback()
	readIn(t, old, "other") // fixes old's version before the write below
	setValue(t, s, "k", []byte("v2"))
	steps := []struct {
		tx   kv.Tx // nil: a new transaction
		want string
	}{
		{old, "v1"}, {nil, "v2"}, {nil, "v2"}, {old, "v1"}, {nil, "v2"},
	}
	for i, st := range steps {
		got := ""
		if st.tx == nil {
			got = readNew(t, s, "k")
		} else {
			got = readIn(t, st.tx, "k")
		}
		if got != st.want {
			t.Fatalf("step %d: read %q, want %q", i, got, st.want)
		}
	}

	beforeClear, err := s.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer beforeClear.Rollback()
	readIn(t, beforeClear, "other")
	setValue(t, s, "k", nil)
	if got := readNew(t, s, "k"); got != "<none>" {
		t.Fatalf("after a clear: %q", got)
	}
	if got := readIn(t, beforeClear, "k"); got != "v2" {
		t.Fatalf("a transaction begun before the clear reads %q, want v2", got)
	}

	setValue(t, s, "k", []byte("v3"))
	if got := readNew(t, s, "k"); got != "v3" {
		t.Fatalf("after setting it again: %q", got)
	}
	readNew(t, s, "k")
	if _, err := kv.Run(bg, s, func(tx kv.Tx) error {
		return tx.ClearRange(kv.Range{Begin: []byte("j"), End: []byte("l")})
	}); err != nil {
		t.Fatal(err)
	}
	if got := readNew(t, s, "k"); got != "<none>" {
		t.Fatalf("after a cleared range: %q", got)
	}

	for i := 1; i <= 3; i++ {
		if _, err := kv.Run(bg, s, func(tx kv.Tx) error { return tx.Add([]byte("n"), 5) }); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if got := kv.DecodeCounter([]byte(readNew(t, s, "n"))); got != int64(5*i) {
				t.Fatalf("counter after %d adds: %d", i, got)
			}
		}
	}
}

// Under writers that set, clear and clear ranges of a few keys while
// readers read them, every read finds what the newest commit at or below
// its transaction's version left, with a cache small enough to evict all
// the time. Reads are checked once every write's position is known.
func TestValueCacheUnderConcurrentWrites(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir(), CacheSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const keys = 300
	key := func(i int) string { return fmt.Sprintf("key%03d", i) }
	// Values of a few KB, so that the cache's 1 MiB holds a fraction.
	value := func(token string) []byte { return []byte(token + strings.Repeat(".", 3000)) }
	tokenOf := func(v string) string {
		if v == "<none>" {
			return v
		}
		return strings.TrimRight(v, ".")
	}

	type write struct {
		pos   kv.Position
		token string // "<none>": cleared
	}
	type read struct {
		key     int
		version kv.Position
		token   string
	}
	var (
		mu      sync.Mutex
		history = make([][]write, keys)
		reads   []read
	)
	stop := time.Now().Add(2 * time.Second)
	if testing.Short() {
		stop = time.Now().Add(500 * time.Millisecond)
	}
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for n := 0; time.Now().Before(stop); n++ {
				token := fmt.Sprintf("w%d-%d", w, n)
				var touched []write
				var idx []int
				pos, err := kv.Run(bg, s, func(tx kv.Tx) error {
					touched, idx = touched[:0], idx[:0]
					switch op := rng.IntN(20); {
					case op == 0: // a range of ten keys
						first := rng.IntN(keys - 10)
						for i := first; i < first+10; i++ {
							idx = append(idx, i)
							touched = append(touched, write{token: "<none>"})
						}
						return tx.ClearRange(kv.Range{Begin: []byte(key(first)), End: []byte(key(first + 10))})
					case op < 4:
						i := rng.IntN(keys)
						idx, touched = append(idx, i), append(touched, write{token: "<none>"})
						return tx.Clear([]byte(key(i)))
					default:
						for range 1 + rng.IntN(3) {
							i := rng.IntN(keys)
							idx, touched = append(idx, i), append(touched, write{token: token})
							if err := tx.Set([]byte(key(i)), value(token)); err != nil {
								return err
							}
						}
						return nil
					}
				})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for j, i := range idx {
					touched[j].pos = pos
					history[i] = append(history[i], touched[j])
				}
				mu.Unlock()
			}
		}()
	}
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 2))
			var mine []read
			for time.Now().Before(stop) {
				tx, err := s.Begin(bg)
				if err != nil {
					t.Error(err)
					return
				}
				// A few reads in one transaction, some of the same key,
				// and now and then a pause so that writes pass it by.
				for range 1 + rng.IntN(4) {
					i := rng.IntN(keys)
					if rng.IntN(4) == 0 && len(mine) > 0 {
						i = mine[len(mine)-1].key
					}
					v, err := tx.Get(bg, []byte(key(i)))
					got := "<none>"
					if err == nil {
						got = tokenOf(string(v))
					} else if !errors.Is(err, kv.ErrNotFound) {
						t.Error(err)
						tx.Rollback()
						return
					}
					mine = append(mine, read{key: i, version: tx.ReadVersion(), token: got})
					if rng.IntN(10) == 0 {
						time.Sleep(time.Millisecond)
					}
				}
				tx.Rollback()
			}
			mu.Lock()
			reads = append(reads, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i := range history {
		sort.Slice(history[i], func(a, b int) bool { return history[i][a].pos < history[i][b].pos })
	}
	for _, r := range reads {
		want := "<none>"
		for _, w := range history[r.key] {
			if w.pos > r.version {
				break
			}
			want = w.token
		}
		if r.token != want {
			t.Fatalf("%s read at version %d found %q, want %q (writes: %v)", key(r.key), r.version, r.token, want, history[r.key])
		}
	}
	hits, misses := s.values.hits.Load(), s.values.misses.Load()
	t.Logf("%d reads checked; cache hits %d, misses %d, %d bytes held", len(reads), hits, misses, s.values.size())
	if hits == 0 {
		t.Fatal("no read was served by the cache: the test checked Pebble alone")
	}
	if limit := int64(1<<20) + valueCacheShards*(entryOverhead+4096); s.values.size() > limit {
		t.Fatalf("the cache holds %d bytes, above its budget of 1 MiB", s.values.size())
	}
}
