//go:build ignore

// summary reads the test2json events of a run of the original's suite
// (scripts/upstream-suite.sh) and prints, as Markdown, the counts of its
// top-level tests (passed, failed, skipped) and, per failed test, the first
// failed subtest, its first failure (testify's "Error:" with what followed
// it: httpexpect's expected and actual; or a panic), and, from proxy.go's
// log, the exchange it failed on: what was sent and what Folio answered.
//
//	go run summary.go [-tag T] [-folio C] [-exchanges proxy.jsonl] events.json
//	go run summary.go -failed-subtests events.json
//
// The second form prints, one a line, the first failed subtest of each
// failed test that has subtests (Test/sub), which the script runs again
// alone so that its exchanges are its own.
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
	"strconv"
	"strings"
	"time"
)

type event struct {
	Action string
	Test   string
	Output string
}

// exchange is a line of proxy.go's log; a mark (Method "MARK", Path a
// test's name) says that the exchanges after it, up to the next mark, are
// that test's.
type exchange struct {
	Method   string
	Path     string
	Sent     string
	Status   int
	Answered string
}

type test struct {
	name    string
	result  string   // pass, fail, skip; empty if it never ended
	output  []string // its lines, subtests' included, in order
	failing string   // its first failed subtest, deepest first
}

func main() {
	tag := flag.String("tag", "", "the original's tag")
	folio := flag.String("folio", "", "Folio's commit")
	exchangesPath := flag.String("exchanges", "", "proxy.go's log, with a mark before each test")
	failedSubtests := flag.Bool("failed-subtests", false, "print the first failed subtest of each failed test, and nothing else")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: go run summary.go [-tag T] [-folio C] [-exchanges proxy.jsonl] events.json")
		os.Exit(2)
	}
	tests, order, err := read(flag.Arg(0))
	check(err)
	if *failedSubtests {
		for _, name := range order {
			if t := tests[name]; t.result == "fail" && t.failing != "" && t.failing != name {
				fmt.Println(t.failing)
			}
		}
		return
	}
	var byMark map[string][]exchange
	if *exchangesPath != "" {
		byMark, err = readExchanges(*exchangesPath)
		check(err)
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
				msg := firstFailure(t.output)
				fmt.Printf("- %s%s: %s\n", name, where, msg)
				xs, ok := byMark[t.failing]
				if !ok {
					xs = byMark[name]
				}
				if x, which := failedExchange(xs, msg); x != nil {
					fmt.Printf("  - %s: `%s %s` sent %s, answered %d %s\n", which, x.Method, x.Path, quoted(x.Sent), x.Status, quoted(x.Answered))
				}
			}
		}
		fmt.Println()
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "summary:", err)
		os.Exit(1)
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
			t = &test{name: top}
			tests[top] = t
			order = append(order, top)
		}
		switch e.Action {
		case "output":
			t.output = append(t.output, strings.TrimRight(e.Output, "\n"))
		case "pass", "skip":
			if e.Test == top {
				t.result = e.Action
			}
		case "fail":
			if e.Test == top {
				t.result = e.Action
			}
			// The deepest subtest that failed first.
			if t.failing == "" || strings.HasPrefix(e.Test, t.failing+"/") {
				t.failing = e.Test
			}
		}
	}
	return tests, order, sc.Err()
}

// readExchanges returns the exchanges of proxy.go's log under the mark
// that precedes them. The proxy logs an exchange when it ends, but the
// script sends a mark only once the previous test has ended, so the
// order of the log is right.
func readExchanges(path string) (map[string][]exchange, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	byMark := map[string][]exchange{}
	mark := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var x exchange
		if json.Unmarshal(sc.Bytes(), &x) != nil {
			continue
		}
		if x.Method == "MARK" {
			mark = x.Path
			byMark[mark] = nil // a mark with no exchange still counts
			continue
		}
		byMark[mark] = append(byMark[mark], x)
	}
	return byMark, sc.Err()
}

// failedExchange is the exchange a failure is about, among the test's
// (or its failed subtest's, run alone), and what it is: for "expected
// status ... but got: N", the last one answered N; else the test's last
// one, which is the read that returned what was checked if the test
// stopped at the failure (testify's require), but may come later if it
// went on (assert). The deletes of a project, which tests defer to clean
// up, are passed over unless nothing else fits.
func failedExchange(xs []exchange, msg string) (*exchange, string) {
	want := 0
	if m := gotStatus.FindStringSubmatch(msg); m != nil {
		want, _ = strconv.Atoi(m[1])
	}
	for _, skipCleanup := range []bool{true, false} {
		for i := len(xs) - 1; i >= 0; i-- {
			x := &xs[i]
			if skipCleanup && x.Method == "DELETE" && projectDelete.MatchString(x.Path) {
				continue
			}
			if want == 0 {
				return x, "its last exchange"
			}
			if x.Status == want {
				return x, fmt.Sprintf("the exchange answered %d", want)
			}
		}
	}
	return nil, ""
}

var (
	gotStatus     = regexp.MustCompile(`but got: "(\d{3}) `)
	projectDelete = regexp.MustCompile(`^/v1/projects/[^/]+/delete$`)

	errorLine = regexp.MustCompile(`^\s*Error:\s*(.*)$`)
	// Lines that end testify's message: its other labelled fields.
	fieldLine = regexp.MustCompile(`^\s*(Error Trace|Test|Messages):`)
	// go test's own lines, and the line locations testify indents.
	noise = regexp.MustCompile(`^\s*(=== (RUN|PAUSE|CONT|NAME)|--- (FAIL|PASS|SKIP)|\S+\.go:\d+:\s*$)`)
	space = regexp.MustCompile(`\s+`)
)

// firstFailure is the first failure's message on one line: testify's
// Error field and its continuation lines, else a panic, else the last
// lines of output.
func firstFailure(lines []string) string {
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
		return clip(strings.Join(msg, " "))
	}
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "panic:") {
			return clip(strings.Join(lines[i:min(i+2, len(lines))], " "))
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
	return clip(strings.Join(tail, " "))
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
