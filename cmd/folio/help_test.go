package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/foliodb/folio/client"
)

// mainArgsEnv makes the test binary run main with its value's arguments
// (separated by US, 0x1f) instead of the tests: the real process, exit status
// and streams, without building the binary again.
const mainArgsEnv = "FOLIO_TEST_MAIN_ARGS"

// runFolio runs main in a child process with args and returns what it
// printed and its exit status.
func runFolio(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(append(os.Environ(), mainArgsEnv+"="+strings.Join(args, "\x1f")), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// Every command and subcommand answers -h and --help with its usage and
// exit status 0 (issue 41, item 9): before, `folio app --help` was an
// error, `backup --help` exited 1 and `db --help` 2.
func TestHelpOfEveryCommand(t *testing.T) {
	var cmds [][]string
	for _, g := range groups() {
		cmds = append(cmds, []string{g})
	}
	for _, c := range commands {
		cmds = append(cmds, strings.Fields(c.name))
	}
	for _, c := range cmds {
		for _, h := range []string{"-h", "--help"} {
			args := append(append([]string{}, c...), h)
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				stdout, stderr, code := runFolio(t, nil, args...)
				if code != 0 {
					t.Fatalf("exit status %d, want 0; stderr:\n%s", code, stderr)
				}
				if all := stdout + stderr; !strings.Contains(strings.ToLower(all), "usage") {
					t.Fatalf("no usage printed:\n%s", all)
				}
			})
		}
	}
	// help as a word: the top level and a group.
	for _, args := range [][]string{{"help"}, {"help", "db"}, {"db", "help"}, {"app", "help"}} {
		if stdout, stderr, code := runFolio(t, nil, args...); code != 0 || !strings.Contains(stdout, "usage") {
			t.Errorf("folio %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, stdout, stderr)
		}
	}
}

// A mistyped command or subcommand is refused with exit status 2 and the
// name it was probably meant to be.
func TestUnknownCommandSuggestsTheCloseOne(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		suggest string // "" for none
	}{
		{[]string{"sevre"}, `did you mean "serve"?`},
		{[]string{"inesrt"}, `did you mean "insert"?`},
		{[]string{"colection"}, `did you mean "collection"?`},
		{[]string{"db", "craete"}, `did you mean "create"?`},
		{[]string{"app", "lst"}, `did you mean "list"?`},
		{[]string{"namespace", "creat"}, `did you mean "create"?`},
		{[]string{"frobnicate"}, ""},
	} {
		_, stderr, code := runFolio(t, nil, tc.args...)
		if code != exitUsage {
			t.Errorf("folio %v: exit status %d, want %d", tc.args, code, exitUsage)
		}
		if tc.suggest != "" && !strings.Contains(stderr, tc.suggest) {
			t.Errorf("folio %v: stderr %q lacks %q", tc.args, stderr, tc.suggest)
		}
		if tc.suggest == "" && strings.Contains(stderr, "did you mean") {
			t.Errorf("folio %v: stderr %q suggests something", tc.args, stderr)
		}
	}
}

// version prints the version, and the commit and its date when the build
// recorded them.
func TestVersionOutput(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		stdout, _, code := runFolio(t, nil, args...)
		if code != 0 || !strings.HasPrefix(stdout, "folio "+version) {
			t.Errorf("folio %v: exit %d, %q", args, code, stdout)
		}
	}
}

// The hints for the two mistakes newcomers made most (issue 41, item 8):
// no credentials for a server with --auth, and http:// to a TLS port
// (told by a real handshake, so a plain server gets no such hint).
func TestHints(t *testing.T) {
	tlsServer := httptest.NewTLSServer(http.NotFoundHandler())
	defer tlsServer.Close()
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	noAnswer := func(u string) error { return &url.Error{Op: "Post", URL: u + "/v1/databases/list", Err: io.EOF} }
	for _, tc := range []struct {
		name string
		err  error
		want string // "" for no hint
	}{
		{"unauthenticated", &client.Error{Code: client.Unauthenticated, Message: "request unauthenticated"}, "--client-id"},
		{"another API error", &client.Error{Code: client.NotFound, Message: "database doesn't exist"}, ""},
		{"http to a TLS port", noAnswer("http://" + tlsServer.Listener.Addr().String()), "use https://" + tlsServer.Listener.Addr().String()},
		{"http to a plain port", noAnswer("http://" + plain.Listener.Addr().String()), ""},
		{"https already", noAnswer("https://" + tlsServer.Listener.Addr().String()), ""},
	} {
		got := hint(tc.err)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: hint %q, want %q", tc.name, got, tc.want)
		}
	}
}

