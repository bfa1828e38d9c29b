package pebblekv

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/foliodb/folio/internal/kv"
)

// The reserve is two memtables and a WAL preallocation: 20 MiB with the
// default memtables, as the documentation says.
func TestDiskReserve(t *testing.T) {
	for _, tc := range []struct{ memTable, want int64 }{
		{DefaultMemTableSize, 20 << 20},
		{64 << 20, 128<<20 + maxPreallocate},
	} {
		if got := diskReserve(tc.memTable); got != uint64(tc.want) {
			t.Errorf("diskReserve(%d) = %d, want %d", tc.memTable, got, tc.want)
		}
	}
}

// Exactly the reserve free is enough; a byte less is not.
func TestDiskSpaceAtTheReserve(t *testing.T) {
	const reserve = 1 << 20
	mem := vfs.NewMem()
	d := newDiskSpace(mem, "", reserve, slog.New(slog.DiscardHandler))
	for _, tc := range []struct {
		free uint64
		full bool
	}{{reserve, false}, {reserve - 1, true}, {reserve + 1, false}} {
		mem.TestingSetDiskUsage(vfs.DiskUsage{AvailBytes: tc.free, TotalBytes: 1 << 30})
		d.mu.Lock()
		d.checked = time.Time{}
		d.mu.Unlock()
		if err := d.check(); errors.Is(err, kv.ErrStorageFull) != tc.full {
			t.Errorf("%d bytes free of a %d reserve: %v, want full %v", tc.free, reserve, err, tc.full)
		}
	}
}

// Pebble's background errors are logged at once, then at most every
// backgroundErrorLogEvery, each line counting those since the one before.
func TestBackgroundErrorsLogged(t *testing.T) {
	var logs bytes.Buffer
	d := newDiskSpace(vfs.NewMem(), "", 0, slog.New(slog.NewTextHandler(&logs, nil)))
	for range 3 {
		d.backgroundError(errors.New("flush failed"))
	}
	if n := strings.Count(logs.String(), "pebble background error"); n != 1 || !strings.Contains(logs.String(), "errors=1") {
		t.Fatalf("three errors at once logged %d lines, want 1 counting one:\n%s", n, logs.String())
	}
	d.mu.Lock()
	d.logged = time.Now().Add(-backgroundErrorLogEvery)
	d.mu.Unlock()
	logs.Reset()
	d.backgroundError(errors.New("flush failed"))
	if !strings.Contains(logs.String(), "errors=3") {
		t.Errorf("the line after the bound does not count the two unlogged and its own:\n%s", logs.String())
	}
}
