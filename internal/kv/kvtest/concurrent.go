package kvtest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
)

func testConcurrentAdds(t *testing.T, s kv.Store) {
	const workers, each = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				tx, err := s.Begin(bg)
				if err != nil {
					errs <- err
					return
				}
				// Each transaction also writes a key of its own, as a
				// document insert would next to its collection's size.
				tx.Set([]byte(fmt.Sprintf("doc/%d/%d", w, i)), []byte("x"))
				tx.Add([]byte("size"), int64(w+1))
				tx.Add([]byte("count"), 1)
				if _, err := tx.Commit(bg); err != nil {
					errs <- fmt.Errorf("commit of adds (must never conflict): %w", err)
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	r := begin(t, s)
	wantSize := int64(0)
	for w := 0; w < workers; w++ {
		wantSize += int64(w+1) * each
	}
	if got := counter(t, r, "size"); got != wantSize {
		t.Fatalf("size = %d, want %d", got, wantSize)
	}
	if got := counter(t, r, "count"); got != workers*each {
		t.Fatalf("count = %d, want %d", got, workers*each)
	}
}

func testAddConflictsWithReaders(t *testing.T, s kv.Store) {
	tx := begin(t, s)
	counter(t, tx, "n")
	must(t, tx.Set([]byte("w"), []byte("1")))
	adder := begin(t, s)
	must(t, adder.Add([]byte("n"), 1))
	commit(t, adder)
	wantConflict(t, tx)
}

// logOf reads the whole log.
func logOf(t *testing.T, s kv.Store) []kv.LogEntry {
	t.Helper()
	var all []kv.LogEntry
	after := kv.Position(0)
	for {
		entries, upTo, err := s.ReadLog(bg, after, 7)
		must(t, err)
		all = append(all, entries...)
		if upTo == after {
			return all
		}
		after = upTo
	}
}

func testLogOrder(t *testing.T, s kv.Store) {
	// Concurrent writers append records; the log must list them in commit
	// position order, one entry per committed transaction, and none for
	// transactions that failed.
	const workers, each = 6, 30
	var mu sync.Mutex
	committed := map[kv.Position]string{}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				id := fmt.Sprintf("w%d-%d", w, i)
				tx, err := s.Begin(bg)
				if err != nil {
					t.Error(err)
					return
				}
				// Everyone reads and writes one hot key: many conflict.
				tx.Get(bg, []byte("hot"))
				tx.Set([]byte("hot"), []byte(id))
				tx.AppendLog([]byte(id))
				tx.AppendLog([]byte(id + "/second"))
				pos, err := tx.Commit(bg)
				if err == nil {
					mu.Lock()
					committed[pos] = id
					mu.Unlock()
				} else if !kv.IsRetryable(err) {
					t.Error(err)
				}
			}
		}(w)
	}
	wg.Wait()
	// A rolled-back transaction leaves nothing.
	tx := begin(t, s)
	must(t, tx.AppendLog([]byte("rolled back")))
	tx.Rollback()

	entries := logOf(t, s)
	if len(entries) != len(committed) {
		t.Fatalf("log has %d entries, %d transactions committed", len(entries), len(committed))
	}
	for i, e := range entries {
		if i > 0 && e.Pos <= entries[i-1].Pos {
			t.Fatalf("log out of order: %d after %d", e.Pos, entries[i-1].Pos)
		}
		id, ok := committed[e.Pos]
		if !ok || len(e.Records) != 2 || string(e.Records[0]) != id || string(e.Records[1]) != id+"/second" {
			t.Fatalf("entry at %d = %q, committed there: %q", e.Pos, e.Records, id)
		}
	}
	// The hot key holds the last committed writer's value.
	last := entries[len(entries)-1]
	if got := mustGet(t, begin(t, s), "hot"); got != string(last.Records[0]) {
		t.Fatalf("hot = %q, last log entry %q", got, last.Records[0])
	}
	if last, err := s.LastPosition(bg); err != nil || last < entries[len(entries)-1].Pos {
		t.Fatalf("LastPosition = %d, %v", last, err)
	}
}

