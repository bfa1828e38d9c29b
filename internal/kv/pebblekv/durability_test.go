package pebblekv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/foliodb/folio/internal/kv"
)

// A SIGKILL cannot show that a commit was visible before it was durable:
// the operating system keeps the unsynced writes of a killed process. These
// tests run the store on Pebble's crashable in-memory filesystem, whose
// CrashClone keeps only what was synced, and hold or fail the WAL's syncs.

// walGate wraps a filesystem so that syncs of WAL files (*.log) can be
// held, failed, or let through.
type walGate struct {
	vfs.FS
	mu      sync.Mutex
	hold    bool          // syncs wait for release
	entered chan struct{} // a held sync has started (buffered)
	release chan error    // a held sync returns what it receives
	done    chan struct{} // closed by unblock: held syncs return nil
}

func newWALGate(fs vfs.FS) *walGate {
	return &walGate{FS: fs, entered: make(chan struct{}, 16), release: make(chan error), done: make(chan struct{})}
}

// unblock lets every held sync and every later one through, so that a
// test that fails midway can close its store.
func (g *walGate) unblock() {
	g.holdSyncs(false)
	close(g.done)
}

// holdSyncs makes WAL syncs wait for a value on release.
func (g *walGate) holdSyncs(on bool) {
	g.mu.Lock()
	g.hold = on
	g.mu.Unlock()
}

func (g *walGate) beforeSync() error {
	g.mu.Lock()
	hold := g.hold
	g.mu.Unlock()
	if !hold {
		return nil
	}
	select {
	case g.entered <- struct{}{}:
	default:
	}
	select {
	case err := <-g.release:
		return err
	case <-g.done:
		return nil
	}
}

func (g *walGate) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	return &gatedFile{File: f, g: g}, nil
}

func (g *walGate) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := g.FS.Create(name, c)
	return g.wrap(name, f, err)
}

func (g *walGate) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := g.FS.ReuseForWrite(oldname, newname, c)
	return g.wrap(newname, f, err)
}

func (g *walGate) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := g.FS.OpenReadWrite(name, c, opts...)
	return g.wrap(name, f, err)
}

type gatedFile struct {
	vfs.File
	g *walGate
}

func (f *gatedFile) Sync() error {
	if err := f.g.beforeSync(); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *gatedFile) SyncData() error {
	if err := f.g.beforeSync(); err != nil {
		return err
	}
	return f.File.SyncData()
}

func (f *gatedFile) SyncTo(length int64) (bool, error) {
	if err := f.g.beforeSync(); err != nil {
		return false, err
	}
	return f.File.SyncTo(length)
}

const memDir = "/folio"

var bg = context.Background()

