package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/foliodb/folio/internal/backup"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/pebblekv"
)

// Backup and restore of the embedded store.
//
//	folio backup --to DIR [--url URL | --data-dir D]
//	folio restore --from DIR --data-dir D

// backupCommand is `folio backup`: through a running server's admin call
// (--url), or, with --data-dir, from the store directly while no server
// runs on it.
func backupCommand(fs *flag.FlagSet) runFunc {
	to := fs.String("to", "", "the backup's directory, new or empty (required); with --url, under the server's --backup-dir: a name relative to it, or an absolute path inside it")
	dataDir := fs.String("data-dir", "", "back up this data directory directly, when no server runs on it (instead of --url)")
	return func(s *invocation, _ []string) error {
		if *to == "" {
			return usagef("--to DIR is required (folio help backup)")
		}
		if *dataDir != "" {
			dir, err := filepath.Abs(*to)
			if err != nil {
				return err
			}
			return backupDirectly(s.ctx, *dataDir, dir, s.out.w)
		}
		if err := s.connect(); err != nil {
			return err
		}
		done := ticker(os.Stderr, "backing up") // a backup takes what the disk takes; Ctrl-C ends it
		// Sent as given: a relative name is the server's to resolve, under
		// its backup directory, not under this process's working directory.
		res, err := s.c.Backup(s.ctx, *to)
		done()
		if err != nil {
			return err
		}
		return s.print([]map[string]any{{"dir": res.Dir, "position": res.Position, "bytes": res.Bytes, "files": res.Files,
			"created_at": res.CreatedAt.Format(time.RFC3339Nano), "duration_ms": res.Duration.Milliseconds()}},
			"dir", "position", "bytes", "files", "duration_ms")
	}
}

// backupDirectly backs up a data directory no server has open.
func backupDirectly(ctx context.Context, dataDir, to string, out io.Writer) error {
	store, err := pebblekv.Open(pebblekv.Options{Dir: dataDir})
	if err != nil {
		return fmt.Errorf("%w\n(to back up a running server, give its --url instead of --data-dir)", err)
	}
	defer store.Close()
	progress, done := progressLine(os.Stderr, "copying")
	m, err := backup.Write(ctx, store, to, progress)
	done()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "backup of %s at position %d written to %s: %d files, %s\n", dataDir, m.Position, to, len(m.Files), mib(m.Bytes()))
	return nil
}

// restoreCommand is `folio restore`.
func restoreCommand(fs *flag.FlagSet) runFunc {
	from := fs.String("from", "", "the backup's directory (required)")
	dataDir := fs.String("data-dir", "", "the data directory to restore into, new or empty (required)")
	return func(s *invocation, _ []string) error {
		if *from == "" || *dataDir == "" {
			return usagef("--from DIR and --data-dir D are required (folio help restore)")
		}
		progress, done := progressLine(os.Stderr, "restoring")
		m, err := backup.Restore(s.ctx, *from, *dataDir, openPebble, progress)
		done()
		if err != nil {
			return err
		}
		fmt.Fprintf(s.out.w, "restored the backup of %s (position %d, %s) into %s\nstart it with: folio serve --data-dir %s (the search indexes are rebuilt at the start)\n",
			m.CreatedAt.Format(time.RFC3339), m.Position, mib(m.Bytes()), *dataDir, *dataDir)
		return nil
	}
}

func openPebble(dir string) (kv.Store, error) { return pebblekv.Open(pebblekv.Options{Dir: dir}) }

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// progressLine shows a copy's progress on one line of w, at most five
// times a second, when w is a terminal; done ends the line.
func progressLine(w *os.File, what string) (backup.Progress, func()) {
	if !isTerminal(w) {
		return nil, func() {}
	}
	var mu sync.Mutex
	var last time.Time
	shown := false
	progress := func(done, total int64) {
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); now.Sub(last) >= 200*time.Millisecond || done == total {
			last, shown = now, true
			pct := 100.0
			if total > 0 {
				pct = 100 * float64(done) / float64(total)
			}
			fmt.Fprintf(w, "\r%s: %s of %s (%.0f%%)   ", what, mib(done), mib(total), pct)
		}
	}
	return progress, func() {
		mu.Lock()
		defer mu.Unlock()
		if shown {
			fmt.Fprintln(w)
		}
	}
}

// ticker shows the time spent waiting for a server, every second, when w is
// a terminal; done ends the line.
func ticker(w *os.File, what string) (done func()) {
	if !isTerminal(w) {
		return func() {}
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	start := time.Now()
	go func() {
		defer close(stopped)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				fmt.Fprintf(w, "\r%s: %s\n", what, time.Since(start).Round(time.Millisecond))
				return
			case <-t.C:
				fmt.Fprintf(w, "\r%s: %s ", what, time.Since(start).Round(time.Second))
			}
		}
	}()
	return func() { close(stop); <-stopped }
}
