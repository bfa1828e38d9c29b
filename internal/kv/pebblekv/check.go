package pebblekv

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// TableCheck is what Check found of one table file.
type TableCheck struct {
	File  string // path
	Level int
	Bytes uint64
	// Keys is the table's key range as Pebble prints keys.
	Keys string
	// Err is the first damage found in it, nil if every block's checksum
	// matched.
	Err error
}

// CheckReport is what Check found of a whole store.
type CheckReport struct {
	Tables []TableCheck
	// Levels is the error of Pebble's check of the levels' invariants
	// (keys in order, each in the level it belongs to), run when no table
	// is damaged; nil if it passed or was not run.
	Levels error
}

// Damaged is the tables with damage.
func (r *CheckReport) Damaged() []TableCheck {
	var d []TableCheck
	for _, t := range r.Tables {
		if t.Err != nil {
			d = append(d, t)
		}
	}
	return d
}

// OK reports whether the store is whole.
func (r *CheckReport) OK() bool { return len(r.Damaged()) == 0 && r.Levels == nil }

// Check verifies the store in dir offline: the markers that make its
// files readable, the WAL and manifest as Pebble replays them to open it
// (read-only), the checksum of every block of every live table, and, if
// those are whole, the order of the keys across the levels. It fails
// (rather than reports) when the store cannot be opened at all, including
// while a server has it open.
func Check(ctx context.Context, dir string) (*CheckReport, error) {
	fs := vfs.Default
	if err := checkMarkers(fs, dir); err != nil {
		return nil, err
	}
	if _, err := fs.Stat(dir); err != nil {
		return nil, fmt.Errorf("pebblekv: check %s: %w", dir, err)
	}
	cache := pebble.NewCache(32 << 20)
	defer cache.Unref()
	// Check reports damage itself; Pebble's default hook would end the
	// process on the first.
	quiet := slog.New(slog.DiscardHandler)
	popts := pebbleOptions(Options{Dir: dir, FS: fs, Logger: quiet}, cache, &pebble.EventListener{DataCorruption: newDamage(quiet).report})
	popts.ReadOnly = true
	popts.EnsureDefaults()
	db, err := openPebble(dir, popts)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	levels, err := db.SSTables()
	if err != nil {
		return nil, fmt.Errorf("pebblekv: list the tables of %s: %w", dir, err)
	}
	report := &CheckReport{}
	readerOpts := popts.MakeReaderOptions()
	for level, tables := range levels {
		for _, t := range tables {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			path := fs.PathJoin(dir, fmt.Sprintf("%s.sst", t.BackingSSTNum))
			report.Tables = append(report.Tables, TableCheck{
				File:  path,
				Level: level,
				Bytes: t.Size,
				Keys:  fmt.Sprintf("[%q, %q]", t.Smallest.UserKey, t.Largest.UserKey),
				Err:   checkTable(ctx, fs, path, readerOpts),
			})
		}
	}
	if len(report.Damaged()) == 0 {
		report.Levels = db.CheckLevels(nil)
	}
	return report, nil
}

// checkTable reads every block of the table at path and checks its
// checksum.
func checkTable(ctx context.Context, fs vfs.FS, path string, opts sstable.ReaderOptions) error {
	f, err := fs.Open(path)
	if err != nil {
		return err
	}
	readable, err := sstable.NewSimpleReadable(f)
	if err != nil {
		f.Close()
		return err
	}
	r, err := sstable.NewReader(ctx, readable, opts)
	if err != nil {
		readable.Close()
		return err
	}
	defer r.Close() // closes readable too
	return r.ValidateBlockChecksums()
}
