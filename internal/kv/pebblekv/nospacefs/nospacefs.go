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
type FS struct {
	vfs.FS
	Full atomic.Bool
}

// New wraps fs.
func New(fs vfs.FS) *FS { return &FS{FS: fs} }

// Create fails for a table while Full is set.
func (d *FS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if d.Full.Load() && strings.HasSuffix(name, ".sst") {
		return nil, &os.PathError{Op: "open", Path: name, Err: syscall.ENOSPC}
	}
	return d.FS.Create(name, c)
}

// Unwrap returns the wrapped filesystem.
func (d *FS) Unwrap() vfs.FS { return d.FS }
