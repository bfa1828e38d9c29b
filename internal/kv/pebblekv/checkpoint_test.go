package pebblekv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/kvtest"
)

// A checkpoint cut while writers commit holds exactly the commits up to the
// position it reports: every key, counter and log entry of the source at
// that position, read through a transaction begun at the cut, and nothing
// of the commits after it.
func TestCheckpointUnderWrites(t *testing.T) {
	ctx := context.Background()
	src, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var commits atomic.Int64
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				_, err := kv.Run(ctx, src, func(tx kv.Tx) error {
					key := fmt.Appendf(nil, "w%d/%06d", w, i)
					if err := tx.Set(key, fmt.Appendf(nil, "value %d %d", w, i)); err != nil {
						return err
					}
					if i%7 == 3 { // a clear of an earlier key
						if err := tx.Clear(fmt.Appendf(nil, "w%d/%06d", w, i-3)); err != nil {
							return err
						}
					}
					if i%50 == 49 { // and of a range
						if err := tx.ClearRange(kv.Range{Begin: fmt.Appendf(nil, "w%d/%06d", w, i-20), End: fmt.Appendf(nil, "w%d/%06d", w, i-10)}); err != nil {
							return err
						}
					}
					if err := tx.Add([]byte("count"), 1); err != nil {
						return err
					}
					return tx.AppendLog(key)
				})
				if err != nil {
					t.Error(err)
					return
				}
				commits.Add(1)
			}
		})
	}
	waitFor := func(n int64) {
		for commits.Load() < n {
			if t.Failed() {
				t.FailNow()
			}
			src.WaitLog(ctx, 0)
		}
	}
	waitFor(300)
	dir := filepath.Join(t.TempDir(), "copy")
	pos, snap, err := src.CheckpointWithSnapshot(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Rollback()
	before := commits.Load()
	waitFor(before + 300) // commits go on after the cut
	close(stop)
	wg.Wait()
	if snap.ReadVersion() != pos {
		t.Fatalf("the snapshot reads at %d, the checkpoint reports %d", snap.ReadVersion(), pos)
	}
	last, _ := src.LastPosition(ctx)
	t.Logf("checkpoint at position %d; the source went on to %d", pos, last)
	if last <= pos {
		t.Fatalf("no commit after the checkpoint: the test proves nothing")
	}

	want, err := kvtest.ReadContents(ctx, snap, src, pos)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatalf("open the checkpoint: %v", err)
	}
	defer cp.Close()
	if got, _ := cp.LastPosition(ctx); got != pos {
		t.Fatalf("the checkpoint opens at position %d, want %d", got, pos)
	}
	tx, err := cp.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	got, err := kvtest.ReadContents(ctx, tx, cp, pos)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Keys) < 100 || len(want.Log) != int(pos) {
		t.Fatalf("the source held %d keys and %d log entries at %d: too few to prove anything", len(want.Keys), len(want.Log), pos)
	}
	kvtest.CompareContents(t, want, got)
	if more, _, err := cp.ReadLog(ctx, pos, 0); err != nil || len(more) != 0 {
		t.Errorf("the checkpoint has %d log entries after its position (%v)", len(more), err)
	}
}

// A checkpoint into a directory that exists is refused, and leaves it be.
func TestCheckpointIntoExistingDirectory(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dir := t.TempDir()
	keep := filepath.Join(dir, "keep")
	if err := os.WriteFile(keep, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Checkpoint(context.Background(), dir); !errors.Is(err, os.ErrExist) {
		t.Fatalf("checkpoint into an existing directory: %v, want it refused as existing", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("the existing directory was touched: %v", err)
	}
	// The store still commits and checkpoints afterwards.
	if _, err := kv.Run(context.Background(), s, func(tx kv.Tx) error { return tx.Set([]byte("a"), []byte("b")) }); err != nil {
		t.Fatal(err)
	}
	if pos, err := s.Checkpoint(context.Background(), filepath.Join(dir, "new")); err != nil || pos != 1 {
		t.Fatalf("checkpoint: position %d, %v; want 1", pos, err)
	}
}

// A checkpoint cut is logged with its directory and position; one that
// failed is not logged as cut (its error goes to the caller).
func TestCheckpointLogged(t *testing.T) {
	var logs bytes.Buffer
	s, err := Open(Options{Dir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := commitKey(s, "a"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "cp")
	if _, err := s.Checkpoint(bg, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Checkpoint(bg, dir); err == nil { // it exists now
		t.Fatal("a second checkpoint into the same directory succeeded")
	}
	var cut []string
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "checkpoint cut") {
			cut = append(cut, line)
		}
	}
	if len(cut) != 1 || !strings.Contains(cut[0], "dir="+dir) || !strings.Contains(cut[0], "position=1") {
		t.Fatalf("logged as cut: %q, want the one checkpoint into %s at position 1", cut, dir)
	}
}
