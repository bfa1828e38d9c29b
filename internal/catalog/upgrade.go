package catalog

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/foliodb/folio/internal/kv"
)

// Upgrade brings a store written by an earlier version to the current
// layout (today: database records into the default namespace), once. A
// node tries it at start; if the store cannot be reached then, every
// request that reads the catalog tries again first, and fails as the
// store does until it succeeds: no request may run on the old layout,
// where it would miss databases.
type Upgrade struct {
	store kv.Store
	log   *slog.Logger
	done  atomic.Bool
	mu    sync.Mutex
}

// NewUpgrade returns the upgrade of store.
func NewUpgrade(store kv.Store, log *slog.Logger) *Upgrade {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Upgrade{store: store, log: log}
}

// Ensure upgrades the store unless it is done already. A nil Upgrade has
// nothing to do.
func (u *Upgrade) Ensure(ctx context.Context) error {
	if u == nil || u.done.Load() {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.done.Load() {
		return nil
	}
	moved, err := MoveLegacyDatabases(ctx, u.store)
	if err != nil {
		return fmt.Errorf("move databases into the default namespace: %w", err)
	}
	if moved > 0 {
		u.log.Info("databases moved into the default namespace", "databases", moved)
	}
	u.done.Store(true)
	return nil
}
