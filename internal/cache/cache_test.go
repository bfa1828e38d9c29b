package cache

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/backendtest"
)

func TestNext(t *testing.T) {
	const now = 1_000_000
	present := &entry{value: []byte("old")}
	for _, c := range []struct {
		name    string
		old     *entry
		o       SetOptions
		ttl     time.Duration
		expires int64
		code    apierror.Code
	}{
		{name: "plain", o: SetOptions{}},
		{name: "plain over a key", old: present},
		{name: "nx, absent", o: SetOptions{NX: true}},
		{name: "nx, present", old: present, o: SetOptions{NX: true}, code: apierror.AlreadyExists},
		{name: "xx, present", old: present, o: SetOptions{XX: true}},
		{name: "xx, absent", o: SetOptions{XX: true}, code: apierror.NotFound},
		{name: "nx and xx: xx wins, present", old: present, o: SetOptions{NX: true, XX: true}},
		{name: "nx and xx: xx wins, absent", o: SetOptions{NX: true, XX: true}, code: apierror.NotFound},
		{name: "ex", o: SetOptions{EX: 2}, expires: now + 2000},
		{name: "px", o: SetOptions{PX: 5}, expires: now + 5},
		{name: "ex wins over px", o: SetOptions{EX: 1, PX: 5}, expires: now + 1000},
		{name: "the cache's ttl", ttl: 3 * time.Second, expires: now + 3000},
		{name: "px over the cache's ttl", o: SetOptions{PX: 7}, ttl: time.Second, expires: now + 7},
		{name: "ex past the bound", o: SetOptions{EX: 1 << 62}, code: apierror.InvalidArgument},
		{name: "px past the bound", o: SetOptions{PX: 1 << 62}, code: apierror.InvalidArgument},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := next(c.old, []byte("v"), now, c.o, c.ttl)
			if c.code != "" {
				if se, ok := apierror.From(err); !ok || se.Code != c.code {
					t.Fatalf("err %v, want %s", err, c.code)
				}
				return
			}
			if err != nil || string(e.value) != "v" || e.expiresAt != c.expires {
				t.Fatalf("got %+v %v, want expiry %d", e, err, c.expires)
			}
		})
	}
}

func TestEntryEncoding(t *testing.T) {
	for _, e := range []entry{{}, {expiresAt: 1, value: []byte("x")}, {expiresAt: 1 << 50, value: make([]byte, 100)}} {
		got, err := decodeEntry(e.encode())
		if err != nil || got.expiresAt != e.expiresAt || string(got.value) != string(e.value) {
			t.Errorf("%+v came back %+v %v", e, got, err)
		}
	}
	if _, err := decodeEntry([]byte{1, 2}); err == nil {
		t.Error("a short entry decoded")
	}
}

