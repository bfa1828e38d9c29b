package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
)

var update = flag.Bool("update", false, "rewrite the CLI tests' golden files in testdata")

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(mainArgsEnv); ok { // the test binary run as folio itself
		os.Args = append([]string{"folio"}, strings.Split(args, "\x1f")...)
		main()
		os.Exit(0)
	}
	os.Exit(backendtest.Main(m))
}

// cliStep is one command of a CLI test's script.
type cliStep struct {
	args  string // split on spaces; a '…' quoted part is one argument
	stdin string
}

// The script a new user might run, through the CLI's entry point, on a
// terminal (tables) and into a pipe (JSON lines), the latter also with a
// grpc:// URL. Its transcript (the commands, what each printed, and each
// exit code) must equal the golden file, on every backend; over gRPC, the
// same as over HTTP.
var cliScript = []cliStep{
	{args: "db create shop"},
	{args: "db create shop"},
	{args: "db create 1shop"},
	{args: "db list"},
	{args: "collection create shop users", stdin: `{"properties":{"id":{"type":"integer"},"name":{"type":"string"},"age":{"type":"integer"},"city":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},"note":{"type":"string"},"address":{"type":"object","properties":{"street":{"type":"string"},"zip":{"type":"string"}}}},"primary_key":["id"]}`},
	{args: "collection create shop feed testdata/feed.schema.json"},
	{args: "collection create shop bad '{\"properties\":{\"x\":{\"type\":\"nonsense\"}}}'"},
	// A typo in a schema's top-level member is refused, not kept (issue 41).
	{args: `collection create shop typo '{"properties":{"email":{"type":"string"}},"primary_keys":["email"]}'`},
	{args: "collection list shop"},
	{args: "collection describe shop users"},
	{args: `insert shop users '{"id":1,"name":"Ann","age":40,"city":"Paris","tags":["a","b"]}' '{"id":2,"name":"Bob","age":25,"city":"Oslo"}'`},
	{args: "insert shop users", stdin: "{\"id\":3,\"name\":\"Cy\",\"age\":33,\"city\":\"Paris\"}\n{\"id\":4,\"name\":\"Dee\",\"age\":28,\"city\":\"Lyon\",\"note\":\"a long note that goes on and on beyond what a table's cell may show, so it is cut\"}\n"},
	{args: "insert shop users --file testdata/users.json"},
	{args: `insert shop users '{"id":1,"name":"Ann again"}'`},
	{args: `insert shop users '{"id":7,"nmae":"Eve"}'`},
	{args: "insert shop users", stdin: "{\"id\":9}\nnot json\n"},
	{args: "read shop users"},
	{args: `read shop users '{"age":{"$gt":30}}' --sort -age --fields name,age`},
	{args: "read shop users --limit 2 --skip 1"},
	{args: `read shop users '{"city":"paris"}' --ci --fields id,city`},
	{args: `read shop users '{"$or":[{"city":"Oslo"}]}'`},
	{args: `update shop users '{"name":"Ann"}' '{"$set":{"age":41},"$unset":["tags"]}'`},
	{args: `replace shop users '{"id":2,"name":"Bob","age":26,"city":"Bergen"}'`},
	{args: `delete shop users '{"id":{"$gte":5}}'`},
	{args: `read shop users '{"id":{"$lte":2}}'`},
	{args: "read shop nope"},
	{args: "read shop users '{bad'"},
	{args: `read shop users '{"age":"thirty"}'`},
	{args: "read shop"},
	{args: "read shop users --limit x"},
	{args: `search shop users paris --facet city,age --sort age --fields name,city`},
	{args: `search shop users --filter '{"age":{"$lt":30}}'`},
	{args: `aggregate shop users '{"n":{"$count":{}},"mean":{"$avg":"age"},"oldest":{"$max":"age"}}' --group-by city --sort -n,city`},
	{args: `aggregate shop users '{"n":{"$count":{}}}' '{"age":{"$gt":30}}'`},
	{args: `aggregate shop users '{"n":{"$median":"age"}}'`},
	{args: "db describe shop"},
	{args: `publish shop feed '{"level":"info","text":"hello"}' '{"level":"error","text":"disk full"}'`},
	{args: `publish shop users '{"text":"x"}'`},
	{args: "collection drop shop feed"},
	{args: "collection list shop"},
	{args: "db drop shop"},
	{args: "collection describe shop users"},
	{args: "help read"},
	{args: "read --help"},
}

