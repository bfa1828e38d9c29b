package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/client"
	"github.com/foliodb/folio/tests/backendtest"
)

// The import of documents through the CLI's entry point, on a terminal and
// into a pipe: refusals, inference shown and used, JSON lines and CSV
// typed by inference or by the collection's schema, bad input, standard
// input. $DIR is a copy of testdata/import, which progress files land
// beside.
var importScript = []cliStep{
	{args: "import $DIR/people.jsonl"},
	{args: "import --db shop --collection people $DIR/people.jsonl"},
	{args: "import --db shop --collection people --infer-schema --dry-run $DIR/people.jsonl"},
	{args: "collection list shop"},
	{args: "import --db shop --collection people --infer-schema $DIR/people.jsonl"},
	{args: "collection describe shop people"},
	{args: "read shop people"},
	{args: "import --db shop --collection people $DIR/people.jsonl"},
	{args: "import --db shop --collection people $DIR/more.csv"},
	{args: "read shop people '{\"id\":{\"$gte\":5}}'"},
	{args: "import --db shop --collection sales --infer-schema $DIR/sales.csv"},
	{args: "read shop sales --fields region,units,price,paid,day,note --sort region"},
	{args: "import --db shop --collection byemail --infer-schema --primary-key email --dry-run $DIR/people.jsonl"},
	{args: "import --db shop --collection people $DIR/bad.jsonl"},
	{args: "read shop people '{\"id\":{\"$gte\":7}}' --fields id,name"},
	{args: "import --db shop --collection people $DIR/bad.jsonl --skip-bad"},
	{args: "read shop people '{\"id\":{\"$gte\":7}}' --fields id,name"},
	{args: "import --db shop --collection people $DIR/badtype.csv"},
	{args: "import --db shop --collection people --batch 1 $DIR/unknown.jsonl"},
	{args: "read shop people '{\"id\":{\"$gte\":30}}' --fields id,name"},
	{args: "import --db shop --collection mixed --infer-schema $DIR/mixed.jsonl"},
	{args: "import --db shop --collection dup --infer-schema $DIR/dupid.jsonl"},
	{args: "import --db shop --collection dup --infer-schema --primary-key nope $DIR/dupid.jsonl"},
	{args: "import --db shop --collection people --format xml $DIR/people.jsonl"},
	{args: "import --db shop --collection people --dry-run $DIR/people.jsonl"},
	{args: "import --db shop --collection people -", stdin: "{\"id\":20,\"name\":\"Stdin\"}\n{\"id\":21,\"name\":\"Too\"}\n"},
	{args: "read shop people '{\"id\":{\"$gte\":20}}' --fields id,name"},
	{args: "import --db shop --collection people --state $DIR/x -", stdin: "{\"id\":22}\n"},
	{args: "help import"},
}

func TestCLIImportGolden(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		for _, mode := range []string{"table", "json"} {
			t.Run(mode, func(t *testing.T) {
				url := startCLINode(t, b)
				dir := copyDir(t, "testdata/import")
				var transcript bytes.Buffer
				for _, step := range importScript {
					args := splitArgs(strings.ReplaceAll(step.args, "$DIR", dir))
					stdout, stderr, code := runForTest(t, url, args, step.stdin, mode == "table", nil)
					stderr = importProgress.ReplaceAllString(stderr, "")
					fmt.Fprintf(&transcript, "$ folio %s\n%s", step.args, stdout)
					if stderr != "" {
						fmt.Fprintf(&transcript, "stderr: %s", stderr)
					}
					fmt.Fprintf(&transcript, "exit %d\n\n", code)
				}
				got := strings.ReplaceAll(transcript.String(), dir, "$DIR")
				got = varying.ReplaceAllString(got, `${1}${2}…`)
				golden(t, "cli_import_"+mode+".golden", got)
				// An import that ended leaves no progress, nor one that
				// stopped before its first batch was written; the one
				// whose second batch the server refused keeps its first.
				if left, _ := filepath.Glob(filepath.Join(dir, "*.folio-import*")); len(left) != 1 || filepath.Base(left[0]) != "unknown.jsonl.folio-import" {
					t.Errorf("progress files left: %v, want unknown.jsonl's alone", left)
				} else if st, err := loadState(left[0]); err != nil || st.Imported != 1 || st.Line != 1 {
					t.Errorf("unknown.jsonl's progress: %+v, %v; want 1 document, line 1", st, err)
				}
			})
		}
	})
}

// progressLine is what a terminal shows of an import's progress, once a
// second: how many there are depends on the machine's speed.
var importProgress = regexp.MustCompile("\r\x1b\\[K[^\r\n]*")

