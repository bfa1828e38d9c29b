package pebblekv

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"testing"

	"github.com/foliodb/folio/internal/kv"
)

// ReadLog returns at most limit entries, defaultLogLimit when limit is 0
// or less, and says how far it read: the last entry returned when it
// stopped at the limit, the newest position otherwise.
func TestReadLogLimit(t *testing.T) {
	const writers, each = 16, 63 // more entries than defaultLogLimit
	const total = writers * each
	s := newStore(t)
	defer s.Close()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := commitKey(s, fmt.Sprintf("w%02d/%02d", w, i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	tests := []struct {
		after kv.Position
		limit int
		want  int // entries
	}{
		{0, 0, defaultLogLimit},
		{0, -1, defaultLogLimit},
		{0, 1, 1},
		{0, 2, 2},
		{10, 2, 2},
		{0, total - 1, total - 1},
		{0, total, total},
		{0, total + 1, total},
		{total - 5, 0, 5},
		{total - 5, 5, 5},
		{total, 0, 0},
	}
	for _, tc := range tests {
		entries, upTo, err := s.ReadLog(bg, tc.after, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != tc.want {
			t.Errorf("ReadLog(%d, %d): %d entries, want %d", tc.after, tc.limit, len(entries), tc.want)
			continue
		}
		for i, e := range entries {
			if e.Pos != tc.after+kv.Position(i)+1 {
				t.Fatalf("ReadLog(%d, %d): entry %d at position %d", tc.after, tc.limit, i, e.Pos)
			}
		}
		wantUpTo := kv.Position(total)
		if tc.want > 0 && tc.want < total-int(tc.after) {
			wantUpTo = entries[len(entries)-1].Pos
		}
		if upTo != wantUpTo {
			t.Errorf("ReadLog(%d, %d) read up to %d, want %d", tc.after, tc.limit, upTo, wantUpTo)
		}
	}
}

// LogBytes of (p-1, p] is the size of the entry at p alone, and those
// sizes add up to the whole log's.
func TestLogBytesPerEntry(t *testing.T) {
	s := newStore(t)
	defer s.Close()
	sizes := []int{1, 100, 5000, 30}
	for _, size := range sizes {
		if _, err := kv.Run(bg, s, func(tx kv.Tx) error { return tx.AppendLog(make([]byte, size)) }); err != nil {
			t.Fatal(err)
		}
	}
	var sum int64
	for i, size := range sizes {
		p := kv.Position(i + 1)
		n, err := s.LogBytes(bg, p-1, p)
		if err != nil {
			t.Fatal(err)
		}
		if n < int64(size) || n > int64(size)+64 {
			t.Errorf("LogBytes(%d, %d) = %d, want the entry's %d bytes and its key", p-1, p, n, size)
		}
		sum += n
	}
	if all, err := s.LogBytes(bg, 0, kv.Position(len(sizes))); err != nil || all != sum {
		t.Errorf("LogBytes of the whole log: %d, %v; the entries add up to %d", all, err, sum)
	}
}

// TrimLog(below) drops the entries below below and keeps the rest, up to
// the newest; a point past the newest trims everything, and entries
// committed later are kept. The trim survives a reopen.
func TestTrimLogBounds(t *testing.T) {
	const last = 5 // entries at 1 to 5
	tests := []struct {
		below kv.Position
		kept  kv.Position // the first entry kept: last+1 when none
	}{
		{0, 1},
		{1, 1},
		{2, 2},
		{last, last},
		{last + 1, last + 1},
		{last + 2, last + 1},
		{100, last + 1},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint("below ", tc.below), func(t *testing.T) {
			dir := t.TempDir()
			s, err := open(dir)
			if err != nil {
				t.Fatal(err)
			}
			for i := range last {
				if _, err := commitKey(s, fmt.Sprint("k", i)); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.TrimLog(bg, tc.below); err != nil {
				t.Fatal(err)
			}
			check := func(when string, newest kv.Position) {
				t.Helper()
				entries, _, err := s.ReadLog(bg, tc.kept-1, 0)
				if err != nil || len(entries) != int(newest-tc.kept+1) || len(entries) > 0 && entries[0].Pos != tc.kept {
					t.Fatalf("%s: ReadLog(%d): %d entries (%v), %v; want those from %d to %d", when, tc.kept-1, len(entries), entries, err, tc.kept, newest)
				}
				if tc.kept > 1 {
					if _, _, err := s.ReadLog(bg, tc.kept-2, 0); !errors.Is(err, kv.ErrLogTrimmed) {
						t.Fatalf("%s: ReadLog(%d), below the trim: %v, want ErrLogTrimmed", when, tc.kept-2, err)
					}
				}
			}
			check("after the trim", last)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if s, err = open(dir); err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			check("after a reopen", last)
			if _, err := commitKey(s, "later"); err != nil {
				t.Fatal(err)
			}
			check("after a later commit", last+1)
		})
	}
}

// LogBytes answers recent ranges from the sizes the sequencer noted, and
// older ones (before the store opened, or past what it keeps) by reading
// the entries: both give what reading every entry gives, also across a
// trim.
func TestLogBytesFromMemory(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	appendN := func(s *Store, n int) {
		for i := 0; i < n; i++ {
			if _, err := kv.Run(bg, s, func(tx kv.Tx) error { return tx.AppendLog(make([]byte, 1+(i*37)%200)) }); err != nil {
				t.Fatal(err)
			}
		}
	}
	// read sums the entries by reading them, as LogBytes did before.
	read := func(s *Store, after, upTo kv.Position) int64 {
		var n int64
		entries, _, err := s.ReadLog(bg, after, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Pos <= upTo {
				n += int64(len(logKey(e.Pos)) + len(kv.EncodeLogRecords(e.Records)))
			}
		}
		return n
	}
	check := func(s *Store, after, upTo kv.Position, fromMemory bool) {
		t.Helper()
		if _, ok := s.logSizes.between(after, upTo); ok != fromMemory {
			t.Errorf("(%d, %d] known in memory: %v, want %v", after, upTo, ok, fromMemory)
		}
		got, err := s.LogBytes(bg, after, upTo)
		if err != nil {
			t.Fatal(err)
		}
		if want := read(s, max(after+1, s.trimmed)-1, upTo); got != want {
			t.Errorf("LogBytes(%d, %d) = %d, reading the entries gives %d", after, upTo, got, want)
		}
	}
	appendN(s, 10) // entries 1 to 10
	s.Close()
	if s, err = Open(Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.logSizes.max = 8
	appendN(s, 20) // entries 11 to 30; memory keeps the newest 4 to 8
	check(s, 0, 30, false)
	check(s, 10, 30, false)
	check(s, 25, 30, true)
	check(s, 26, 29, true)
	check(s, 30, 30, true)
	for after := kv.Position(0); after <= 30; after++ {
		for upTo := after; upTo <= 30; upTo++ {
			_, known := s.logSizes.between(after, upTo)
			check(s, after, upTo, known)
		}
	}
	if err := s.TrimLog(bg, 28); err != nil {
		t.Fatal(err)
	}
	check(s, 25, 30, true)
}

// ReadLog answers recent positions from the entries the sequencer keeps in
// memory, and older ones (before the store opened, or past what it keeps)
// from Pebble: both give the same entries and position for every start and
// limit, commits that logged nothing and a trim included.
func TestReadLogFromMemory(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	commitN := func(s *Store, n int) {
		for i := 0; i < n; i++ {
			if _, err := kv.Run(bg, s, func(tx kv.Tx) error {
				if i%7 == 3 { // a commit that logs nothing
					return tx.Set([]byte("k"), []byte("v"))
				}
				return tx.AppendLog(bytes.Repeat([]byte{byte(i)}, 1+(i*37)%300))
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	commitN(s, 10)
	s.Close()
	if s, err = Open(Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.logTail = newLogTail(s.current.version, 1000) // a few entries; one of 1,000+ bytes drops them all
	commitN(s, 40)
	if _, err := kv.Run(bg, s, func(tx kv.Tx) error { return tx.AppendLog(make([]byte, 1500)) }); err != nil {
		t.Fatal(err)
	}
	commitN(s, 15)
	last := s.current.version
	readAll := func() map[[2]int]string {
		out := map[[2]int]string{}
		for after := kv.Position(0); after <= last; after++ {
			for _, limit := range []int{0, 1, 2, 5} {
				entries, upTo, err := s.ReadLog(bg, after, limit)
				if errors.Is(err, kv.ErrLogTrimmed) {
					out[[2]int{int(after), limit}] = "trimmed"
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				// Positions, and a digest of the records, so that a
				// failure names the entries without printing them.
				var pos []kv.Position
				h := fnv.New64a()
				for _, e := range entries {
					pos = append(pos, e.Pos)
					fmt.Fprint(h, e.Records)
				}
				out[[2]int{int(after), limit}] = fmt.Sprintf("entries %v (records %x), up to %d", pos, h.Sum64(), upTo)
			}
		}
		return out
	}
	check := func(when string) {
		t.Helper()
		tail := s.logTail
		fromMemory := 0
		for after := kv.Position(0); after <= last; after++ {
			if _, ok := tail.read(nil, after, last, 0); ok {
				fromMemory++
			}
		}
		if fromMemory == 0 || fromMemory > int(last)/2 {
			t.Fatalf("%s: %d of %d starts read from memory: the test does not compare the two ways", when, fromMemory, last)
		}
		got := readAll()
		s.logTail = newLogTail(last, 1000) // everything from Pebble
		want := readAll()
		s.logTail = tail
		for k, w := range want {
			if got[k] != w {
				t.Fatalf("%s: ReadLog(%d, limit %d) from memory: %s; from Pebble: %s", when, k[0], k[1], got[k], w)
			}
		}
	}
	check("before a trim")
	if err := s.TrimLog(bg, last-3); err != nil {
		t.Fatal(err)
	}
	check("after a trim")
}

// The tail gives no entry past the published position it is asked up to
// (the sequencer adds an entry before its commit is published), stays
// within its bytes with many small entries, and starts after an entry too
// big to keep.
func TestLogTailBounds(t *testing.T) {
	l := newLogTail(0, 400)
	for pos := kv.Position(1); pos <= 5; pos++ {
		l.add(pos, []byte{byte(pos)})
	}
	got, ok := l.read(nil, 0, 3, 0)
	if !ok || len(got) != 3 || got[2].pos != 3 {
		t.Fatalf("read up to 3: %v, %v", got, ok)
	}
	for pos := kv.Position(6); pos <= 100; pos++ {
		l.add(pos, []byte{1})
		if l.bytes > l.max {
			t.Fatalf("after %d entries of one byte the tail holds %d bytes, above %d", pos, l.bytes, l.max)
		}
	}
	if _, ok := l.read(nil, 0, 100, 0); ok {
		t.Fatal("the tail answered from position 0 after dropping its oldest entries")
	}
	l.add(101, make([]byte, 500))
	if _, ok := l.read(nil, 100, 101, 0); ok {
		t.Fatal("the tail answered for an entry too big to keep")
	}
	l.add(102, []byte{2})
	if got, ok := l.read(nil, 101, 102, 0); !ok || len(got) != 1 || got[0].pos != 102 {
		t.Fatalf("after the big entry: %v, %v", got, ok)
	}
}
