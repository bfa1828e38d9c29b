package pebblekv

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/foliodb/folio/internal/kv"
)

// The rule for damaged data found while serving: Pebble checks every
// block's checksum as it reads it, and reports a mismatch (a read, a
// compaction or a flush) to damage.report. From the first report on, the
// store takes no writes: a commit fails with kv.ErrDataLoss, Ping reports
// it (health answers DATA_LOSS), and compactions that would rewrite the
// damaged file cannot finish anyway. Reads go on: those that reach the
// damaged blocks fail with kv.ErrDataLoss, the rest are answered, so that
// whatever is intact can still be exported. The operator finds the file
// and its key range in the log, and `folio check` lists every damaged
// table offline; the cure is a restore from a backup (docs/operations.md).

// damageLogEvery is how often the same damaged file is logged again while
// reads keep finding it.
const damageLogEvery = 10 * time.Second

// damage records the damaged files Pebble reports.
type damage struct {
	log *slog.Logger

	mu    sync.Mutex
	first error                  // the first report, wrapping kv.ErrDataLoss; nil while none
	files map[string]*fileDamage // by path
}

type fileDamage struct {
	reports  int       // since last logged
	loggedAt time.Time // zero before the first log line
}

func newDamage(log *slog.Logger) *damage {
	return &damage{log: log, files: map[string]*fileDamage{}}
}

// report is Pebble's DataCorruption hook. Pebble calls it on read paths,
// so it only notes and logs; the error it reported reaches the reader too.
func (d *damage) report(info pebble.DataCorruptionInfo) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.first == nil {
		d.first = fmt.Errorf("%w: %s holds damaged data (keys %s); the store takes no writes until it is restored", kv.ErrDataLoss, info.Path, info.Bounds)
	}
	f := d.files[info.Path]
	if f == nil {
		f = &fileDamage{}
		d.files[info.Path] = f
	}
	f.reports++
	if now := time.Now(); now.Sub(f.loggedAt) >= damageLogEvery {
		d.log.Error("damaged data found: reads of its keys fail with DATA_LOSS and the store takes no writes; run folio check on the stopped store, then restore from a backup",
			"file", info.Path, "keys", info.Bounds.String(), "reports", f.reports, "details", info.Details.Error())
		f.reports, f.loggedAt = 0, now
	}
}

// err is the first damage reported, or nil.
func (d *damage) err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.first
}

// readError gives an error of a read from Pebble the store's context, and
// marks damaged data as kv.ErrDataLoss for the layers above.
func readError(op string, err error) error {
	if pebble.IsCorruptionError(err) {
		return fmt.Errorf("pebblekv: %s: %w: %w", op, kv.ErrDataLoss, err)
	}
	return fmt.Errorf("pebblekv: %s: %w", op, err)
}
