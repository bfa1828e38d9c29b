package pebblekv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
)

// allocated sums the disk blocks the files under dir hold, as du counts.
func allocated(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && !fi.IsDir() {
			n += st.Blocks * 512
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A fresh store with a few commits in it takes a few megabytes, not the
// 71 MB that a 64 MiB memtable's preallocated WAL took: the WAL's
// preallocation is bounded whatever the memtable size. (Pebble reserves
// a WAL file's space at its second write.)
func TestFreshStoreIsSmall(t *testing.T) {
	for _, size := range []int64{0, 64 << 20} {
		dir := t.TempDir()
		s, err := Open(Options{Dir: dir, MemTableSize: size})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for i := range 3 {
			if _, err := kv.Run(ctx, s, func(tx kv.Tx) error { return tx.Set([]byte{byte(i)}, []byte("v")) }); err != nil {
				t.Fatal(err)
			}
		}
		if n := allocated(t, dir); n > 5<<20 {
			t.Errorf("MemTableSize %d: a fresh store takes %d bytes on disk, want under 5 MiB", size, n)
		}
		s.Close()
	}
}

// zstd keeps text in fewer bytes than snappy; both read back what was
// written; an unknown compression is refused.
func TestCompression(t *testing.T) {
	ctx := context.Background()
	// Text of a small alphabet, as JSON documents are: snappy finds few
	// repeats in it, an entropy coder compresses it.
	value := make([]byte, 1000)
	sizes := map[string]int64{}
	for _, c := range []string{CompressSnappy, CompressZstd} {
		dir := t.TempDir()
		// Small memtables, and every batch's keys spread over the whole
		// range: the flushed tables overlap, so the compaction rewrites
		// them into the bottom level rather than moving them there.
		s, err := Open(Options{Dir: dir, Compression: c, MemTableSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		seed := uint32(1)
		for batch := 0; batch < 20; batch++ {
			_, err := kv.Run(ctx, s, func(tx kv.Tx) error {
				for i := 0; i < 200; i++ {
					for j := range value {
						seed = seed*1664525 + 1013904223
						value[j] = 'a' + byte(seed>>24)%26
					}
					if err := tx.Set([]byte{byte(i), byte(batch)}, value); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := s.db.Compact(ctx, []byte{0}, []byte{0xff}, true); err != nil {
			t.Fatal(err)
		}
		total := s.db.Metrics().Total()
		sizes[c] = total.TablesSize
		if _, err := kv.Run(ctx, s, func(tx kv.Tx) error {
			v, err := tx.Get(ctx, []byte{199, 19})
			if err == nil && !bytes.Equal(v, value) {
				t.Errorf("%s: read back %.20q…, want %.20q…", c, v, value)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	t.Logf("4,000,000 bytes of text in tables: snappy %d, zstd %d", sizes[CompressSnappy], sizes[CompressZstd])
	if sizes[CompressZstd] > sizes[CompressSnappy]*3/4 {
		t.Errorf("zstd took %d bytes, snappy %d: want zstd well under snappy", sizes[CompressZstd], sizes[CompressSnappy])
	}
	if _, err := Open(Options{Dir: t.TempDir(), Compression: "lz4"}); err == nil {
		t.Error("an unknown compression was accepted")
	}
}

// A memtable size given is Pebble's: 16 MiB of writes fill the default
// 8 MiB of memtables, which are then flushed, but not 32 MiB. (Pebble
// starts with small memtables and rotates them as they fill: the flush,
// not the rotation, tells.)
func TestMemTableSizeGiven(t *testing.T) {
	ctx := context.Background()
	value := make([]byte, 1<<20)
	for _, tc := range []struct {
		size    int64
		flushed bool
	}{{0, true}, {32 << 20, false}} {
		s, err := Open(Options{Dir: t.TempDir(), MemTableSize: tc.size})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 16 {
			if _, err := kv.Run(ctx, s, func(tx kv.Tx) error { return tx.Set([]byte{byte(i)}, value) }); err != nil {
				t.Fatal(err)
			}
		}
		// The flush runs in the background: wait for it where it is due.
		deadline := time.Now().Add(10 * time.Second)
		for tc.flushed && s.db.Metrics().Flush.Count == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := s.db.Metrics().Flush.Count; (n > 0) != tc.flushed {
			t.Errorf("MemTableSize %d: after 16 MiB of writes, %d flushes; want a flush: %v", tc.size, n, tc.flushed)
		}
		s.Close()
	}
}

// The block cache is on by default, and with a size given: a block read
// twice is found in it the second time.
func TestBlockCache(t *testing.T) {
	ctx := context.Background()
	for _, size := range []int64{0, 8 << 20} {
		s, err := Open(Options{Dir: t.TempDir(), CacheSize: size})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Run(ctx, s, func(tx kv.Tx) error { return tx.Set([]byte("k"), []byte("v")) }); err != nil {
			t.Fatal(err)
		}
		if err := s.db.Flush(); err != nil { // into a table, read through the cache
			t.Fatal(err)
		}
		for range 2 { // a scan: a Get's second read would come from the value cache
			if _, err := kv.Run(ctx, s, func(tx kv.Tx) error {
				it := tx.Scan(ctx, kv.Range{Begin: []byte("k"), End: []byte("l")}, kv.ScanOptions{})
				defer it.Close()
				if !it.Next() {
					return fmt.Errorf("scan found nothing: %v", it.Err())
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		if st := s.Stats(); st.BlockCacheHits == 0 {
			t.Errorf("CacheSize %d: no block cache hit in two reads of a key (%d misses)", size, st.BlockCacheMisses)
		}
		s.Close()
	}
}

// The two caches share CacheSize: the value cache a quarter, Pebble's
// block cache the rest.
func TestCacheSplit(t *testing.T) {
	for _, size := range []int64{0, 3, 64 << 20, 1<<30 + 1} {
		block, value := cacheSplit(size)
		if block+value != size || value != size/valueCacheFraction {
			t.Errorf("cacheSplit(%d) = %d block, %d value; want %d and %d", size, block, value, size-size/valueCacheFraction, size/valueCacheFraction)
		}
	}
}
