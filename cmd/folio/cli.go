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

// The command framework: every command of folio is a row of the commands
// table (commands.go), from which dispatch, `folio help`, each command's
// -h, suggestions for a mistyped name and shell completion are derived.

// Exit codes scripts can rely on (docs/cli.md).
const (
	exitOK          = 0
	exitAPI         = 1 // the server answered an error, or another failure
	exitUsage       = 2 // unknown command, bad flags, arguments or input
	exitUnreachable = 3 // the server could not be reached
	exitNotFound    = 4 // the server answered NOT_FOUND
)

// command is one command: a row of the table.
type command struct {
	name    string // "serve", "db create", "insert"
	args    string // the positional arguments, for the usage line
	summary string // its first sentence is the line `folio help` lists
	// details, if set, is more of the usage, printed after the summary.
	details func() string
	section section
	// minArgs and maxArgs bound the positional arguments (-1: any).
	minArgs, maxArgs int
	server           serverUse
	// tables: it prints tables unless --json is given, even into a pipe
	// (the administration commands), rather than only on a terminal.
	tables bool
	// setup declares the command's own flags and returns what runs it.
	setup func(fs *flag.FlagSet) runFunc
}

// runFunc runs a command with its positional arguments.
type runFunc func(s *invocation, args []string) error

// serverUse is how a command uses a server.
type serverUse int

const (
	noServer serverUse = iota // works on local files: no connection flags
	// needsServer: it takes the connection flags and is connected before
	// it runs.
	needsServer
	// mayUseServer: it takes the connection flags and connects when its
	// other flags ask for it (backup with --url, not with --data-dir).
	mayUseServer
)

// section is where `folio help` lists a command.
type section int

const (
	sectionServer section = iota
	sectionAdmin
	sectionData
)

// invocation is what a running command works with.
type invocation struct {
	ctx    context.Context
	c      *client.Client // set by connect
	url    string         // the server's, as given or defaulted
	stdin  io.Reader
	out    *printer
	stdinT bool // stdin is a terminal: documents are not read from it
	// stderr takes what is for the person running the command beside its
	// output; terminal says whether that person watches (progress).
	stderr   io.Writer
	terminal bool
	// connect opens c, once; defaulted says the URL is the default one.
	connect   func() error
	defaulted bool
}

// cliEnv is the process's surroundings, set by main and by tests.
type cliEnv struct {
	stdin            io.Reader
	stdout, stderr   io.Writer
	getenv           func(string) string
	stdoutIsTerminal bool
	stdinIsTerminal  bool
	// ctx, if set, ends the commands that run until stopped (serve,
	// events, subscribe) and interrupts the others; main makes one that
	// ends on SIGINT and SIGTERM.
	ctx context.Context
}

