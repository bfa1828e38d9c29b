package kvtest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/foliodb/folio/internal/kv"
)

// ReopenPositions checks that commit positions never repeat across a
// reopen when many commits were in flight at once: writers commit
// concurrently (so that a backend that commits in groups puts several in
// one), the store closes and reopens, and a new commit's position must
// exceed every position in the log. The crash test cannot see a backend
// that saves the first position of a group instead of the last: it commits
// one at a time, and trusts LastPosition.
//
// burst, if set, is called on the store after the concurrent commits,
// before it closes, with their positions: a backend checks there that its
// groups did hold several commits.
func ReopenPositions(t *testing.T, location string, open Opener, burst func(s kv.Store, positions []kv.Position)) {
	const writers, each = 16, 20
	s, err := open(location)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var positions []kv.Position
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	start := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range each {
				pos, err := commitOne(s, fmt.Sprintf("reopen/%02d/%02d", w, i))
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				positions = append(positions, pos)
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if burst != nil {
		burst(s, positions)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = open(location)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var highest kv.Position
	entries := 0
	for after := kv.Position(0); ; {
		es, upTo, err := s.ReadLog(bg, after, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			highest = max(highest, e.Pos)
		}
		entries += len(es)
		if len(es) == 0 {
			break
		}
		after = upTo
	}
	if entries != writers*each {
		t.Fatalf("the log holds %d entries after the reopen, want %d", entries, writers*each)
	}
	last, err := s.LastPosition(bg)
	if err != nil {
		t.Fatal(err)
	}
	if last < highest {
		t.Errorf("LastPosition after the reopen is %d, below the log's highest position %d", last, highest)
	}
	pos, err := commitOne(s, "reopen/after")
	if err != nil {
		t.Fatal(err)
	}
	if pos <= highest {
		t.Fatalf("the first commit after the reopen got position %d, not above the log's highest, %d: positions repeat", pos, highest)
	}
}

// commitOne commits a write of key with a log record naming it.
func commitOne(s kv.Store, key string) (kv.Position, error) {
	return kv.Run(bg, s, func(tx kv.Tx) error {
		if err := tx.Set([]byte(key), []byte("v")); err != nil {
			return err
		}
		return tx.AppendLog([]byte(key))
	})
}
