//go:build ignore

// summary reads the test2json events of a run of the original's suite
// (scripts/upstream-suite.sh) and prints, as Markdown, the counts of its
// top-level tests (passed, failed, skipped) and, per failed test, the first
// failed subtest and its first failure: testify's "Error:" with what
// followed it (httpexpect's expected and actual), or a panic.
//
//	go run summary.go [-tag T] [-folio C] events.json
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"
)

type event struct {
	Time    time.Time
	Action  string
	Test    string
	Output  string
	Elapsed float64
}

// exchange is a line of proxy.go's log.
type exchange struct {
	Time     time.Time
	Method   string
	Path     string
	Sent     string
	Status   int
	Answered string
}

type test struct {
	name    string
	result  string      // pass, fail, skip; empty if it never ended
	output  []string    // its lines, subtests' included, in order
	times   []time.Time // when each line was written
	start   time.Time
	failing string // its first failed subtest
	elapsed float64
}

func main() {
	tag := flag.String("tag", "", "the original's tag")
	folio := flag.String("folio", "", "Folio's commit")
	exchangesPath := flag.String("exchanges", "", "proxy.go's log: adds to each failure the last exchange before it")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: go run summary.go [-tag T] [-folio C] events.json")
		os.Exit(2)
	}
	tests, order, err := read(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "summary:", err)
		os.Exit(1)
	}
	var exchanges []exchange
	if *exchangesPath != "" {
		if exchanges, err = readExchanges(*exchangesPath); err != nil {
			fmt.Fprintln(os.Stderr, "summary:", err)
			os.Exit(1)
		}
	}
	counts := map[string]int{}
	for _, name := range order {
		counts[tests[name].result]++
	}
	host, _ := os.Hostname()
	fmt.Printf("Run of %s: %s, Folio %s, %s/%s on %s with %d CPUs.\n\n", *tag, time.Now().UTC().Format("2006-01-02 15:04 UTC"), *folio, runtime.GOOS, runtime.GOARCH, host, runtime.NumCPU())
	fmt.Printf("%d tests: %d passed, %d failed, %d skipped", len(order), counts["pass"], counts["fail"], counts["skip"])
	if n := counts[""]; n > 0 {
		fmt.Printf(", %d unfinished", n)
	}
	fmt.Print("\n\n")
	for _, res := range []string{"fail", "", "skip", "pass"} {
		var names []string
		for _, name := range order {
			if tests[name].result == res {
				names = append(names, name)
			}
		}
		if len(names) == 0 {
			continue
		}
		sort.Strings(names)
		fmt.Printf("### %s (%d)\n\n", heading(res), len(names))
		for _, name := range names {
			t := tests[name]
			switch res {
			case "pass":
				fmt.Printf("- %s\n", name)
			case "skip":
				fmt.Printf("- %s: %s\n", name, skipReason(t.output))
			default:
				where := ""
				if t.failing != "" && t.failing != name {
					where = " (" + strings.TrimPrefix(t.failing, name+"/") + ")"
				}
				msg, at := firstFailure(t.output)
				fmt.Printf("- %s%s: %s\n", name, where, msg)
				if at >= 0 && exchanges != nil {
					if x := lastBefore(exchanges, t.start, t.times[at]); x != nil {
						fmt.Printf("  - last exchange: `%s %s` sent %s, answered %d %s\n", x.Method, x.Path, quoted(x.Sent), x.Status, quoted(x.Answered))
					}
				}
			}
		}
		fmt.Println()
	}
}

func heading(res string) string {
	switch res {
	case "pass":
		return "Passed"
	case "fail":
		return "Failed"
	case "skip":
		return "Skipped"
	}
	return "Unfinished (the run stopped in them)"
}