func openOn(t *testing.T, fs vfs.FS) *Store {
	t.Helper()
	s, err := Open(Options{Dir: memDir, FS: fs, CacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func commitKey(s kv.Store, key string) (kv.Position, error) {
	return kv.Run(bg, s, func(tx kv.Tx) error {
		if err := tx.Set([]byte(key), []byte(key)); err != nil {
			return err
		}
		return tx.AppendLog([]byte(key))
	})
}

// observe says what a new reader sees of key, the log after after, and a
// log waiter after after: none of it may show the commit of key.
func mustNotSee(t *testing.T, s kv.Store, key string, after kv.Position, when string) {
	t.Helper()
	if tx, err := s.Begin(bg); err == nil {
		_, err := tx.Get(bg, []byte(key))
		tx.Rollback()
		if !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("%s: a transaction begun then reads %q (err %v)", when, key, err)
		}
	}
	if entries, _, err := s.ReadLog(bg, after, 0); err == nil && len(entries) > 0 {
		t.Fatalf("%s: ReadLog after %d returns %d entries, the first at %d", when, after, len(entries), entries[0].Pos)
	}
	ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
	defer cancel()
	if err := s.WaitLog(ctx, after); err == nil {
		t.Fatalf("%s: WaitLog after %d returns", when, after)
	}
	if last, err := s.LastPosition(bg); err == nil && last > after {
		t.Fatalf("%s: LastPosition is %d, past %d", when, last, after)
	}
}

// mustHave checks that a reopened store holds key.
func mustHave(t *testing.T, s kv.Store, key string) {
	t.Helper()
	tx, err := s.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Get(bg, []byte(key)); err != nil {
		t.Fatalf("after the crash, %q, which readers saw, is gone: %v", key, err)
	}
}

// A commit whose WAL sync has not finished is seen by nobody; one whose
// sync failed fails, is never seen, and stops the store; after a crash at
// that moment everything that was seen is still there.
func TestNotVisibleBeforeDurable(t *testing.T) {
	mem := vfs.NewCrashableMem()
	gate := newWALGate(mem)
	defer gate.unblock()
	s := openOn(t, gate)
	first, err := commitKey(s, "seen")
	if err != nil {
		t.Fatal(err)
	}
	// A log waiter already waiting when the commit starts.
	waited := make(chan error, 1)
	waitCtx, stopWaiting := context.WithCancel(bg)
	defer stopWaiting()
	go func() { waited <- s.WaitLog(waitCtx, first) }()

	gate.holdSyncs(true)
	committed := make(chan error, 1)
	go func() {
		_, err := commitKey(s, "lost")
		committed <- err
	}()
	<-gate.entered // the commit is written to Pebble, its sync is held
	mustNotSee(t, s, "lost", first, "while its sync is held")
	select {
	case err := <-waited:
		t.Fatalf("a log waiter returned (%v) while the commit's sync is held", err)
	default:
	}
	crashed := mem.CrashClone(vfs.CrashCloneCfg{})

	syncErr := errors.New("injected sync failure")
	gate.release <- syncErr
	if err := <-committed; err == nil {
		t.Fatal("a commit whose WAL sync failed succeeded")
	} else if !strings.Contains(err.Error(), syncErr.Error()) {
		t.Fatalf("the commit fails with %v, not with the sync's error", err)
	}
	gate.holdSyncs(false)
	mustNotSee(t, s, "lost", first, "after its sync failed")
	select {
	case err := <-waited:
		if err == nil {
			t.Fatal("a log waiter returned nil for a commit whose sync failed")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a log waiter still waits on a store stopped by a failed sync")
	}
	// The store refuses work after a failed sync, saying why (Pebble's
	// WAL is unusable then).
	isSyncErr := func(err error) bool { return err != nil && strings.Contains(err.Error(), syncErr.Error()) }
	if _, err := s.Begin(bg); !isSyncErr(err) {
		t.Fatalf("Begin after a failed sync: %v, want the sync's error", err)
	}
	if _, err := commitKey(s, "later"); !isSyncErr(err) {
		t.Fatalf("a commit after a failed sync: %v, want the sync's error", err)
	}
	if err := s.Ping(bg); !isSyncErr(err) {
		t.Fatalf("Ping after a failed sync: %v, want the sync's error", err)
	}
	s.Close() // may report the failure

	s = openOn(t, crashed)
	defer s.Close()
	mustHave(t, s, "seen")
	tx, err := s.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Get(bg, []byte("lost")); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("the crash kept the unsynced commit (%v): the test did not crash where it meant to", err)
	}
	pos, err := commitKey(s, "after")
	if err != nil {
		t.Fatal(err)
	}
	if pos <= first {
		t.Fatalf("the first commit after the crash got position %d, not above %d", pos, first)
	}
}

// A commit whose sync was held and then succeeds becomes visible, to new
// transactions and log readers, and survives a crash.
func TestVisibleOnceDurable(t *testing.T) {
	mem := vfs.NewCrashableMem()
	gate := newWALGate(mem)
	s := openOn(t, gate)
	defer s.Close()
	defer gate.unblock() // before the Close
	first, err := commitKey(s, "a")
	if err != nil {
		t.Fatal(err)
	}
	gate.holdSyncs(true)
	committed := make(chan error, 1)
	go func() {
		_, err := commitKey(s, "b")
		committed <- err
	}()
	<-gate.entered
	mustNotSee(t, s, "b", first, "while its sync is held")
	gate.holdSyncs(false)
	gate.release <- nil
	if err := <-committed; err != nil {
		t.Fatal(err)
	}
	if err := s.WaitLog(bg, first); err != nil {
		t.Fatal(err)
	}
	entries, _, err := s.ReadLog(bg, first, 0)
	if err != nil || len(entries) != 1 || string(entries[0].Records[0]) != "b" {
		t.Fatalf("ReadLog after the sync: %v, %v", entries, err)
	}
	crashed := mem.CrashClone(vfs.CrashCloneCfg{})
	s2 := openOn(t, crashed)
	defer s2.Close()
	mustHave(t, s2, "a")
	mustHave(t, s2, "b")
}

// Under concurrent commits, with crashes at random moments, whatever a
// reader saw before a crash survives it: Pebble's crashable filesystem
// drops every unsynced write.
func TestSeenSurvivesCrash(t *testing.T) {
	mem := vfs.NewCrashableMem()
	s := openOn(t, mem)
	defer s.Close()
	var (
		mu   sync.Mutex // held to record an observation, and to crash
		seen = map[string]bool{}
		pos  kv.Position // the highest log position a reader saw
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := commitKey(s, fmt.Sprintf("w%d-%05d", w, i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // a log reader
		defer wg.Done()
		var after kv.Position
		for {
			select {
			case <-stop:
				return
			default:
			}
			entries, upTo, err := s.ReadLog(bg, after, 0)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			for _, e := range entries {
				seen[string(e.Records[0])] = true
			}
			pos = max(pos, upTo)
			mu.Unlock()
			after = upTo
		}
	}()
	for round := range 5 {
		time.Sleep(30 * time.Millisecond)
		mu.Lock()
		crashed := mem.CrashClone(vfs.CrashCloneCfg{})
		want := make([]string, 0, len(seen))
		for k := range seen {
			want = append(want, k)
		}
		wantPos := pos
		mu.Unlock()
		c := openOn(t, crashed)
		last, err := c.LastPosition(bg)
		if err != nil {
			t.Fatal(err)
		}
		if last < wantPos {
			t.Errorf("round %d: after the crash the store is at position %d, but a reader saw %d", round, last, wantPos)
		}
		tx, err := c.Begin(bg)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range want {
			if _, err := tx.Get(bg, []byte(k)); err != nil {
				t.Errorf("round %d: %q, which a log reader saw, is gone after the crash: %v", round, k, err)
				break
			}
		}
		tx.Rollback()
		c.Close()
		t.Logf("round %d: %d commits seen, all kept", round, len(want))
	}
	close(stop)
	wg.Wait()
}

// A commit queued behind one whose sync fails is not published, even if
// its own sync would succeed: the store stopped at the failure.
func TestNothingPublishedAfterAFailedSync(t *testing.T) {
	gate := newWALGate(vfs.NewMem())
	defer gate.unblock()
	s := openOn(t, gate)
	defer s.Close()
	first, err := commitKey(s, "seen")
	if err != nil {
		t.Fatal(err)
	}
	gate.holdSyncs(true)
	failed, queued := make(chan error, 1), make(chan error, 1)
	go func() { _, err := commitKey(s, "failed"); failed <- err }()
	<-gate.entered // the first commit's sync is held
	go func() { _, err := commitKey(s, "queued"); queued <- err }()
	for deadline := time.Now().Add(10 * time.Second); len(s.groups) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the second commit never reached the syncer's queue")
		}
		time.Sleep(time.Millisecond)
	}
	gate.release <- errors.New("injected sync failure")
	if err := <-failed; err == nil {
		t.Fatal("a commit whose sync failed succeeded")
	}
	// The queued commit's sync, if Pebble tries one, succeeds.
	select {
	case gate.release <- nil:
	case err := <-queued:
		queued <- err
	case <-time.After(10 * time.Second):
	}
	if err := <-queued; err == nil {
		t.Fatal("a commit queued behind a failed sync succeeded")
	}
	mustNotSee(t, s, "queued", first, "after the sync before it failed")
}