// clock is a test's clock, moved by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time      { return c.t }
func (c *clock) add(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock               { return &clock{t: time.UnixMilli(1_700_000_000_000)} }
func run(s kv.Store) func(func(kv.Tx) error) error {
	return func(fn func(kv.Tx) error) error { _, err := kv.Run(context.Background(), s, fn); return err }
}

// setup makes a durable and a volatile cache in database 7.
func setup(t *testing.T) (*Service, *clock, kv.Store, map[string]*Cache) {
	t.Helper()
	clk := newClock()
	s := New(clk.now)
	store := backendtest.OpenPebble(t)
	caches := map[string]*Cache{}
	for name, volatile := range map[string]bool{"durable": false, "volatile": true} {
		err := run(store)(func(tx kv.Tx) error {
			if err := s.Create(context.Background(), tx, 7, name, Options{Volatile: volatile}); err != nil {
				return err
			}
			c, err := s.Lookup(context.Background(), tx, 7, name)
			caches[name] = c
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return s, clk, store, caches
}

func isCode(err error, code apierror.Code) bool {
	se, ok := apierror.From(err)
	return ok && se.Code == code
}

// An entry is there up to its expiry time, and gone one millisecond past
// it, for every call that reads it; the sweep then reclaims it.
func TestExpiryAtItsEdge(t *testing.T) {
	ctx := context.Background()
	s, clk, store, caches := setup(t)
	for name, c := range caches {
		t.Run(name, func(t *testing.T) {
			do := run(store)
			if err := do(func(tx kv.Tx) error { return s.Set(ctx, tx, c, "k", []byte("v"), SetOptions{PX: 50}) }); err != nil {
				t.Fatal(err)
			}
			get := func() ([]byte, time.Duration, error) {
				var v []byte
				var left time.Duration
				err := do(func(tx kv.Tx) (err error) { v, left, err = s.Get(ctx, tx, c, "k"); return err })
				return v, left, err
			}
			clk.add(50 * time.Millisecond)
			if v, left, err := get(); err != nil || string(v) != "v" || left != time.Millisecond {
				t.Fatalf("at its expiry time: %q, %v left, %v; want it there with 1ms left (0 is no expiry)", v, left, err)
			}
			clk.add(time.Millisecond)
			if _, _, err := get(); !isCode(err, apierror.NotFound) {
				t.Fatalf("past its expiry time: %v", err)
			}
			var n int64
			if err := do(func(tx kv.Tx) (err error) { n, err = s.Del(ctx, tx, c, "k"); return err }); err != nil || n != 0 {
				t.Errorf("del of an expired key: %d %v", n, err)
			}
			var found bool
			if err := do(func(tx kv.Tx) (err error) { _, found, err = s.GetSet(ctx, tx, c, "k", []byte("w")); return err }); err != nil || found {
				t.Errorf("getset of an expired key found it: %v", err)
			}
			// nx sets over an expired key; xx does not.
			if err := do(func(tx kv.Tx) error { return s.Set(ctx, tx, c, "e", []byte("1"), SetOptions{PX: 1}) }); err != nil {
				t.Fatal(err)
			}
			clk.add(2 * time.Millisecond)
			if err := do(func(tx kv.Tx) error { return s.Set(ctx, tx, c, "e", []byte("2"), SetOptions{XX: true}) }); !isCode(err, apierror.NotFound) {
				t.Errorf("xx over an expired key: %v", err)
			}
			if err := do(func(tx kv.Tx) error { return s.Set(ctx, tx, c, "e", []byte("2"), SetOptions{NX: true}) }); err != nil {
				t.Errorf("nx over an expired key: %v", err)
			}
			if got := allKeys(t, s, store, c, ""); fmt.Sprint(got) != "[e k]" {
				t.Errorf("keys: %v", got)
			}
		})
	}
}

func allKeys(t *testing.T, s *Service, store kv.Store, c *Cache, pattern string) []string {
	t.Helper()
	var out []string
	err := s.Keys(context.Background(), run(store), c, KeysRequest{Pattern: pattern, Count: 3}, func(p KeysPage) error {
		out = append(out, p.Keys...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// storedCount counts the keys of a range.
func storedCount(t *testing.T, store kv.Store, r kv.Range) int {
	t.Helper()
	n := 0
	err := run(store)(func(tx kv.Tx) error {
		n = 0
		it := tx.Scan(context.Background(), r, kv.ScanOptions{})
		defer it.Close()
		for it.Next() {
			n++
		}
		return it.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The sweep clears expired entries and their index entries, keeps live
// ones, and keeps an entry set again with a later expiry (or none) whose
// older index entry comes due.
func TestSweep(t *testing.T) {
	ctx := context.Background()
	s, clk, store, caches := setup(t)
	do := run(store)
	for _, c := range caches {
		for i := range 2500 {
			px := uint64(10)
			if i%2 == 0 {
				px = 1_000_000
			}
			if err := do(func(tx kv.Tx) error {
				return s.Set(ctx, tx, c, fmt.Sprintf("k%04d", i), []byte("v"), SetOptions{PX: px})
			}); err != nil {
				t.Fatal(err)
			}
		}
		// Set again: one without expiry, one with a later one.
		if err := do(func(tx kv.Tx) error { return s.Set(ctx, tx, c, "k0001", []byte("kept"), SetOptions{}) }); err != nil {
			t.Fatal(err)
		}
		if err := do(func(tx kv.Tx) error { return s.Set(ctx, tx, c, "k0003", []byte("kept"), SetOptions{EX: 100}) }); err != nil {
			t.Fatal(err)
		}
	}
	durable := caches["durable"]
	if n := storedCount(t, store, keyspace.CacheEntries(durable.DB, durable.Name)); n != 2500 {
		t.Fatalf("%d entries stored", n)
	}
	clk.add(time.Second)
	removed, err := s.Sweep(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	// 1248 expired in each cache (1250 odd keys but the two set again).
	if removed != 2*1248 {
		t.Errorf("the sweep removed %d entries, want %d", removed, 2*1248)
	}
	if n := storedCount(t, store, keyspace.CacheEntries(durable.DB, durable.Name)); n != 1252 {
		t.Errorf("%d entries stored after the sweep, want 1252", n)
	}
	// Left in the index: the live even keys' and k0003's later one.
	if n := storedCount(t, store, keyspace.CacheExpiredBy(1<<62)); n != 1251 {
		t.Errorf("%d expiry index entries after the sweep, want 1251", n)
	}
	for _, c := range caches {
		for _, k := range []string{"k0001", "k0003"} {
			if err := do(func(tx kv.Tx) error { _, _, err := s.Get(ctx, tx, c, k); return err }); err != nil {
				t.Errorf("%s %s after the sweep: %v", c.Name, k, err)
			}
		}
	}
	if got := len(allKeys(t, s, store, durable, "k000*")); got != 7 {
		t.Errorf("k000*: %d keys, want 7", got)
	}
}

// A volatile cache's entries go from memory when the cache is deleted, on
// the node that deleted it at once, on another at its next sweep.
func TestVolatileDeleted(t *testing.T) {
	ctx := context.Background()
	s, _, store, caches := setup(t)
	other := New(s.now) // another node on the same store
	c := caches["volatile"]
	for _, svc := range []*Service{s, other} {
		if err := svc.Set(ctx, nil, c, "k", []byte("v"), SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := run(store)(func(tx kv.Tx) error { return s.Delete(ctx, tx, 7, "volatile") }); err != nil {
		t.Fatal(err)
	}
	if len(s.memory.ids()) != 0 {
		t.Error("the deleting node still holds the cache's entries")
	}
	if _, err := other.Sweep(ctx, store); err != nil {
		t.Fatal(err)
	}
	if len(other.memory.ids()) != 0 {
		t.Error("another node holds the cache's entries after its sweep")
	}
	if err := run(store)(func(tx kv.Tx) error { _, err := s.Lookup(ctx, tx, 7, "volatile"); return err }); !isCode(err, apierror.NotFound) {
		t.Errorf("lookup of the deleted cache: %v", err)
	}
}

// Keys pages: each page at most its count, the cursor resumes where a
// page ended, and the last page's cursor is 0.
func TestKeysPages(t *testing.T) {
	ctx := context.Background()
	s, _, store, caches := setup(t)
	for name, c := range caches {
		t.Run(name, func(t *testing.T) {
			for i := range 25 {
				if err := run(store)(func(tx kv.Tx) error { return s.Set(ctx, tx, c, fmt.Sprintf("k%02d", i), nil, SetOptions{}) }); err != nil {
					t.Fatal(err)
				}
			}
			var pages []KeysPage
			err := s.Keys(ctx, run(store), c, KeysRequest{Count: 10}, func(p KeysPage) error {
				pages = append(pages, KeysPage{Keys: append([]string(nil), p.Keys...), Cursor: p.Cursor})
				return nil
			})
			if err != nil || len(pages) != 3 || len(pages[0].Keys) != 10 || pages[0].Cursor != 10 || pages[1].Cursor != 20 || pages[2].Cursor != 0 || len(pages[2].Keys) != 5 {
				t.Fatalf("pages %v %v", pages, err)
			}
			var resumed []string
			err = s.Keys(ctx, run(store), c, KeysRequest{Count: 10, Cursor: 20}, func(p KeysPage) error {
				resumed = append(resumed, p.Keys...)
				return nil
			})
			if err != nil || fmt.Sprint(resumed) != fmt.Sprint(pages[2].Keys) {
				t.Errorf("resumed at 20: %v %v, want %v", resumed, err, pages[2].Keys)
			}
			if got := allKeys(t, s, store, c, "k1?"); len(got) != 10 {
				t.Errorf("k1?: %v", got)
			}
		})
	}
}

func TestBounds(t *testing.T) {
	ctx := context.Background()
	s, _, store, caches := setup(t)
	c := caches["durable"]
	for _, k := range []struct {
		key   string
		value []byte
	}{{"", nil}, {string(make([]byte, MaxKeyBytes+1)), nil}, {"k", make([]byte, MaxValueBytes+1)}} {
		err := run(store)(func(tx kv.Tx) error { return s.Set(ctx, tx, c, k.key, k.value, SetOptions{}) })
		if !isCode(err, apierror.InvalidArgument) {
			t.Errorf("key of %d bytes, value of %d: %v", len(k.key), len(k.value), err)
		}
	}
	if err := run(store)(func(tx kv.Tx) error { return s.Set(ctx, tx, c, "k", make([]byte, MaxValueBytes), SetOptions{}) }); err != nil {
		t.Errorf("a value at the bound: %v", err)
	}
	if err := run(store)(func(tx kv.Tx) error { return s.Create(ctx, tx, 7, "durable", Options{}) }); !isCode(err, apierror.AlreadyExists) {
		t.Errorf("create again: %v", err)
	}
	if err := run(store)(func(tx kv.Tx) error { return s.Delete(ctx, tx, 7, "none") }); !errors.Is(err, err) || !isCode(err, apierror.NotFound) {
		t.Errorf("delete of a cache absent: %v", err)
	}
}
