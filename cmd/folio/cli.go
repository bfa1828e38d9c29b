package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/foliodb/folio/client"
)

// The data commands: databases, collections, documents, search, events
// and messages of a running server, through the client package. Each is a
// row of commands; runCLI is their entry point (docs/cli.md).

// Exit codes scripts can rely on (docs/cli.md).
const (
	exitOK          = 0
	exitAPI         = 1 // the server answered an error, or another failure
	exitUsage       = 2 // unknown command, bad flags, arguments or input
	exitUnreachable = 3 // the server could not be reached
	exitNotFound    = 4 // the server answered NOT_FOUND
)

// command is one data command.
type command struct {
	name    string // "db create", "insert"
	args    string // the positional arguments, for the usage line
	summary string
	// minArgs and maxArgs bound the positional arguments (-1: any).
	minArgs, maxArgs int
	// setup declares the command's own flags and returns what runs it.
	setup func(fs *flag.FlagSet) func(s *invocation, args []string) error
}

// invocation is what a running command works with.
type invocation struct {
	ctx    context.Context
	c      *client.Client
	url    string // the server's, as given or defaulted
	stdin  io.Reader
	out    *printer
	stdinT bool // stdin is a terminal: documents are not read from it
	// stderr takes what is for the person running the command beside its
	// output; terminal says whether that person watches (progress).
	stderr   io.Writer
	terminal bool
}

// cliEnv is the process's surroundings, set by main and by tests.
type cliEnv struct {
	stdin            io.Reader
	stdout, stderr   io.Writer
	getenv           func(string) string
	stdoutIsTerminal bool
	stdinIsTerminal  bool
	// ctx, if set, ends follow commands (events, subscribe) when done;
	// main makes one that ends on SIGINT and SIGTERM.
	ctx context.Context
}

// usageError is bad input from the user: exit code 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// groups are the commands that take a subcommand.
var groups = []string{"db", "collection"}

// findCommand finds the command args start with, and the arguments left.
func findCommand(args []string) (*command, []string, bool) {
	if len(args) == 0 {
		return nil, nil, false
	}
	name, rest := args[0], args[1:]
	if slices.Contains(groups, name) {
		if len(rest) == 0 {
			return nil, nil, false
		}
		name, rest = name+" "+rest[0], rest[1:]
	}
	for i := range commands {
		if commands[i].name == name {
			return &commands[i], rest, true
		}
	}
	return nil, nil, false
}

// isDataCommand tells main whether args name a command of this file (or
// a group of them, or --version, or help of one).
func isDataCommand(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "--version", "completion":
		return true
	case "help":
		return len(args) > 1 && isDataCommand(args[1:])
	}
	if slices.Contains(groups, args[0]) {
		return true
	}
	_, _, ok := findCommand(args)
	return ok
}

// runCLI runs a data command and returns the process's exit code.
func runCLI(args []string, env cliEnv) int {
	switch args[0] {
	case "--version":
		fmt.Fprintln(env.stdout, buildInfo())
		return exitOK
	case "completion":
		return completion(args[1:], env)
	case "help":
		cmd, _, ok := findCommand(args[1:])
		if !ok {
			groupUsage(env.stdout, args[1], subcommands(args[1]), "folio help "+args[1]+" SUBCOMMAND for each")
			return exitOK
		}
		fs := newFlagSet(cmd, env)
		connectionFlags(fs, env.getenv)
		cmd.setup(fs)
		fs.SetOutput(env.stdout)
		fs.Usage()
		return exitOK
	}
	cmd, rest, ok := findCommand(args)
	if !ok { // a group, without one of its subcommands
		subs := subcommands(args[0])
		switch {
		case len(args) > 1 && isHelp(args[1]):
			groupUsage(env.stdout, args[0], subs, "folio help "+args[0]+" SUBCOMMAND for each")
			return exitOK
		case len(args) > 1:
			fmt.Fprintf(env.stderr, "folio %s: unknown subcommand %q%s: want %s\n", args[0], args[1], didYouMean(args[1], subs), strings.Join(subs, ", "))
		default:
			fmt.Fprintf(env.stderr, "folio %s: want a subcommand: %s\n", args[0], strings.Join(subs, ", "))
		}
		return exitUsage
	}
	err := runCommand(cmd, rest, env)
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(env.stderr, "folio %s: %v\n", cmd.name, err)
	if h := hint(err); h != "" {
		fmt.Fprintln(env.stderr, h)
	}
	return exitCode(err)
}

// subcommands lists a group's commands.
func subcommands(group string) []string {
	var out []string
	for _, c := range commands {
		if g, sub, ok := strings.Cut(c.name, " "); ok && g == group {
			out = append(out, sub)
		}
	}
	return out
}

// defaultURL is a local server's, when neither --url nor FOLIO_URL is
// given.
const defaultURL = "http://localhost:8081"

// connection are the flags every data command takes.
type connection struct {
	url, clientID, clientSecret, token, caCert *string
	asJSON, table                              *bool
}

func newFlagSet(cmd *command, env cliEnv) *flag.FlagSet {
	fs := flag.NewFlagSet("folio "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: folio %s [flags] %s\n\n%s\n\nflags:\n", cmd.name, cmd.args, cmd.summary)
		fs.PrintDefaults()
	}
	return fs
}