func TestCLIGolden(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		for _, mode := range []string{"table", "json", "grpc"} {
			t.Run(mode, func(t *testing.T) {
				url, goldenMode := startCLINode(t, b), mode
				if mode == "grpc" {
					url, goldenMode = "grpc://"+strings.TrimPrefix(url, "http://"), "json"
				}
				var transcript bytes.Buffer
				for _, step := range cliScript {
					args := splitArgs(step.args)
					stdout, stderr, code := runForTest(t, url, args, step.stdin, mode == "table", nil)
					fmt.Fprintf(&transcript, "$ folio %s\n%s", step.args, stdout)
					if stderr != "" {
						fmt.Fprintf(&transcript, "stderr: %s", stderr)
					}
					fmt.Fprintf(&transcript, "exit %d\n\n", code)
				}
				golden(t, "cli_"+goldenMode+".golden", varying.ReplaceAllString(transcript.String(), `${1}${2}…`))
			})
		}
	})
}

// startCLINode runs a node on a fresh store of the backend.
func startCLINode(t *testing.T, b backendtest.Backend) string {
	t.Helper()
	n, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Store = b.Open(t)
		nc.Addr = "127.0.0.1:0"
		nc.ShutdownTimeout = 5 * time.Second
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return "http://" + n.Addr().String()
}

// runForTest runs the CLI's entry point with the server's URL in
// FOLIO_URL, and returns what it printed and its exit code.
func runForTest(t *testing.T, url string, args []string, stdin string, terminal bool, ctx context.Context) (string, string, int) {
	t.Helper()
	var stdout, stderr syncBuffer
	code := runCLIWith(args, url, stdin, terminal, ctx, &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

func runCLIWith(args []string, url, stdin string, terminal bool, ctx context.Context, stdout, stderr *syncBuffer) int {
	env := cliEnv{stdin: strings.NewReader(stdin), stdout: stdout, stderr: stderr, stdoutIsTerminal: terminal, stdinIsTerminal: stdin == "" && terminal, ctx: ctx,
		getenv: func(name string) string {
			if name == "FOLIO_URL" {
				return url
			}
			return ""
		}}
	return runCLI(args, env)
}

// execute runs a command line as the entry point does, with out as its
// standard output, and returns the command's error rather than an exit
// code.
func execute(args []string, out io.Writer) error {
	return executeWith(args, nil, out)
}

// executeWith is execute with stdin as the standard input.
func executeWith(args []string, stdin io.Reader, out io.Writer) error {
	cmd, rest, ok := findCommand(args)
	if !ok {
		return fmt.Errorf("no command %q", args)
	}
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	return runCommand(cmd, rest, cliEnv{stdin: stdin, stdout: out, stderr: io.Discard, getenv: func(string) string { return "" }})
}

// splitArgs splits a command line on spaces, keeping '…' together.
func splitArgs(s string) []string {
	var out []string
	for len(s) > 0 {
		s = strings.TrimLeft(s, " ")
		if s == "" {
			break
		}
		if s[0] == '\'' {
			end := strings.Index(s[1:], "'")
			out = append(out, s[1:1+end])
			s = s[2+end:]
			continue
		}
		word, rest, _ := strings.Cut(s, " ")
		out = append(out, word)
		s = rest
	}
	return out
}

// golden compares got with testdata/name, or writes it there with
// -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		goldenMu.Lock()
		defer goldenMu.Unlock()
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("the output differs from %s (-want +got):\n%s", path, lineDiff(string(want), got))
	}
}

var goldenMu sync.Mutex

// lineDiff shows the lines that differ, with their numbers.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "%d:\n- %s\n+ %s\n", i+1, wl, gl)
		}
	}
	return b.String()
}

