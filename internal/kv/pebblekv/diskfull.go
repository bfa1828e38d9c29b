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
// empty: the commit hangs, and is applied whenever space comes back. So the
// store refuses commits before Pebble runs out (diskReserve), and as soon as
// Pebble's background work hits ENOSPC, until a flush or compaction
// succeeds again.

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
	enospc  error     // Pebble's background work ran out of space, and has not succeeded since
	full    bool      // low or enospc, as last logged
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
	if d.enospc != nil {
		return d.enospc
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

// listener is the Pebble event listener that tells a full disk apart.
// Pebble calls it holding its own mutex: it must not call into Pebble.
func (d *diskSpace) listener() *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: d.backgroundError,
		FlushEnd: func(info pebble.FlushInfo) {
			if info.Err == nil {
				d.succeeded()
			}
		},
		CompactionEnd: func(info pebble.CompactionInfo) {
			if info.Err == nil {
				d.succeeded()
			}
		},
	}
}

func (d *diskSpace) backgroundError(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if isNoSpace(err) {
		d.enospc = fmt.Errorf("%w: %w", kv.ErrStorageFull, err)
		d.noteLocked()
	}
	d.errors++
	if time.Since(d.logged) < backgroundErrorLogEvery {
		return
	}
	// errors counts this one and those left unlogged since the last line.
	d.log.Error("pebble background error", "component", "pebble", "err", err, "errors", d.errors)
	d.errors, d.logged = 0, time.Now()
}

// succeeded notes that Pebble wrote a flush or compaction: it had room.
func (d *diskSpace) succeeded() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.enospc != nil {
		d.enospc = nil
		d.noteLocked()
	}
}

// isNoSpace reports whether err is a write that found the disk full.
func isNoSpace(err error) bool { return errors.Is(err, syscall.ENOSPC) }
