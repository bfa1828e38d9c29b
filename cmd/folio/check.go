package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/foliodb/folio/internal/kv/pebblekv"
)

// errDamaged is checkCommand's error when the store is damaged: the report
// is printed already.
var errDamaged = errors.New("the store is damaged: restore it from a backup (docs/operations.md, \"Damaged data\")")

// checkCommand is `folio check --data-dir D`: an offline check of every
// block of an embedded store that no server has open. It prints a line a
// damaged table and a summary, and fails when anything is damaged.
func checkCommand(fs *flag.FlagSet) runFunc {
	dataDir := fs.String("data-dir", "", "the data directory to check, which no server may have open (required)")
	verbose := fs.Bool("v", false, "print every table checked, not only the damaged ones")
	return func(s *invocation, _ []string) error {
		if *dataDir == "" {
			return usagef("--data-dir D is required (folio help check)")
		}
		return checkStore(s.ctx, s.out.w, *dataDir, *verbose)
	}
}

// checkStore checks the store in dataDir and prints what it found.
func checkStore(ctx context.Context, out io.Writer, dataDir string, verbose bool) error {
	report, err := pebblekv.Check(ctx, dataDir)
	if err != nil {
		return err
	}
	var bytes uint64
	for _, t := range report.Tables {
		bytes += t.Bytes
		switch {
		case t.Err != nil:
			fmt.Fprintf(out, "DAMAGED %s (level %d, %d bytes, keys %s): %v\n", t.File, t.Level, t.Bytes, t.Keys, t.Err)
		case verbose:
			fmt.Fprintf(out, "ok      %s (level %d, %d bytes)\n", t.File, t.Level, t.Bytes)
		}
	}
	if report.Levels != nil {
		fmt.Fprintf(out, "DAMAGED key order across levels: %v\n", report.Levels)
	}
	damaged := len(report.Damaged())
	fmt.Fprintf(out, "%s: %d tables, %d bytes checked, %d damaged; the write-ahead log and manifest replayed whole\n",
		dataDir, len(report.Tables), bytes, damaged)
	if !report.OK() {
		return errDamaged
	}
	return nil
}