func testLogWait(t *testing.T, s kv.Store) {
	start, err := s.LastPosition(bg)
	must(t, err)
	ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
	defer cancel()
	if err := s.WaitLog(ctx, start); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait with nothing new: %v", err)
	}
	got := make(chan []kv.LogEntry, 1)
	go func() {
		if err := s.WaitLog(bg, start); err != nil {
			t.Error(err)
		}
		entries, _, err := s.ReadLog(bg, start, 0)
		if err != nil {
			t.Error(err)
		}
		got <- entries
	}()
	time.Sleep(10 * time.Millisecond)
	tx := begin(t, s)
	must(t, tx.AppendLog([]byte("hello")))
	pos := commit(t, tx)
	select {
	case entries := <-got:
		if len(entries) != 1 || entries[0].Pos != pos || string(entries[0].Records[0]) != "hello" {
			t.Fatalf("woken reader got %v", entries)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitLog did not wake up on commit")
	}
}

func testLogTrim(t *testing.T, s kv.Store) {
	var positions []kv.Position
	for i := 0; i < 10; i++ {
		tx := begin(t, s)
		must(t, tx.Set([]byte("k"), []byte{byte(i)}))
		must(t, tx.AppendLog([]byte{byte(i)}))
		positions = append(positions, commit(t, tx))
	}
	must(t, s.TrimLog(bg, positions[5]))
	if _, _, err := s.ReadLog(bg, positions[2], 0); !errors.Is(err, kv.ErrLogTrimmed) {
		t.Fatalf("read below the trim point: %v", err)
	}
	entries, _, err := s.ReadLog(bg, positions[4], 0)
	must(t, err)
	if len(entries) != 5 || entries[0].Pos != positions[5] {
		t.Fatalf("after trim: %d entries starting at %v", len(entries), entries)
	}
}

// testLogBytes: LogBytes counts the records of the entries in its range,
// each once, and nothing outside it; the storage may add a little per
// entry (its key or position).
func testLogBytes(t *testing.T, s kv.Store) {
	start, err := s.LastPosition(bg)
	must(t, err)
	var positions []kv.Position
	sizes := []int{100, 2000, 1, 50_000, 300}
	for i, size := range sizes {
		tx := begin(t, s)
		must(t, tx.Set([]byte("k"), []byte{byte(i)}))
		must(t, tx.AppendLog(make([]byte, size)))
		positions = append(positions, commit(t, tx))
	}
	tx := begin(t, s) // a commit that logs nothing counts nothing
	must(t, tx.Set([]byte("k"), []byte("x")))
	positions = append(positions, commit(t, tx))
	const perEntry = 64 // the most a backend may add to an entry's records
	check := func(after, upTo kv.Position, records []int) {
		t.Helper()
		want := 0
		for _, n := range records {
			want += n
		}
		got, err := s.LogBytes(bg, after, upTo)
		must(t, err)
		if got < int64(want) || got > int64(want+perEntry*len(records)) {
			t.Errorf("LogBytes(%d, %d) = %d, want the %d bytes of %d records, plus at most %d each", after, upTo, got, want, len(records), perEntry)
		}
	}
	check(start, positions[len(positions)-1], sizes)
	check(positions[0], positions[3], sizes[1:4])
	check(positions[2], positions[2], nil)
	check(positions[4], positions[5], nil)
	check(positions[3], positions[2], nil)
	must(t, s.TrimLog(bg, positions[2]))
	check(start, positions[4], sizes[2:5])
}

// testLogNoGaps: readers following the log while writers commit must see
// positions only grow, and at the end exactly the committed set: no entry
// may appear later below a position a reader already passed.
func testLogNoGaps(t *testing.T, s kv.Store) {
	const writers, each = 4, 40
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	seen := make(chan []kv.Position, 2)
	for r := 0; r < 2; r++ {
		go func() {
			var got []kv.Position
			after := kv.Position(0)
			for ctx.Err() == nil {
				entries, upTo, err := s.ReadLog(ctx, after, 0)
				if err != nil {
					break
				}
				for _, e := range entries {
					got = append(got, e.Pos)
				}
				after = upTo
				s.WaitLog(ctx, after)
			}
			// Catch up with what is durable once writers are done.
			for {
				entries, upTo, err := s.ReadLog(bg, after, 0)
				if err != nil || upTo == after {
					break
				}
				for _, e := range entries {
					got = append(got, e.Pos)
				}
				after = upTo
			}
			seen <- got
		}()
	}
	var mu sync.Mutex
	var committed []kv.Position
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				tx, err := s.Begin(bg)
				if err != nil {
					t.Error(err)
					return
				}
				tx.Set([]byte(fmt.Sprintf("g/%d/%d", w, i)), nil)
				tx.AppendLog([]byte{byte(w)})
				pos, err := tx.Commit(bg)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				committed = append(committed, pos)
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	cancel()
	for r := 0; r < 2; r++ {
		got := <-seen
		for i := 1; i < len(got); i++ {
			if got[i] <= got[i-1] {
				t.Fatalf("reader saw %d after %d", got[i], got[i-1])
			}
		}
		if len(got) != len(committed) {
			t.Fatalf("reader saw %d entries, %d committed", len(got), len(committed))
		}
	}
}

