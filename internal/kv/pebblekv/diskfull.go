package pebblekv

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/foliodb/folio/internal/kv"
)

// A full disk, as Pebble meets it: a failed WAL write leaves its WAL
// unusable (every later write fails or panics), while a failed flush is
// retried at once, forever, and writes wait for the memtables it cannot
// empty: the commit hangs, and is applied whenever space comes back. A
// failed compaction is retried later, and L0 grows meanwhile with each
// flush until Pebble stops its writes (L0StopWritesThreshold), to the same
// effect. So the store refuses commits before Pebble runs out
// (diskReserve), and as soon as a flush or a compaction hits ENOSPC, until
// one of the same kind succeeds: a compaction needs many times a flush's
// room, so a flush that succeeds says nothing of it.

const (
	// diskCheckEvery bounds how often the free space is asked of the
	// filesystem (a statfs): commits check it before they queue.
	diskCheckEvery = 100 * time.Millisecond
	// backgroundErrorLogEvery: a failing flush is retried at once, so its
	// error would be logged a hundred times a second.
	backgroundErrorLogEvery = 5 * time.Second
)

// diskReserve is the free space below which commits are refused: room for
// the flushes of the two memtables Pebble may hold, and for a WAL file's
// preallocation. 20 MiB with the default memtables.
func diskReserve(memTableSize int64) uint64 {
	return uint64(2*memTableSize + maxPreallocate)
}

// diskSpace says whether the store's disk has room for commits.
type diskSpace struct {
	fs      vfs.FS
	dir     string
	reserve uint64
	log     *slog.Logger

	mu      sync.Mutex
	checked time.Time // when the free space was last asked
	low     error     // the free space last asked was below reserve
	// flushes: a flush ran out of space, and none has succeeded since.
	flushes error
	// compactions: a compaction ran out of space, and none has written
	// tables since.
	compactions error
	full        bool // any of the three, as last logged
	// errors counts Pebble's background errors since the last one logged.
	errors int
	logged time.Time
}

func newDiskSpace(fs vfs.FS, dir string, reserve uint64, log *slog.Logger) *diskSpace {
	return &diskSpace{fs: fs, dir: dir, reserve: reserve, log: log}
}

// check returns an error wrapping kv.ErrStorageFull while commits should be
// refused, asking the filesystem for its free space at most every
// diskCheckEvery (a filesystem that cannot tell, as in-memory ones, is
// never low).
func (d *diskSpace) check() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if now := time.Now(); now.Sub(d.checked) >= diskCheckEvery {
		d.checked = now
		d.low = nil
		if u, err := d.fs.GetDiskUsage(d.dir); err == nil && u.AvailBytes < d.reserve {
			d.low = fmt.Errorf("%w: %d bytes free on the disk of %s, under the %d kept for Pebble's flushes", kv.ErrStorageFull, u.AvailBytes, d.dir, d.reserve)
		}
		d.noteLocked()
	}
	return d.errLocked()
}

// err is check's outcome without asking the filesystem.
func (d *diskSpace) err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.errLocked()
}

func (d *diskSpace) errLocked() error {
	switch {
	case d.flushes != nil:
		return d.flushes
	case d.compactions != nil:
		return d.compactions
	}
	return d.low
}

// noteLocked logs the changes between full and not.
func (d *diskSpace) noteLocked() {
	full := d.errLocked()
	switch {
	case full != nil && !d.full:
		d.log.Error("disk full: commits are refused until space is freed", "err", full)
	case full == nil && d.full:
		d.log.Info("disk space available again: commits accepted")
	}
	d.full = full != nil
}

// listener is the Pebble event listener that tells a full disk apart: from
// the flushes' and compactions' own errors. Pebble's background errors are
// only logged. Pebble calls it holding its own mutex: it must not call into
// Pebble.
func (d *diskSpace) listener() *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: d.backgroundError,
		FlushEnd:        d.flushEnd,
		CompactionEnd:   d.compactionEnd,
	}
}

// flushEnd notes whether a flush had room.
func (d *diskSpace) flushEnd(info pebble.FlushInfo) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case isNoSpace(info.Err):
		d.flushes = fmt.Errorf("%w: a flush of Pebble's memtables: %w", kv.ErrStorageFull, info.Err)
	case info.Err == nil:
		d.flushes = nil
	default:
		return
	}
	d.noteLocked()
}

// compactionEnd notes whether a compaction had room: only one that wrote
// tables shows it.
func (d *diskSpace) compactionEnd(info pebble.CompactionInfo) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case isNoSpace(info.Err):
		d.compactions = fmt.Errorf("%w: a compaction of Pebble's tables: %w", kv.ErrStorageFull, info.Err)
	case info.Err == nil && wroteTables(info):
		d.compactions = nil
	default:
		return
	}
	d.noteLocked()
}

// wroteTables reports whether a successful compaction wrote tables. A move
// compaction's output is its input table, at another level; a delete-only
// one drops tables, or cuts virtual ones out of those it had.
func wroteTables(info pebble.CompactionInfo) bool {
	if info.Reason == "delete-only" {
		return false
	}
	inputs := make(map[pebble.TableNum]bool)
	for _, level := range info.Input {
		for _, t := range level.Tables {
			inputs[t.FileNum] = true
		}
	}
	for _, t := range info.Output.Tables {
		if !inputs[t.FileNum] {
			return true
		}
	}
	return false
}

// backgroundError logs Pebble's background errors, at most every
// backgroundErrorLogEvery.
func (d *diskSpace) backgroundError(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.errors++
	if time.Since(d.logged) < backgroundErrorLogEvery {
		return
	}
	// errors counts this one and those left unlogged since the last line.
	d.log.Error("pebble background error", "component", "pebble", "err", err, "errors", d.errors)
	d.errors, d.logged = 0, time.Now()
}

// isNoSpace reports whether err is a write that found the disk full, or
// its owner's disk quota used up: either way there is no room until
// someone makes some.
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
