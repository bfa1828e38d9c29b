package pebblekv

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
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

// A commit queued behind a busy sequencer is checked again when its group
// is processed: a store that failed, or a disk that fell under the reserve,
// in the meantime refuses it then, and nothing of it is written.
func TestQueuedCommitCheckedAtItsGroup(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(s *Store)
		want   error
	}{
		{"the store failed", func(s *Store) { s.fail(errors.New("a planted write failure")) }, errors.New("a planted write failure")},
		{"the disk fell under the reserve", func(s *Store) {
			s.disk.mu.Lock()
			s.disk.reserve, s.disk.checked = math.MaxUint64, time.Time{}
			s.disk.mu.Unlock()
		}, kv.ErrStorageFull},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hold := newHeldStat(t)
			dir := t.TempDir()
			s, err := Open(Options{Dir: dir, FS: hold})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			checkpointed := make(chan error, 1)
			go func() {
				_, err := s.Checkpoint(bg, hold.name)
				checkpointed <- err
			}()
			<-hold.entered // the sequencer is in the checkpoint
			committed := make(chan error, 1)
			go func() {
				_, err := commitKey(s, "queued")
				committed <- err
			}()
			for deadline := time.Now().Add(10 * time.Second); len(s.commits) < 1; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the commit was never queued")
				}
			}
			tc.change(s)
			close(hold.release)
			<-checkpointed
			err = <-committed
			if err == nil || !strings.Contains(err.Error(), tc.want.Error()) && !errors.Is(err, tc.want) {
				t.Fatalf("the queued commit: %v, want it refused with %v", err, tc.want)
			}
			mustNotSee(t, s, "queued", 0, "after the refused commit")
		})
	}
}