func connectionFlags(fs *flag.FlagSet, getenv func(string) string) connection {
	return connection{
		url:          fs.String("url", defaultURL, "the server's URL (env FOLIO_URL)"),
		clientID:     fs.String("client-id", getenv("FOLIO_CLIENT_ID"), "an application's id, with authentication on (env FOLIO_CLIENT_ID)"),
		clientSecret: fs.String("client-secret", getenv("FOLIO_CLIENT_SECRET"), "the application's secret (env FOLIO_CLIENT_SECRET)"),
		token:        fs.String("token", getenv("FOLIO_TOKEN"), "an access token, instead of an id and a secret (env FOLIO_TOKEN)"),
		caCert:       fs.String("ca-cert", getenv("FOLIO_CA_CERT"), "PEM certificate to trust for the server's TLS, beside the system's (env FOLIO_CA_CERT)"),
		asJSON:       fs.Bool("json", false, "print JSON lines (the default when the output is not a terminal)"),
		table:        fs.Bool("table", false, "print tables (the default on a terminal)"),
	}
}

func (cn connection) open() (*client.Client, error) {
	opts := client.Options{ApplicationID: *cn.clientID, ApplicationSecret: *cn.clientSecret}
	if *cn.token != "" {
		opts = client.Options{Token: *cn.token}
	}
	if *cn.caCert != "" {
		pem, err := os.ReadFile(*cn.caCert)
		if err != nil {
			return nil, usagef("--ca-cert: %v", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, usagef("--ca-cert %s: no PEM certificate in it", *cn.caCert)
		}
		opts.TLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	c, err := client.Open(*cn.url, opts)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	return c, nil
}

func runCommand(cmd *command, args []string, env cliEnv) error {
	fs := newFlagSet(cmd, env)
	cn := connectionFlags(fs, env.getenv)
	run := cmd.setup(fs)
	fs.SetOutput(io.Discard) // a bad flag is reported once, below
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(env.stdout)
		fs.Usage()
		return nil
	}
	if err != nil {
		return usagef("%v (folio help %s)", err, cmd.name)
	}
	// FOLIO_URL is read here rather than as the flag's default, so that
	// help shows the real default.
	if u := env.getenv("FOLIO_URL"); u != "" && !flagSet(fs, "url") {
		*cn.url = u
	}
	if len(pos) < cmd.minArgs || cmd.maxArgs >= 0 && len(pos) > cmd.maxArgs {
		return usagef("want arguments %s, got %d (folio help %s)", cmd.args, len(pos), cmd.name)
	}
	if *cn.asJSON && *cn.table {
		return usagef("--json and --table: choose one")
	}
	c, err := cn.open()
	if err != nil {
		return err
	}
	defer c.Close()
	ctx := env.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	// A server reached by default may not be the one meant (another
	// program on 8081): say which it is, on a terminal and in errors.
	defaulted := !flagSet(fs, "url") && env.getenv("FOLIO_URL") == ""
	if defaulted && env.stdoutIsTerminal {
		fmt.Fprintf(env.stderr, "folio: server %s (the default; --url or FOLIO_URL names another)\n", *cn.url)
	}
	asTable := *cn.table || env.stdoutIsTerminal && !*cn.asJSON
	s := &invocation{ctx: ctx, c: c, url: *cn.url, stdin: env.stdin, stdinT: env.stdinIsTerminal, out: &printer{w: env.stdout, table: asTable},
		stderr: env.stderr, terminal: env.stdoutIsTerminal}
	err = run(s, pos)
	var apiErr *client.Error
	if defaulted && errors.As(err, &apiErr) {
		return fmt.Errorf("%w (from %s, the default server; --url or FOLIO_URL names another)", err, *cn.url)
	}
	return err
}

// flagSet tells whether the flag name was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// parseInterleaved parses flags given before, between or after the
// positional arguments (`folio read shop users '{}' --limit 5`), and
// returns the positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// exitCode is the exit code of a command's error.
func exitCode(err error) int {
	var usage usageError
	var apiErr *client.Error
	// A request that got no answer (refused, unresolved, TLS refused) is
	// a *url.Error; a server's own listen error is not, and stays 1.
	var reqErr *url.Error
	switch {
	case errors.As(err, &usage):
		return exitUsage
	case errors.As(err, &apiErr):
		if apiErr.Code == client.NotFound {
			return exitNotFound
		}
		return exitAPI
	case errors.As(err, &reqErr):
		return exitUnreachable
	}
	return exitAPI
}

// signalContext ends when the process is asked to stop.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// isTerminal tells whether f is a terminal (a character device).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// runCLIMain runs a data command as the process.
func runCLIMain(args []string) int {
	ctx, stop := signalContext()
	defer stop()
	return runCLI(args, cliEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv,
		stdoutIsTerminal: isTerminal(os.Stdout), stdinIsTerminal: isTerminal(os.Stdin), ctx: ctx})
}

// dataUsage lists the data commands for `folio help`.
func dataUsage() string {
	var b strings.Builder
	b.WriteString("\ndata commands (folio help CMD for each; docs/cli.md):\n")
	for _, c := range commands {
		summary, _, _ := strings.Cut(c.summary, ". ")
		fmt.Fprintf(&b, "  %-20s %s\n", c.name, strings.TrimSuffix(summary, "."))
	}
	b.WriteString("  completion           print a shell's completion script (bash, zsh, fish)\n")
	b.WriteString("\nThey talk to a running server: --url or FOLIO_URL (default http://localhost:8081).\nOn a terminal they print tables; with --json, or into a pipe, JSON lines.\n")
	return b.String()
}
