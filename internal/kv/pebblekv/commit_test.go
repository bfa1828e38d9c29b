package pebblekv

import (
	"fmt"
	"sync"
	"testing"
)

// A group holds at most maxGroup commits: one more queued behind a busy
// sequencer goes in a second group, and the group sizes add up.
func TestGroupBound(t *testing.T) {
	const commits = maxGroup + 1
	hold := newHeldStat(t)
	s, err := Open(Options{Dir: t.TempDir(), FS: hold})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkpointed := holdSequencer(s, hold, commits)
	var wg sync.WaitGroup
	for i := range commits {
		wg.Go(func() {
			if _, err := commitKey(s, fmt.Sprintf("k%04d", i)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := <-checkpointed; err != nil {
		t.Fatal(err)
	}
	if n := s.batches.Load(); n != 2 {
		t.Errorf("%d commits queued at once went in %d groups, want 2", commits, n)
	}
	sizes := s.Stats().CommitGroupSize
	if sizes.Count != 2 || sizes.Sum != commits {
		t.Errorf("group sizes: %d groups of %v commits in all, want 2 of %d", sizes.Count, sizes.Sum, commits)
	}
	if over := sizes.Counts[len(sizes.Counts)-1]; over != 0 {
		t.Errorf("%d groups held more than maxGroup (%d) commits", over, maxGroup)
	}
}
