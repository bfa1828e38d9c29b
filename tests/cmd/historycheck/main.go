// Command historycheck checks a history recorded by a nemesis run (issue
// 43), written as JSON lines (tests/history), and prints the anomalies
// found. It exits 0 when the history is valid, 1 when anomalies were found
// or a search stopped at its budget, 2 when the history cannot be read.
//
//	historycheck -workload append -realtime history.jsonl
//	historycheck -workload bank -total 100 history.jsonl
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/foliodb/folio/tests/history"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("historycheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	workload := fs.String("workload", "append", "the workload recorded: append (list-append) or bank")
	realtime := fs.Bool("realtime", false, "append: check strict serializability (real-time order), not only serializability")
	total := fs.Int64("total", 0, "bank: the sum of all balances")
	negative := fs.Bool("allow-negative", false, "bank: the workload allows overdrafts")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: historycheck [flags] history.jsonl")
		return 2
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	defer f.Close()
	events, err := history.Decode(f)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	ops, err := history.Pair(events)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", fs.Arg(0), err)
		return 2
	}
	var res history.Result
	switch *workload {
	case "append":
		res = history.CheckAppend(ops, history.AppendOptions{RealTime: *realtime})
	case "bank":
		res = history.CheckBank(ops, history.BankOptions{Total: *total, AllowNegative: *negative})
	default:
		fmt.Fprintf(stderr, "unknown workload %q\n", *workload)
		return 2
	}
	fmt.Fprintf(stdout, "%d events, %d ops: %s", len(events), len(ops), res)
	if res.Valid() {
		fmt.Fprintln(stdout)
		return 0
	}
	return 1
}