// read returns the top-level tests by name, and their names in the order
// they started.
func read(path string) (map[string]*test, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	tests := map[string]*test{}
	var order []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Test == "" {
			continue
		}
		top, _, _ := strings.Cut(e.Test, "/")
		t := tests[top]
		if t == nil {
			t = &test{name: top, start: e.Time}
			tests[top] = t
			order = append(order, top)
		}
		switch e.Action {
		case "output":
			t.output = append(t.output, strings.TrimRight(e.Output, "\n"))
			t.times = append(t.times, e.Time)
		case "pass", "skip":
			if e.Test == top {
				t.result, t.elapsed = e.Action, e.Elapsed
			}
		case "fail":
			if e.Test == top {
				t.result, t.elapsed = e.Action, e.Elapsed
			}
			// The deepest subtest that failed first.
			if t.failing == "" || strings.HasPrefix(e.Test, t.failing+"/") {
				t.failing = e.Test
			}
		}
	}
	return tests, order, sc.Err()
}

var (
	errorLine = regexp.MustCompile(`^\s*Error:\s*(.*)$`)
	// Lines that end testify's message: its other labelled fields.
	fieldLine = regexp.MustCompile(`^\s*(Error Trace|Test|Messages):`)
	// go test's own lines, and the line locations testify indents.
	noise = regexp.MustCompile(`^\s*(=== (RUN|PAUSE|CONT|NAME)|--- (FAIL|PASS|SKIP)|\S+\.go:\d+:\s*$)`)
	space = regexp.MustCompile(`\s+`)
)

func readExchanges(path string) ([]exchange, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var xs []exchange
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var x exchange
		if json.Unmarshal(sc.Bytes(), &x) == nil {
			xs = append(xs, x)
		}
	}
	// The proxy logs an exchange when it ends, with the time it began.
	sort.SliceStable(xs, func(i, j int) bool { return xs[i].Time.Before(xs[j].Time) })
	return xs, sc.Err()
}

// lastBefore is the last exchange that began between from and to: the
// tests run one at a time, so it is the request a failure is about (or,
// for a failure on a document's contents, the read that returned it).
func lastBefore(xs []exchange, from, to time.Time) *exchange {
	var last *exchange
	for i := range xs {
		if xs[i].Time.Before(from) {
			continue
		}
		if xs[i].Time.After(to) {
			break
		}
		last = &xs[i]
	}
	return last
}

// firstFailure is the first failure's message on one line, and the index
// of its line: testify's Error field and its continuation lines, else a
// panic, else the last lines of output (index -1).
func firstFailure(lines []string) (string, int) {
	for i, l := range lines {
		m := errorLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		msg := []string{m[1]}
		for _, next := range lines[i+1:] {
			if fieldLine.MatchString(next) || noise.MatchString(next) {
				break
			}
			msg = append(msg, strings.TrimSpace(next))
		}
		return clip(strings.Join(msg, " ")), i
	}
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "panic:") {
			return clip(strings.Join(lines[i:min(i+2, len(lines))], " ")), i
		}
	}
	var tail []string
	for _, l := range lines {
		if !noise.MatchString(l) && strings.TrimSpace(l) != "" {
			tail = append(tail, strings.TrimSpace(l))
		}
	}
	if len(tail) > 3 {
		tail = tail[len(tail)-3:]
	}
	return clip(strings.Join(tail, " ")), -1
}

func skipReason(lines []string) string {
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l != "" && !noise.MatchString(l) {
			return clip(l)
		}
	}
	return "(no reason given)"
}

// clip puts a message on one line of at most 400 characters, with its
// backquotes (Markdown's code marks) made plain quotes.
func clip(s string) string { return clipTo(s, 400) }

// quoted is a body as Markdown code, or "nothing".
func quoted(body string) string {
	if strings.TrimSpace(body) == "" {
		return "nothing"
	}
	return "`" + clipTo(body, 300) + "`"
}

func clipTo(s string, n int) string {
	s = space.ReplaceAllString(strings.ReplaceAll(s, "`", "'"), " ")
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return strings.TrimSpace(s)
}
