package pebblekv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/pebblekv/nospacefs"
)

func openFull(t *testing.T, fs vfs.FS) *Store {
	t.Helper()
	// Small memtables fill, and stall, after a few commits.
	s, err := Open(Options{Dir: memDir, FS: fs, CacheSize: 8 << 20, MemTableSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// commitBig commits a 32 KiB value under key, within timeout.
func commitBig(s *Store, key string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(bg, timeout)
	defer cancel()
	_, err := kv.Run(ctx, s, func(tx kv.Tx) error { return tx.Set([]byte(key), make([]byte, 32<<10)) })
	return err
}

// On a full disk a commit is refused at once with kv.ErrStorageFull rather
// than wait for room, Ping and Stats say so, and once there is room again
// commits succeed without a restart.
func TestDiskFullRefusesCommits(t *testing.T) {
	disk := nospacefs.New(vfs.NewMem())
	s := openFull(t, disk)
	defer s.Close()
	defer disk.Full.Store(false) // so that Close can flush
	if err := commitBig(s, "before", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	disk.Full.Store(true)
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		start := time.Now()
		err = commitBig(s, "k"+string(rune('a'+i%26))+string(rune('a'+i/26)), 5*time.Second)
		if took := time.Since(start); took > 2*time.Second {
			t.Fatalf("commit %d on a full disk took %v (err %v), want an answer at once", i, took, err)
		}
	}
	if !errors.Is(err, kv.ErrStorageFull) {
		t.Fatalf("commits on a full disk: %v, want kv.ErrStorageFull", err)
	}
	if err := s.Ping(bg); !errors.Is(err, kv.ErrStorageFull) {
		t.Errorf("Ping on a full disk: %v, want kv.ErrStorageFull", err)
	}
	if !s.Stats().DiskFull {
		t.Error("Stats().DiskFull is false on a full disk")
	}
	// Reads still work.
	if _, err := kv.Run(bg, s, func(tx kv.Tx) error { _, err := tx.Get(bg, []byte("before")); return err }); err != nil {
		t.Errorf("a read on a full disk: %v", err)
	}

	disk.Full.Store(false) // space freed: Pebble's next flush succeeds
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := commitBig(s, "after", 5*time.Second)
		if err == nil {
			break
		}
		if !errors.Is(err, kv.ErrStorageFull) || time.Now().After(deadline) {
			t.Fatalf("a commit once space is freed: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Ping(bg); err != nil {
		t.Errorf("Ping once space is freed: %v", err)
	}
	if s.Stats().DiskFull {
		t.Error("Stats().DiskFull is still true once space is freed")
	}
}

// Commits are refused from a flush or a compaction out of space until one
// of the same kind succeeds: a flush has room for a memtable, a compaction
// needs many times that, and a move or delete-only compaction writes no
// table at all.
func TestDiskSpaceEvents(t *testing.T) {
	noSpace := &os.PathError{Op: "open", Path: "000012.sst", Err: syscall.ENOSPC}
	noQuota := &os.PathError{Op: "write", Path: "000012.sst", Err: syscall.EDQUOT}
	table := func(n pebble.TableNum) []pebble.TableInfo { return []pebble.TableInfo{{FileNum: n}} }
	// Pebble reports a failure as a background error too, a cancelled
	// compaction aside.
	flush := func(err error) func(*pebble.EventListener) {
		return func(l *pebble.EventListener) {
			if err != nil {
				l.BackgroundError(err)
			}
			l.FlushEnd(pebble.FlushInfo{Done: true, Err: err, Output: table(9)})
		}
	}
	compaction := func(reason string, err error, in, out pebble.TableNum) func(*pebble.EventListener) {
		return func(l *pebble.EventListener) {
			if err != nil && !errors.Is(err, pebble.ErrCancelledCompaction) {
				l.BackgroundError(err)
			}
			info := pebble.CompactionInfo{Reason: reason, Done: true, Err: err, Input: []pebble.LevelInfo{{Level: 5, Tables: table(in)}}}
			if err == nil && out != 0 {
				info.Output = pebble.LevelInfo{Level: 6, Tables: table(out)}
			}
			l.CompactionEnd(info)
		}
	}
	for _, tc := range []struct {
		name   string
		events []func(*pebble.EventListener)
		full   bool
	}{
		{"a flush out of space", []func(*pebble.EventListener){flush(noSpace)}, true},
		{"a flush out of quota", []func(*pebble.EventListener){flush(noQuota)}, true},
		{"a flush out of space, then one that succeeds", []func(*pebble.EventListener){flush(noSpace), flush(nil)}, false},
		{"a flush out of space, then a compaction", []func(*pebble.EventListener){flush(noSpace), compaction("default", nil, 3, 4)}, true},
		{"a compaction out of space", []func(*pebble.EventListener){compaction("default", noSpace, 3, 0)}, true},
		{"a compaction out of space, then a flush", []func(*pebble.EventListener){compaction("default", noSpace, 3, 0), flush(nil)}, true},
		{"a compaction out of space, then a move", []func(*pebble.EventListener){compaction("default", noSpace, 3, 0), compaction("move", nil, 3, 3)}, true},
		{"a compaction out of space, then a delete-only one", []func(*pebble.EventListener){compaction("default", noSpace, 3, 0), compaction("delete-only", nil, 3, 0)}, true},
		{"a compaction out of space, then one cancelled", []func(*pebble.EventListener){compaction("default", noSpace, 3, 0), compaction("default", pebble.ErrCancelledCompaction, 3, 0)}, true},
		{"a compaction out of space, then one that wrote a table", []func(*pebble.EventListener){compaction("default", noSpace, 3, 0), compaction("default", nil, 3, 4)}, false},
		{"both out of space, then a flush and a compaction", []func(*pebble.EventListener){flush(noSpace), compaction("default", noSpace, 3, 0), flush(nil), compaction("default", nil, 3, 4)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDiskSpace(vfs.NewMem(), memDir, 0, slog.New(slog.DiscardHandler))
			l := d.listener()
			for _, e := range tc.events {
				e(l)
			}
			if err := d.err(); (err != nil) != tc.full || err != nil && !errors.Is(err, kv.ErrStorageFull) {
				t.Errorf("after %s: %v, want full %v", tc.name, err, tc.full)
			}
		})
	}
}

// A compaction that runs out of space refuses commits until a compaction
// writes tables again. A successful flush, which needs far less room, says
// nothing of a compaction's: L0 would grow meanwhile until Pebble stalls its
// writes, with the commits the sequencer took waiting inside.
func TestCompactionOutOfSpaceRefusesCommits(t *testing.T) {
	disk := nospacefs.New(vfs.NewMem())
	s := openFull(t, disk)
	defer s.Close()
	defer disk.CompactionsFull.Store(false) // so that Close can compact
	// Tables in the bottom level, and in L0 over them: a compaction of
	// both fails once, then waits (Pebble sets the failed span aside for a
	// while), as a large compaction on a full disk does.
	compact := func(timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(bg, timeout)
		defer cancel()
		return s.db.Compact(ctx, []byte{0}, []byte{0xFF, 0xFF}, false)
	}
	for round := range 2 {
		for i := range 4 {
			if err := commitBig(s, fmt.Sprint("k", round, i), 10*time.Second); err != nil {
				t.Fatal(err)
			}
			if err := s.db.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		if round == 0 {
			if err := compact(10 * time.Second); err != nil {
				t.Fatal(err)
			}
		}
	}

	disk.CompactionsFull.Store(true)
	// Pebble may have compacted L0 already: flush more until a compaction
	// of it fails. The manual compaction that fails does not return
	// (Pebble retries it), hence its short deadline.
	for i := 0; ; i++ {
		err := commitBig(s, fmt.Sprint("more", i), 5*time.Second)
		if errors.Is(err, kv.ErrStorageFull) {
			break
		}
		if err != nil || i == 50 {
			t.Fatalf("commit %d while compactions run out of space: %v, want kv.ErrStorageFull", i, err)
		}
		if err := s.db.Flush(); err != nil {
			t.Fatal(err)
		}
		compact(100 * time.Millisecond)
	}
	// A flush meanwhile succeeds (written to Pebble directly: the store
	// refuses commits).
	if err := s.db.Set([]byte("direct"), []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := commitBig(s, "refused", 5*time.Second); !errors.Is(err, kv.ErrStorageFull) {
		t.Fatalf("a commit after a flush succeeded, with compactions still out of space: %v, want kv.ErrStorageFull", err)
	}
	if !s.Stats().DiskFull {
		t.Error("Stats().DiskFull is false while compactions are out of space")
	}

	disk.CompactionsFull.Store(false)
	if err := compact(time.Minute); err != nil {
		t.Fatalf("a compaction once space is freed: %v", err)
	}
	if err := commitBig(s, "accepted", 5*time.Second); err != nil {
		t.Fatalf("a commit once a compaction succeeded: %v", err)
	}
}

// When the filesystem reports less free space than the store keeps in
// reserve, commits are refused before Pebble runs out (its WAL cannot be
// written after a failed write), and accepted again once there is room.
func TestDiskReserveRefusesCommits(t *testing.T) {
	mem := vfs.NewMem()
	mem.TestingSetDiskUsage(vfs.DiskUsage{AvailBytes: 1 << 30, TotalBytes: 2 << 30, UsedBytes: 1 << 30})
	s := openFull(t, mem)
	defer s.Close()
	if err := commitBig(s, "a", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	mem.TestingSetDiskUsage(vfs.DiskUsage{AvailBytes: 1 << 20, TotalBytes: 2 << 30, UsedBytes: 2<<30 - 1<<20})
	time.Sleep(2 * diskCheckEvery)
	if err := commitBig(s, "b", 5*time.Second); !errors.Is(err, kv.ErrStorageFull) {
		t.Fatalf("a commit with 1 MiB free: %v, want kv.ErrStorageFull", err)
	}
	if err := s.Ping(bg); !errors.Is(err, kv.ErrStorageFull) {
		t.Errorf("Ping with 1 MiB free: %v, want kv.ErrStorageFull", err)
	}
	mem.TestingSetDiskUsage(vfs.DiskUsage{AvailBytes: 1 << 30, TotalBytes: 2 << 30, UsedBytes: 1 << 30})
	time.Sleep(2 * diskCheckEvery)
	if err := commitBig(s, "c", 5*time.Second); err != nil {
		t.Fatalf("a commit once space is freed: %v", err)
	}
}

// A commit still queued when its context ends is dropped, never applied
// later: its caller was told it failed.
func TestCommitPastDeadlineNotApplied(t *testing.T) {
	gate := newWALGate(vfs.NewMem())
	s := openOn(t, gate)
	defer s.Close()
	defer gate.unblock() // before the Close
	gate.holdSyncs(true)
	// Fill the pipeline: the syncer holds the groups it took in its held
	// sync, the queue to it fills up, and the sequencer waits to hand it
	// one more. Each commit waits for the group before it, so that each
	// is a group of its own.
	held := make(chan error, 64)
	fills := 0
	for full := false; !full; fills++ {
		full = len(s.groups) == cap(s.groups) // this commit is the one more
		before := s.batches.Load()
		key := fmt.Sprint("fill", fills)
		go func() { _, err := commitKey(s, key); held <- err }()
		for deadline := time.Now().Add(10 * time.Second); s.batches.Load() == before; {
			if time.Now().After(deadline) || fills == cap(held) {
				t.Fatalf("commit %d never reached Pebble", fills)
			}
			time.Sleep(time.Millisecond)
		}
	}
	ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := kv.Run(ctx, s, func(tx kv.Tx) error { return tx.Set([]byte("late"), []byte("v")) })
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a commit queued past its deadline: %v, want context.DeadlineExceeded", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a commit queued past its deadline did not return")
	}
	gate.holdSyncs(false)
	gate.release <- nil // the held sync
	for range fills {
		if err := <-held; err != nil {
			t.Fatal(err)
		}
	}
	// The sequencer has passed the late commit's place in the queue.
	if _, err := commitKey(s, "last"); err != nil {
		t.Fatal(err)
	}
	tx, err := s.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Get(bg, []byte("late")); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("the commit that gave up at its deadline was applied (Get: %v)", err)
	}
}

// A WAL sync that finds the disk full stops the store (Pebble's WAL cannot
// be written after a failed write). The commit in flight may still be
// applied at the next start, from the WAL: it and every later request get
// an error that says so and asks for a restart, not kv.ErrStorageFull,
// which the API answers "retry later", and which a retried $increment
// would answer by applying twice.
func TestWALFullStopsStoreOutcomeUnknown(t *testing.T) {
	gate := newWALGate(vfs.NewMem())
	s := openOn(t, gate)
	defer s.Close()
	defer gate.unblock() // before the Close
	gate.holdSyncs(true)
	committed := make(chan error, 1)
	go func() { _, err := commitKey(s, "k"); committed <- err }()
	<-gate.entered
	gate.release <- &os.PathError{Op: "sync", Path: "000002.log", Err: syscall.ENOSPC}
	stopped := func(what string, err error) {
		t.Helper()
		switch {
		case err == nil:
			t.Fatalf("%s: no error", what)
		case errors.Is(err, kv.ErrStorageFull):
			t.Fatalf("%s: %v, which answers retry later, though the outcome of the commit in flight is unknown", what, err)
		case !strings.Contains(err.Error(), "restart the server") || !strings.Contains(err.Error(), "disk is full") || !isNoSpace(err):
			t.Fatalf("%s: %v, want the full disk named, and a restart asked for", what, err)
		}
	}
	stopped("a commit whose WAL sync found the disk full", <-committed)
	_, err := commitKey(s, "later")
	stopped("a commit after the WAL found the disk full", err)
	stopped("Ping after the WAL found the disk full", s.Ping(bg))
	if !s.Stats().DiskFull {
		t.Error("Stats().DiskFull is false once the WAL found the disk full")
	}
}

// A Fatalf that Pebble raised in its commit path (after the pipeline
// returned, holding no lock) comes back as an error that stops the store.
// Any other panic there comes from inside the pipeline, which keeps its
// commit lock: the store ends the process, saying why, rather than go on to
// wait on that lock forever.
func TestFatalToError(t *testing.T) {
	cause := errors.New("write 000002.log: no space left on device")
	for _, tc := range []struct {
		name  string
		panic any
		exits bool
	}{
		{"Fatalf", fatalError{msg: "fatal commit error", cause: cause}, false},
		{"an error", cause, true},
		{"not an error", "not reached", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs strings.Builder
			exited := false
			s := &Store{log: slog.New(slog.NewTextHandler(&logs, nil)), exit: func() { exited = true }}
			err := s.fatalToError(func() error { panic(tc.panic) })
			if exited != tc.exits {
				t.Fatalf("a panic with %#v: exited %v, want %v (err %v)", tc.panic, exited, tc.exits, err)
			}
			if err == nil {
				t.Fatalf("a panic with %#v came out as no error", tc.panic)
			}
			if !tc.exits {
				if !errors.Is(err, cause) {
					t.Errorf("a Fatalf with %v came out as %v", cause, err)
				}
				return
			}
			if !strings.Contains(logs.String(), "commit pipeline is stuck") {
				t.Errorf("the exit was not logged clearly: %q", logs.String())
			}
		})
	}
}
