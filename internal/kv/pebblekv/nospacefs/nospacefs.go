// Package nospacefs is a Pebble filesystem that runs out of space on
// demand, for tests of a full disk that need no small mount (and no root).
package nospacefs

import (
	"os"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// FS is a filesystem whose new tables (*.sst) fail with ENOSPC while Full
// is set: what a full disk does to Pebble while its WAL still has room (it
// reuses old WAL files, whose blocks are allocated). Its flushes fail and
// are retried, its memtables pile up, and its writes wait for room: the
// state a real full disk reached in the probe of issue 43.
//
// While CompactionsFull is set, only the tables of compactions fail: a
// disk with room for a flush (a memtable's worth) but not for a compaction,
// which rewrites tables of many times that size.
type FS struct {
	vfs.FS
	Full            atomic.Bool
	CompactionsFull atomic.Bool
}

// New wraps fs.
func New(fs vfs.FS) *FS { return &FS{FS: fs} }

// compactionWrites is the category Pebble creates a compaction's tables
// with (a flush's is "pebble-memtable-flush").
const compactionWrites vfs.DiskWriteCategory = "pebble-compaction"

// Create fails for a table while Full is set, or for a compaction's table
// while CompactionsFull is.
func (d *FS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if strings.HasSuffix(name, ".sst") && (d.Full.Load() || d.CompactionsFull.Load() && c == compactionWrites) {
		return nil, &os.PathError{Op: "open", Path: name, Err: syscall.ENOSPC}
	}
	return d.FS.Create(name, c)
}

// Unwrap returns the wrapped filesystem.
func (d *FS) Unwrap() vfs.FS { return d.FS }