// The follow commands print what happens until they are stopped, then
// exit 0: events of inserts, updates and deletes, and the messages a
// filter selects.
func TestCLIFollow(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		for _, mode := range []string{"table", "json"} {
			t.Run(mode, func(t *testing.T) {
				url := startCLINode(t, b)
				run := func(args string, stdin string) {
					t.Helper()
					if _, stderr, code := runForTest(t, url, splitArgs(args), stdin, false, nil); code != 0 {
						t.Fatalf("folio %s: exit %d, %s", args, code, stderr)
					}
				}
				run("db create shop", "")
				run("collection create shop users", `{"properties":{"id":{"type":"string"},"name":{"type":"string"}},"primary_key":["id"]}`)
				run("collection create shop feed", `{"collection_type":"messages","properties":{"level":{"type":"string"},"text":{"type":"string"}}}`)

				follow := func(args string, probe func(i int), act func()) string {
					t.Helper()
					ctx, cancel := context.WithCancel(context.Background())
					var stdout, stderr syncBuffer
					done := make(chan int)
					go func() { done <- runCLIWith(splitArgs(args), url, "", mode == "table", ctx, &stdout, &stderr) }()
					for i := 0; !strings.Contains(stdout.String(), "probe"); i++ {
						if i == 100 {
							t.Fatalf("folio %s never started: %s", args, stderr.String())
						}
						probe(i)
						time.Sleep(50 * time.Millisecond)
					}
					act()
					for i := 0; !strings.Contains(stdout.String(), "the end"); i++ {
						if i == 300 {
							t.Fatalf("folio %s printed %q", args, stdout.String())
						}
						time.Sleep(50 * time.Millisecond)
					}
					cancel()
					if code := <-done; code != 0 {
						t.Fatalf("folio %s stopped with exit %d: %s", args, code, stderr.String())
					}
					return withoutProbes(stdout.String())
				}
				events := follow("events shop users", func(i int) {
					run(fmt.Sprintf(`insert shop users '{"id":"probe%02d"}'`, i), "")
				}, func() {
					run(`insert shop users '{"id":"a","name":"Ann"}' '{"id":"b","name":"Bob"}'`, "")
					run(`update shop users '{"id":"a"}' '{"$set":{"name":"Anna"}}'`, "")
					run(`delete shop users '{"id":"b"}'`, "")
					run(`replace shop users '{"id":"z","name":"the end"}'`, "")
				})
				// Filtered: Ann never matches, Bob leaves, Anna comes in.
				filtered := follow(`events shop users --filter '{"name":{"$gte":"B"}}'`, func(i int) {
					run(fmt.Sprintf(`insert shop users '{"id":"probe-f%02d","name":"Bob"}'`, i), "")
				}, func() {
					run(`insert shop users '{"id":"c","name":"Al"}' '{"id":"d","name":"Bob"}'`, "")
					run(`update shop users '{"id":"d"}' '{"$set":{"name":"Al"}}'`, "")
					run(`update shop users '{"id":"c"}' '{"$set":{"name":"Cy"}}'`, "")
					run(`delete shop users '{"id":"d"}'`, "")
					run(`delete shop users '{"id":"c"}'`, "")
					run(`replace shop users '{"id":"z","name":"the end"}'`, "")
				})
				messages := follow(`subscribe shop feed '{"level":"error"}'`, func(i int) {
					run(fmt.Sprintf(`publish shop feed '{"level":"error","text":"probe%02d"}'`, i), "")
				}, func() {
					run(`publish shop feed '{"level":"info","text":"fine"}' '{"level":"error","text":"disk full"}'`, "")
					run("publish shop feed", `{"level":"error","text":"the end"}`)
				})
				golden(t, "follow_"+mode+".golden", events+"\n"+filtered+"\n"+messages)
			})
		}
	})
}

// varying matches what changes from run to run and between backends:
// times, and the size of the change log (the backends' records differ).
var varying = regexp.MustCompile(`("(?:created_at|updated_at)":")[^"]+|("log":)\d+`)