func testRunRetries(t *testing.T, s kv.Store) {
	set(t, s, "c", string(kv.EncodeCounter(0)))
	const workers, each = 4, 25
	var attempts atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				// A read-modify-write that conflicts under contention.
				_, err := kv.RunWith(bg, s, kv.RunOptions{MaxAttempts: 1000}, func(tx kv.Tx) error {
					attempts.Add(1)
					v, err := tx.Get(bg, []byte("c"))
					if err != nil {
						return err
					}
					return tx.Set([]byte("c"), kv.EncodeCounter(kv.DecodeCounter(v)+1))
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := counter(t, begin(t, s), "c"); got != workers*each {
		t.Fatalf("c = %d after %d increments (%d attempts): lost updates", got, workers*each, attempts.Load())
	}
	// A non-retryable error is returned at once.
	boom := errors.New("boom")
	n := 0
	if _, err := kv.Run(bg, s, func(tx kv.Tx) error { n++; return boom }); !errors.Is(err, boom) || n != 1 {
		t.Fatalf("Run with a plain error: %v after %d attempts", err, n)
	}
}

// testBank moves money between accounts in random concurrent transactions
// while auditors sum all balances; every sum must equal the total.
func testBank(t *testing.T, s kv.Store) {
	const accounts, initial = 20, 100
	account := func(i int) []byte { return []byte(fmt.Sprintf("bank/%02d", i)) }
	tx := begin(t, s)
	for i := 0; i < accounts; i++ {
		must(t, tx.Set(account(i), kv.EncodeCounter(initial)))
	}
	commit(t, tx)

	ctx, cancel := context.WithTimeout(bg, 3*time.Second)
	defer cancel()
	var transfers, aborts, audits atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, seed))
			for i := 0; i < 150 && ctx.Err() == nil; i++ {
				from, to := rng.IntN(accounts), rng.IntN(accounts)
				amount := int64(rng.IntN(30))
				tx, err := s.Begin(bg)
				if err != nil {
					t.Error(err)
					return
				}
				fv, err1 := tx.Get(bg, account(from))
				tv, err2 := tx.Get(bg, account(to))
				if err1 != nil || err2 != nil {
					t.Error(err1, err2)
					tx.Rollback()
					return
				}
				fb, tb := kv.DecodeCounter(fv), kv.DecodeCounter(tv)
				if from == to || fb < amount {
					tx.Rollback()
					continue
				}
				tx.Set(account(from), kv.EncodeCounter(fb-amount))
				tx.Set(account(to), kv.EncodeCounter(tb+amount))
				if _, err := tx.Commit(bg); err == nil {
					transfers.Add(1)
				} else if kv.IsRetryable(err) {
					aborts.Add(1)
				} else {
					t.Error(err)
					return
				}
			}
		}(uint64(w + 1))
	}
	auditorsDone := make(chan struct{})
	go func() {
		defer close(auditorsDone)
		for ctx.Err() == nil {
			tx, err := s.Begin(bg)
			if err != nil {
				t.Error(err)
				return
			}
			sum := int64(0)
			it := tx.Scan(bg, kv.PrefixRange([]byte("bank/")), kv.ScanOptions{})
			for it.Next() {
				sum += int64(binary.LittleEndian.Uint64(it.Value()))
			}
			if err := it.Err(); err != nil {
				t.Error(err)
			}
			it.Close()
			tx.Rollback()
			if sum != accounts*initial {
				t.Errorf("audit saw total %d, want %d", sum, accounts*initial)
				return
			}
			audits.Add(1)
		}
	}()
	wg.Wait()
	cancel()
	<-auditorsDone
	tx = begin(t, s)
	sum := int64(0)
	for i := 0; i < accounts; i++ {
		sum += counter(t, tx, string(account(i)))
	}
	if sum != accounts*initial {
		t.Fatalf("final total %d, want %d", sum, accounts*initial)
	}
	if transfers.Load() == 0 || audits.Load() == 0 {
		t.Fatalf("bank did no work: %d transfers, %d audits", transfers.Load(), audits.Load())
	}
	t.Logf("bank: %d transfers, %d aborts, %d audits", transfers.Load(), aborts.Load(), audits.Load())
}
