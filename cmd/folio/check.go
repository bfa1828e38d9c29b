package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/foliodb/folio/internal/kv/pebblekv"
)

// errDamaged is checkCommand's error when the store is damaged: the report
// is printed already.
var errDamaged = errors.New("the store is damaged: restore it from a backup (docs/operations.md, \"Damaged data\")")

// checkCommand is `folio check --data-dir D`: an offline check of every
// block of an embedded store that no server has open. It prints a line a
// damaged table and a summary, and fails when anything is damaged.
func checkCommand(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	dataDir := fs.String("data-dir", "", "the data directory to check, which no server may have open (required)")
	verbose := fs.Bool("v", false, "print every table checked, not only the damaged ones")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dataDir == "" || fs.NArg() > 0 {
		return errors.New("usage: folio check --data-dir D [-v] (folio check -h)")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	report, err := pebblekv.Check(ctx, *dataDir)
	if err != nil {
		return err
	}
	var bytes uint64
	for _, t := range report.Tables {
		bytes += t.Bytes
		switch {
		case t.Err != nil:
			fmt.Fprintf(out, "DAMAGED %s (level %d, %d bytes, keys %s): %v\n", t.File, t.Level, t.Bytes, t.Keys, t.Err)
		case *verbose:
			fmt.Fprintf(out, "ok      %s (level %d, %d bytes)\n", t.File, t.Level, t.Bytes)
		}
	}
	if report.Levels != nil {
		fmt.Fprintf(out, "DAMAGED key order across levels: %v\n", report.Levels)
	}
	damaged := len(report.Damaged())
	fmt.Fprintf(out, "%s: %d tables, %d bytes checked, %d damaged; the write-ahead log and manifest replayed whole\n",
		*dataDir, len(report.Tables), bytes, damaged)
	if !report.OK() {
		return errDamaged
	}
	return nil
}
