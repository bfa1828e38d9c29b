package pebblekv

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/kvtest"
)

func open(dir string) (kv.Store, error) { return Open(Options{Dir: dir}) }

func TestMain(m *testing.M) {
	kvtest.CrashChild(open)
	os.Exit(m.Run())
}

func newStore(t *testing.T) kv.Store {
	s, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	kvtest.Run(t, kvtest.Harness{New: newStore})
}

func TestReclaim(t *testing.T) {
	const maxAge = time.Second // long enough that two begins on a loaded machine fit in it
	s, err := Open(Options{Dir: t.TempDir(), MaxTxAge: maxAge})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	kvtest.Reclaim(t, s, maxAge, s.txs.Len)
}

func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test starts child processes")
	}
	kvtest.Crash(t, t.TempDir(), open)
}

// Positions never repeat after a reopen, with groups of several commits.
// Left to the scheduler, the writers' commits often reach the sequencer one
// at a time on a fast disk (in about one run in four, every group held a
// single commit and the test proved nothing), so the first open holds its
// sequencer until the first commit of every writer is queued: those then go
// in one group.
func TestReopenPositions(t *testing.T) {
	const writers = 16 // kvtest.ReopenPositions's
	dir := t.TempDir()
	var checkpointed <-chan error
	opens := 0
	openHeld := func(string) (kv.Store, error) {
		opens++
		if opens > 1 {
			return open(dir)
		}
		hold := newHeldStat(t)
		s, err := Open(Options{Dir: dir, FS: hold})
		if err != nil {
			return nil, err
		}
		checkpointed = holdSequencer(s, hold, writers)
		return s, nil
	}
	kvtest.ReopenPositions(t, dir, openHeld, func(s kv.Store, positions []kv.Position) {
		if err := <-checkpointed; err != nil {
			t.Fatalf("the checkpoint that held the sequencer: %v", err)
		}
		groups := s.(*Store).batches.Load()
		t.Logf("%d commits in %d groups", len(positions), groups)
		if groups > int64(len(positions)-writers+1) {
			t.Fatalf("%d commits went in %d groups: the writers' first commits did not share one, so the test proves less than it means to", len(positions), groups)
		}
	})
}

// The position a reopened store goes on from is the last of the last group
// written, not its first: TestReopenPositions sees that only when its last
// group happens to hold several commits, which it seldom does. Here the
// only group holds them all.
func TestReopenAfterGroup(t *testing.T) {
	const commits = 8
	dir := t.TempDir()
	hold := newHeldStat(t)
	s, err := Open(Options{Dir: dir, FS: hold})
	if err != nil {
		t.Fatal(err)
	}
	checkpointed := holdSequencer(s, hold, commits)
	positions := make(chan kv.Position, commits)
	var wg sync.WaitGroup
	for i := range commits {
		wg.Go(func() {
			pos, err := commitKey(s, fmt.Sprintf("k%d", i))
			if err != nil {
				t.Error(err)
			}
			positions <- pos
		})
	}
	wg.Wait()
	close(positions)
	if err := <-checkpointed; err != nil {
		t.Fatal(err)
	}
	if n := s.batches.Load(); n != 1 {
		t.Fatalf("%d commits went in %d groups, not one", commits, n)
	}
	var highest kv.Position
	for pos := range positions {
		highest = max(highest, pos)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if last, err := s.LastPosition(bg); err != nil || last != highest {
		t.Fatalf("LastPosition after the reopen: %d, %v; the group ended at %d", last, err, highest)
	}
	if pos, err := commitKey(s, "after"); err != nil || pos != highest+1 {
		t.Fatalf("the first commit after the reopen: position %d, %v; want %d", pos, err, highest+1)
	}
}

// heldStat holds the first Stat of name (Pebble's checkpoint begins with
// one of its directory) until release is closed.
type heldStat struct {
	vfs.FS
	name    string
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func newHeldStat(t *testing.T) *heldStat {
	return &heldStat{FS: vfs.Default, name: filepath.Join(t.TempDir(), "checkpoint"), entered: make(chan struct{}), release: make(chan struct{})}
}

func (f *heldStat) Stat(name string) (vfs.FileInfo, error) {
	if name == f.name {
		f.once.Do(func() {
			close(f.entered)
			<-f.release
		})
	}
	return f.FS.Stat(name)
}

// holdSequencer makes s's sequencer cut a checkpoint into hold.name and
// holds it there until n commits are queued behind it (or ten seconds have
// passed), so that they go in one group. The checkpoint's error comes on
// the channel returned.
func holdSequencer(s *Store, hold *heldStat, n int) <-chan error {
	checkpointed := make(chan error, 1)
	go func() {
		_, err := s.Checkpoint(bg, hold.name)
		checkpointed <- err
	}()
	<-hold.entered // the sequencer is in the checkpoint
	go func() {
		deadline := time.Now().Add(10 * time.Second) // not forever if the commits never come
		for len(s.commits) < n && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		close(hold.release)
	}()
	return checkpointed
}

// A second store on a directory another process has open says so, and
// names the lock file. The other process is this test binary again.
func TestOpenDirectoryInUse(t *testing.T) {
	if dir := os.Getenv("FOLIO_TEST_HOLD_DIR"); dir != "" {
		s, err := Open(Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		fmt.Println("open")
		io.Copy(io.Discard, os.Stdin) // until the parent closes it
		return
	}
	dir := t.TempDir()
	child := exec.Command(os.Args[0], "-test.run=^TestOpenDirectoryInUse$")
	child.Env = append(os.Environ(), "FOLIO_TEST_HOLD_DIR="+dir)
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		child.Wait()
	}()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "open\n" {
		t.Fatalf("the child did not open the store: %q %v", line, err)
	}
	_, err = Open(Options{Dir: dir})
	if err == nil {
		t.Fatal("a second store opened a directory another process has open")
	}
	for _, want := range []string{"is in use by another Folio process", filepath.Join(dir, "LOCK")} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