func copyDir(t *testing.T, from string) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// An import interrupted after some batches continues, run again, right
// after the last batch written: with a key the server generates, a record
// written twice or skipped would show as a document too many or missing.
// In CSV the lines are counted on from there: a bad line further on is
// named by its line in the file.
func TestImportResume(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		url := startCLINode(t, b)
		const n = 2500
		dir := t.TempDir()
		var jsonl, csv bytes.Buffer
		csv.WriteString("n,name,when\n")
		for i := range n {
			fmt.Fprintf(&jsonl, "{\"n\":%d,\"name\":\"doc %d\"}\n", i, i)
			if i == 1 { // a row over two lines
				fmt.Fprintf(&csv, "%d,\"row\n%d\",2025-01-01T00:00:00Z\n", i, i)
				continue
			}
			if i == 2000 {
				csv.WriteString("x,bad row,2025-01-01T00:00:00Z\n") // line 2003: after the header and the two-line row
			}
			fmt.Fprintf(&csv, "%d,row %d,2025-01-01T00:00:00Z\n", i, i)
		}
		for _, tc := range []struct{ file, data string }{{"docs.jsonl", jsonl.String()}, {"docs.csv", csv.String()}} {
			file := filepath.Join(dir, tc.file)
			if err := os.WriteFile(file, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			coll := strings.TrimPrefix(filepath.Ext(tc.file), ".")
			args := []string{"import", "--db", "shop", "--collection", coll, "--infer-schema", "--batch", "100", file}

			ctx, cancel := context.WithCancel(context.Background())
			ctx = context.WithValue(ctx, afterBatchKey{}, func(batches int) {
				if batches == 7 {
					cancel()
				}
			})
			_, stderr, code := runForTest(t, url, args, "", false, ctx)
			cancel()
			if code != exitAPI || !strings.Contains(stderr, "interrupted: 700 documents imported") {
				t.Fatalf("%s: the interrupted import: exit %d, %q", tc.file, code, stderr)
			}
			st, err := loadState(file + ".folio-import")
			if err != nil || st == nil || st.Imported != 700 {
				t.Fatalf("%s: progress after the interruption: %+v, %v", tc.file, st, err)
			}

			stdout, stderr, code := runForTest(t, url, args, "", false, nil)
			wantLine := 700
			if tc.file == "docs.csv" {
				wantLine = 702 // the header, and row 1's second line
			}
			if !strings.Contains(stderr, fmt.Sprintf("resuming after line %d (700 documents imported before", wantLine)) {
				t.Errorf("%s: the resumed import said %q", tc.file, stderr)
			}
			if tc.file == "docs.csv" {
				if code != exitUsage || !strings.Contains(stderr, "line 2003: field n: \"x\" is not an integer") {
					t.Fatalf("%s: the bad row: exit %d, %q", tc.file, code, stderr)
				}
				stdout, stderr, code = runForTest(t, url, append(args, "--skip-bad"), "", false, nil)
				if !strings.Contains(stderr, "resuming after line 2002 (2000 documents") || !strings.Contains(stderr, "skipped line 2003") {
					t.Errorf("%s: the import skipping the bad row said %q", tc.file, stderr)
				}
			}
			if code != exitOK || !strings.Contains(stdout, fmt.Sprintf(`"imported":%d`, n)) {
				t.Fatalf("%s: the resumed import: exit %d, %q %q", tc.file, code, stdout, stderr)
			}
			if _, err := os.Stat(file + ".folio-import"); !os.IsNotExist(err) {
				t.Errorf("%s: the progress file is left after the import: %v", tc.file, err)
			}
			seen := make([]int, n)
			c, err := client.Open(url, client.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for d, err := range client.Coll[struct{ N int }](c.Database("shop"), coll).Read(context.Background(), client.Filter{}) {
				if err != nil {
					t.Fatal(err)
				}
				seen[d.N]++
			}
			for i, times := range seen {
				if times != 1 {
					t.Errorf("%s: document %d is there %d times, want once", tc.file, i, times)
				}
			}
			c.Close()
		}
	})
}

// A progress file of another input, or of another target, is not applied;
// --restart starts over and replaces what was written.
func TestImportProgressOfAnotherImport(t *testing.T) {
	url := startCLINode(t, backendtest.All[0])
	dir := t.TempDir()
	file := filepath.Join(dir, "a.jsonl")
	os.WriteFile(file, []byte("{\"id\":1}\n{\"id\":2}\n"), 0o644)
	args := []string{"import", "--db", "shop", "--collection", "alpha", "--infer-schema", "--batch", "1", file}
	ctx, cancel := context.WithCancel(context.Background())
	ctx = context.WithValue(ctx, afterBatchKey{}, func(int) { cancel() })
	if _, stderr, code := runForTest(t, url, args, "", false, ctx); code != exitAPI {
		t.Fatalf("the interrupted import: exit %d, %s", code, stderr)
	}
	other := append([]string{}, args...)
	other[4] = "beta"
	if _, stderr, code := runForTest(t, url, other, "", false, nil); code != exitUsage || !strings.Contains(stderr, "records an import of another file or into another collection") {
		t.Errorf("into another collection: exit %d, %s", code, stderr)
	}
	os.WriteFile(file, []byte("{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n"), 0o644)
	if _, stderr, code := runForTest(t, url, args, "", false, nil); code != exitUsage || !strings.Contains(stderr, "another file") {
		t.Errorf("a changed file: exit %d, %s", code, stderr)
	}
	stdout, stderr, code := runForTest(t, url, append(args, "--restart"), "", false, nil)
	if code != exitOK || strings.Contains(stderr, "resuming") || !strings.Contains(stdout, `"imported":3`) {
		t.Errorf("--restart: exit %d, %q %q", code, stdout, stderr)
	}
}

// On a terminal the progress is one line, rewritten at most once a second
// and cleared at the end; into a pipe there is none.
func TestImportProgressLine(t *testing.T) {
	for _, terminal := range []bool{true, false} {
		var stderr bytes.Buffer
		imp := &docImport{s: &invocation{stderr: &stderr, terminal: terminal}, state: importState{Imported: 3000, Line: 3001}}
		imp.started = time.Now().Add(-2 * time.Second)
		imp.lastShown = imp.started
		imp.showProgress(false)
		imp.showProgress(false) // within the second: not shown again
		imp.showProgress(true)
		want := "^$"
		if terminal { // 3000 documents in 2 s and a little
			want = "^\r\x1b\\[K3000 documents, line 3001, 1[45]\\d\\d/s\r\x1b\\[K$"
		}
		if !regexp.MustCompile(want).MatchString(stderr.String()) {
			t.Errorf("terminal %v: %q, want %q", terminal, stderr.String(), want)
		}
	}
}