// runInProcess runs the entry point with args, nothing reachable at the
// default URL's place, and returns what it printed and its exit code.
func runInProcess(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = runCLI(args, cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv: func(name string) string {
			if name == "FOLIO_URL" {
				return "http://127.0.0.1:1"
			}
			return ""
		}})
	return out.String(), errb.String(), code
}

// Help, usage and completion come from the one table: every command's
// `folio help CMD` is its -h, names it and lists its flags, `folio help`
// lists it, and the completion scripts complete its flags.
func TestHelpAndCompletionDerivedFromTheTable(t *testing.T) {
	top, _, _ := runInProcess("help")
	bash, _, _ := runInProcess("completion", "bash")
	fish, _, _ := runInProcess("completion", "fish")
	for _, c := range commands {
		words := strings.Fields(c.name)
		help, _, code := runInProcess(append([]string{"help"}, words...)...)
		dashH, _, _ := runInProcess(append(words, "-h")...)
		if code != exitOK || help != dashH {
			t.Errorf("folio help %s (exit %d) differs from its -h:\n%s\n%s", c.name, code, help, dashH)
		}
		if !strings.HasPrefix(help, "usage: folio "+c.name+" [flags]") {
			t.Errorf("folio help %s starts %q", c.name, help[:min(len(help), 60)])
		}
		if !strings.Contains(top, "\n  "+c.name+" ") {
			t.Errorf("folio help does not list %s", c.name)
		}
		flags := flagsOf(&c)
		if !strings.Contains(bash, fmt.Sprintf("%q) words=%q", c.name, strings.Join(flags, " "))) {
			t.Errorf("the bash completion lacks the flags of %s: %v", c.name, flags)
		}
		for _, f := range flags {
			if f != "--help" && !strings.Contains(help, "  -"+strings.TrimPrefix(f, "--")) {
				t.Errorf("folio help %s does not show %s", c.name, f)
			}
			if !strings.Contains(fish, "-l "+strings.TrimPrefix(f, "--")+"\n") {
				t.Errorf("the fish completion lacks %s of %s", f, c.name)
			}
		}
	}
	for _, flag := range []string{"--limit", "--to", "--print-config", "--name"} {
		if !strings.Contains(bash, flag) {
			t.Errorf("the bash completion lacks %s", flag)
		}
	}
}

// Usage errors exit 2 (docs/cli.md, "Exit codes") whichever command makes
// them: the administration, backup and bench commands answered 1 when
// they had a dispatch of their own.
func TestUsageErrorsOfEveryCommandExit2(t *testing.T) {
	for _, args := range [][]string{
		{"app"}, {"app", "rotate"}, {"app", "create", "--bogus"}, {"key"}, {"key", "foo"}, {"key", "rotate", "extra"},
		{"namespace", "delete"}, {"backup"}, {"backup", "--to", "x", "extra"}, {"restore", "--from", "x"},
		{"check"}, {"export"}, {"bench", "extra"}, {"serve", "extra"}, {"serve", "--bogus"}, {"completion"},
		{"db"}, {"db", "list", "x"}, {"read", "--limit", "x"},
	} {
		if _, stderr, code := runInProcess(args...); code != exitUsage || !strings.HasPrefix(stderr, "folio ") {
			t.Errorf("folio %s: exit %d, %q; want %d", strings.Join(args, " "), code, stderr, exitUsage)
		}
	}
}

// A command that takes no arguments answers a lone help word with its
// usage, as the groups do: `folio serve help` used to start a server.
func TestHelpWordOfACommandWithoutArguments(t *testing.T) {
	for _, args := range [][]string{{"serve", "help"}, {"backup", "help"}, {"check", "help"}, {"db", "list", "help"}, {"key", "rotate", "-help"}} {
		stdout, stderr, code := runInProcess(args...)
		if code != exitOK || !strings.HasPrefix(stdout, "usage: folio "+strings.Join(args[:len(args)-1], " ")) {
			t.Errorf("folio %s: exit %d, %q %q", strings.Join(args, " "), code, stdout, stderr)
		}
	}
	// A command that takes arguments takes "help" as one: a database may
	// be called so.
	if _, stderr, _ := runInProcess("db", "create", "help"); !strings.Contains(stderr, "connection refused") {
		t.Errorf("folio db create help: %q", stderr)
	}
}
