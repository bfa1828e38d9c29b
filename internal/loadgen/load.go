package loadgen

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// LoadConfig is the load phase: an empty collection filled with a Dataset.
type LoadConfig struct {
	Driver Driver
	Data   Dataset
	// Clients insert batches concurrently (default 4).
	Clients int
	// BatchSize is the documents per insert request (default 500: about
	// 0.5 MB, well under the API's limits).
	BatchSize int
	// Progress, if set, gets a line a second.
	Progress io.Writer
}

// Load drops and recreates the collection, inserts the documents 0 to
// Data.Docs-1 in batches, and lets the driver finish (indexes, statistics).
// It returns how long the inserts and the finishing took.
func Load(ctx context.Context, cfg LoadConfig) (time.Duration, error) {
	if cfg.Clients <= 0 {
		cfg.Clients = 4
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 500
	}
	d := cfg.Driver
	if err := d.Setup(ctx); err != nil {
		return 0, fmt.Errorf("load %s: set up: %w", d.Name(), err)
	}
	start := time.Now()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next, loaded atomic.Int64
	var wg sync.WaitGroup
	for range cfg.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			batch := make([]Document, 0, cfg.BatchSize)
			for ctx.Err() == nil {
				from := next.Add(int64(cfg.BatchSize)) - int64(cfg.BatchSize)
				if from >= cfg.Data.Docs {
					return
				}
				batch = batch[:0]
				for id := from; id < min(from+int64(cfg.BatchSize), cfg.Data.Docs); id++ {
					batch = append(batch, Document{ID: id, JSON: cfg.Data.Document(id)})
				}
				if err := d.InsertBatch(ctx, batch); err != nil {
					cancel(fmt.Errorf("insert documents %d to %d: %w", from, from+int64(len(batch))-1, err))
					return
				}
				loaded.Add(int64(len(batch)))
			}
		}()
	}
	stop := loadProgress(cfg, &loaded, start)
	wg.Wait()
	stop()
	if err := context.Cause(ctx); err != nil {
		return 0, fmt.Errorf("load %s: %w", d.Name(), err)
	}
	if err := d.FinishLoad(ctx); err != nil {
		return 0, fmt.Errorf("load %s: finish: %w", d.Name(), err)
	}
	return time.Since(start), nil
}

func loadProgress(cfg LoadConfig, loaded *atomic.Int64, start time.Time) (stop func()) {
	if cfg.Progress == nil {
		return func() {}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				n := loaded.Load()
				fmt.Fprintf(cfg.Progress, "%s load %5.0fs %10d of %d docs %9.0f docs/s\n", cfg.Driver.Name(),
					now.Sub(start).Seconds(), n, cfg.Data.Docs, float64(n)/now.Sub(start).Seconds())
			}
		}
	}()
	return func() { close(done); <-finished }
}