// positions matches the positions and transaction ids a stream prints,
// which depend on the backend and on what was committed before.
var positions = regexp.MustCompile(`("(position|tx_id)":")[A-Za-z0-9_=+/-]+"|^[A-Za-z0-9_-]{10,}  `)

// withoutProbes drops the lines of the probes that waited for a stream
// to start, and hides positions.
func withoutProbes(out string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(out, "\n") {
		if line == "" || strings.Contains(line, "probe") {
			continue
		}
		b.WriteString(positions.ReplaceAllStringFunc(line, func(m string) string {
			if strings.HasPrefix(m, `"`) {
				return m[:strings.Index(m, `":"`)+3] + `…"`
			}
			return "…  "
		}))
	}
	return b.String()
}

// The codes and texts scripts rely on, beside the script's: a server
// that cannot be reached, --version, completion, groups without a
// subcommand, and credentials.
func TestCLIExitCodesAndExtras(t *testing.T) {
	var stdout, stderr syncBuffer
	if code := runCLIWith([]string{"db", "list", "--url", "http://127.0.0.1:1"}, "", "", false, nil, &stdout, &stderr); code != exitUnreachable {
		t.Fatalf("an unreachable server: exit %d, %s", code, stderr.String())
	}
	if code := runCLIWith([]string{"db", "list", "--url", "ftp://x"}, "", "", false, nil, &stdout, &stderr); code != exitUsage {
		t.Fatalf("a bad URL: exit %d", code)
	}
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"--version"}, 0, "folio " + version},
		{[]string{"db"}, exitUsage, ""},
		{[]string{"collection", "nope"}, exitUsage, ""},
		{[]string{"completion", "bash"}, 0, "complete -o default -F _folio folio"},
		{[]string{"completion", "fish"}, 0, "__fish_seen_subcommand_from collection"},
		{[]string{"completion", "tcsh"}, exitUsage, ""},
		{[]string{"help", "db"}, 0, "subcommands: create, drop, list, describe"},
		{[]string{"help", "insert"}, 0, "usage: folio insert [flags] DB COLLECTION [DOCUMENT...]"},
		{[]string{"insert", "shop", "users", "--json", "--table", "{}"}, exitUsage, ""},
		{[]string{"insert", "shop", "users", "--file", "nope.json"}, exitUsage, ""},
		{[]string{"insert", "shop", "users", "--file", "testdata/users.json", "{}"}, exitUsage, ""},
		{[]string{"update", "shop", "users", "{}", "[1]"}, exitUsage, ""},
	} {
		var stdout, stderr syncBuffer
		code := runCLIWith(tc.args, "http://127.0.0.1:1", "", true, nil, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String(), tc.out) {
			t.Errorf("folio %q: exit %d, printed %q %q; want exit %d and %q", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.out)
		}
	}
}

// With authentication on, the data commands take an application's
// credentials; without them they exit 1 with the server's refusal.
func TestCLIWithAuthentication(t *testing.T) {
	ownerFile := filepath.Join(t.TempDir(), "owner.json")
	n, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Store = backendtest.OpenPebble(t)
		nc.Addr = "127.0.0.1:0"
		nc.ShutdownTimeout = 5 * time.Second
		nc.Auth = true
		nc.OwnerFile = ownerFile
		nc.Tokens.HashCost = bcrypt.MinCost
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	var owner auth.OwnerCredentials
	raw, _ := os.ReadFile(ownerFile)
	json.Unmarshal(raw, &owner)
	url := "http://" + n.Addr().String()
	stdout, stderr, code := runForTest(t, url, []string{"db", "create", "shop", "--client-id", owner.ClientID, "--client-secret", owner.ClientSecret}, "", false, nil)
	if code != 0 || stdout != `{"db":"shop","status":"created"}`+"\n" {
		t.Fatalf("with credentials: exit %d, %q %q", code, stdout, stderr)
	}
	_, stderr, code = runForTest(t, url, []string{"db", "list"}, "", false, nil)
	if code != exitAPI || !strings.Contains(stderr, "UNAUTHENTICATED") {
		t.Fatalf("without credentials: exit %d, %q", code, stderr)
	}
}