// usageError is bad input from the user: exit code 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// groups are the commands that take a subcommand, in the table's order.
func groups() []string {
	var out []string
	for _, c := range commands {
		if g, _, ok := strings.Cut(c.name, " "); ok && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
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

// topCommands is every first word of a command, help's included.
func topCommands() []string {
	var out []string
	for _, c := range commands {
		first, _, _ := strings.Cut(c.name, " ")
		if !slices.Contains(out, first) {
			out = append(out, first)
		}
	}
	return append(out, "help")
}

// findCommand finds the command args start with, and the arguments left.
func findCommand(args []string) (*command, []string, bool) {
	if len(args) == 0 {
		return nil, nil, false
	}
	name, rest := args[0], args[1:]
	if slices.Contains(groups(), name) {
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

// runCLI runs the command args name and returns the process's exit code.
func runCLI(args []string, env cliEnv) int {
	if len(args) == 0 {
		usage(env.stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		return help(args[1:], env)
	case "--version", "-version":
		args = []string{"version"}
	}
	cmd, rest, ok := findCommand(args)
	if !ok {
		return notACommand(args, env)
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

// help is `folio help [CMD]`: a command's usage, a group's, or the list
// of every command.
func help(args []string, env cliEnv) int {
	if cmd, _, ok := findCommand(args); ok {
		fs := newFlagSet(cmd, env)
		declareFlags(cmd, fs, env.getenv)
		fs.SetOutput(env.stdout)
		fs.Usage()
		return exitOK
	}
	if len(args) > 0 && slices.Contains(groups(), args[0]) {
		groupUsage(env.stdout, args[0])
		return exitOK
	}
	usage(env.stdout)
	return exitOK
}

// notACommand answers args that name no command: a group without one of
// its subcommands (or asked for its usage), or a mistyped name.
func notACommand(args []string, env cliEnv) int {
	if !slices.Contains(groups(), args[0]) {
		fmt.Fprintf(env.stderr, "folio: unknown command %q%s; folio help lists them\n", args[0], didYouMean(args[0], topCommands()))
		return exitUsage
	}
	subs := subcommands(args[0])
	switch {
	case len(args) > 1 && isHelp(args[1]):
		groupUsage(env.stdout, args[0])
		return exitOK
	case len(args) > 1:
		fmt.Fprintf(env.stderr, "folio %s: unknown subcommand %q%s: want %s\n", args[0], args[1], didYouMean(args[1], subs), strings.Join(subs, ", "))
	default:
		fmt.Fprintf(env.stderr, "folio %s: want a subcommand: %s\n", args[0], strings.Join(subs, ", "))
	}
	return exitUsage
}

// defaultURL is a local server's, when neither --url nor FOLIO_URL is
// given.
const defaultURL = "http://localhost:8081"

// connection are the flags every command that talks to a server takes.
type connection struct {
	url, clientID, clientSecret, token, caCert *string
	asJSON, table                              *bool
}

func newFlagSet(cmd *command, env cliEnv) *flag.FlagSet {
	fs := flag.NewFlagSet("folio "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "%s\n\n%s\n\n", strings.TrimSpace("usage: folio "+cmd.name+" [flags] "+cmd.args), cmd.summary)
		if cmd.details != nil {
			fmt.Fprintf(w, "%s\n\n", cmd.details())
		}
		fmt.Fprintln(w, "flags:")
		fs.PrintDefaults()
	}
	return fs
}

// declareFlags declares a command's flags, the connection's among them if
// it talks to a server, and returns what runs it.
func declareFlags(cmd *command, fs *flag.FlagSet, getenv func(string) string) (connection, runFunc) {
	var cn connection
	if cmd.server != noServer {
		cn = connectionFlags(fs, getenv)
	}
	return cn, cmd.setup(fs)
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
	cn, run := declareFlags(cmd, fs, env.getenv)
	fs.SetOutput(io.Discard) // a bad flag is reported once, below
	pos, err := parseInterleaved(fs, args)
	// A command without arguments takes a lone help word for -h, as the
	// groups do, rather than refusing it (or serving on it).
	if errors.Is(err, flag.ErrHelp) || err == nil && cmd.maxArgs == 0 && len(pos) == 1 && isHelp(pos[0]) {
		fs.SetOutput(env.stdout)
		fs.Usage()
		return nil
	}
	if err != nil {
		return usagef("%v (folio help %s)", err, cmd.name)
	}
	if len(pos) < cmd.minArgs || cmd.maxArgs >= 0 && len(pos) > cmd.maxArgs {
		if cmd.maxArgs == 0 {
			return usagef("takes no arguments, got %d (folio help %s)", len(pos), cmd.name)
		}
		return usagef("want arguments %s, got %d (folio help %s)", cmd.args, len(pos), cmd.name)
	}
	ctx := env.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	s := &invocation{ctx: ctx, stdin: env.stdin, stdinT: env.stdinIsTerminal, out: &printer{w: env.stdout, table: env.stdoutIsTerminal},
		stderr: env.stderr, terminal: env.stdoutIsTerminal, connect: func() error { return errors.New("this command has no server") }}
	if cmd.server != noServer {
		if err := s.useServer(cmd, fs, cn, env); err != nil {
			return err
		}
		defer func() {
			if s.c != nil {
				s.c.Close()
			}
		}()
	}
	err = run(s, pos)
	var apiErr *client.Error
	if s.defaulted && errors.As(err, &apiErr) {
		return fmt.Errorf("%w (from %s, the default server; --url or FOLIO_URL names another)", err, s.url)
	}
	return err
}

// useServer sets up the invocation of a command that talks to a server:
// its URL, how it prints, and its connection (opened now, or when the
// command asks for it).
func (s *invocation) useServer(cmd *command, fs *flag.FlagSet, cn connection, env cliEnv) error {
	// FOLIO_URL is read here rather than as the flag's default, so that
	// help shows the real default.
	if u := env.getenv("FOLIO_URL"); u != "" && !flagSet(fs, "url") {
		*cn.url = u
	}
	if *cn.asJSON && *cn.table {
		return usagef("--json and --table: choose one")
	}
	s.url = *cn.url
	s.out.table = *cn.table || !*cn.asJSON && (cmd.tables || env.stdoutIsTerminal)
	// A server reached by default may not be the one meant (another
	// program on 8081): say which it is, on a terminal and in errors.
	s.defaulted = !flagSet(fs, "url") && env.getenv("FOLIO_URL") == ""
	s.connect = func() error {
		if s.c != nil {
			return nil
		}
		c, err := cn.open()
		if err != nil {
			return err
		}
		if s.defaulted && env.stdoutIsTerminal {
			fmt.Fprintf(env.stderr, "folio: server %s (the default; --url or FOLIO_URL names another)\n", s.url)
		}
		s.c = c
		return nil
	}
	if cmd.server == needsServer {
		return s.connect()
	}
	return nil
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

// runMain runs a command as the process.
func runMain(args []string) int {
	ctx, stop := signalContext()
	defer stop()
	return runCLI(args, cliEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv,
		stdoutIsTerminal: isTerminal(os.Stdout), stdinIsTerminal: isTerminal(os.Stdin), ctx: ctx})
}
