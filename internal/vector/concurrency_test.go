package vector

import (
	"sync"
	"testing"
)

// TestConcurrentSearchAndWrites runs searches beside puts, replaces and
// deletes (under -race it checks the locking); every hit is of a key
// that had a vector at some point, and no search fails.
func TestConcurrentSearchAndWrites(t *testing.T) {
	data, qs := clustered(3000, 20, 16, 10, 8)
	x := build(Cosine, Options{M: 8, EfConstruction: 50, Seed: 8}, data[:1000])
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1000 + w; i < 3000; i += 2 {
				if err := x.Put(key(i), data[i]); err != nil {
					t.Error(err)
					return
				}
				x.Delete(key(i - 1000))
				x.Put(key(i-500), data[i-1000])
			}
		}()
	}
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := NewSet(key(2500), key(10), key(1200))
			for i := range 300 {
				hits, err := x.Search(qs[i%len(qs)], 10, nil)
				if err != nil || len(hits) == 0 {
					t.Errorf("search: %v, %d hits", err, len(hits))
					return
				}
				x.Search(qs[i%len(qs)], 10, f)
			}
		}()
	}
	wg.Wait()
	st := x.Stats()
	if st.Live != x.Len() {
		t.Errorf("stats %+v, Len %d", st, x.Len())
	}
}
