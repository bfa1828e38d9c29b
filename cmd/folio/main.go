// Command folio is the Folio document database server and its tools.
//
//	folio serve [flags]     run the server (see `folio serve -h`)
//	folio bench [flags]     generate load and measure it (see `folio bench -h`)
//	folio app ...           manage applications of a running server
//	folio namespace ...     manage namespaces of a running server
//	folio key rotate        make a new key sign a running server's tokens
//	folio backup, restore   copy the embedded store while it serves, and back
//	folio check             verify a stopped embedded store's blocks offline
//	folio export            a database or collection as JSON lines (import: cli.go)
//	folio version           print the version
//	folio db|collection|insert|read|... the data commands (cli.go, docs/cli.md)
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// version is set at build time with -ldflags "-X main.version=..."
// (make release does); a plain build says devVersion, or the module's
// version when installed with go install.
var version = devVersion

const devVersion = "0.1.0-dev"

// commit and commitTime are set at build time too, by make release, for
// the builds where Go records no VCS information itself (a git worktree,
// whose .git is a file; a machine with -buildvcs=false).
// commitModified is "true" when the tree had uncommitted changes.
var commit, commitTime, commitModified string

func main() {
	if len(os.Args) >= 2 && isDataCommand(os.Args[1:]) {
		os.Exit(runCLIMain(os.Args[1:]))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs a command other than the data commands and returns the
// process's exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(args[1:])
	case "bench":
		err = bench(args[1:])
	case "app":
		err = appCommand(args[1:], stdout)
	case "namespace":
		err = namespaceCommand(args[1:], stdout)
	case "key":
		err = keyCommand(args[1:], stdout)
	case "backup":
		err = backupCommand(args[1:], stdout)
	case "restore":
		err = restoreCommand(args[1:], stdout)
	case "check":
		err = checkCommand(args[1:], stdout)
	case "export":
		err = exportCommand(args[1:], stdout)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, buildInfo())
	case "help", "-h", "-help", "--help":
		usage(stdout)
	default:
		fmt.Fprintf(stderr, "folio: unknown command %q%s; folio help lists them\n", args[0], didYouMean(args[0], topCommands()))
		return exitUsage
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp): // the flag set printed the usage
		return exitOK
	}
	fmt.Fprintln(stderr, "folio:", err)
	if h := hint(err); h != "" {
		fmt.Fprintln(stderr, h)
	}
	return exitCode(err) // 1, or the data commands' codes (docs/cli.md)
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: folio <command> [flags]

commands:
  serve     run the server (folio serve -h for its flags)
  bench     load a server and measure it (folio bench -h for its flags)
  app       create, list, rotate or delete applications (folio app create -h)
  namespace create, list or delete namespaces (folio namespace create -h)
  key       rotate the key that signs tokens (folio key rotate -h)
  backup    copy the store while it serves: --to DIR (folio backup -h)
  restore   put a backup into a new data directory (folio restore -h)
  check     verify every block of a stopped embedded store: --data-dir D (folio check -h)
  export    write a database or collection as JSON lines (folio export -h)
  version   print the version

The app, namespace, key, backup and export commands talk to a
running server: --url (or FOLIO_URL), and an admin's --client-id and
--client-secret (or FOLIO_CLIENT_ID and FOLIO_CLIENT_SECRET; the owner's
are in the owner file). backup --data-dir and restore work on a data
directory that no server has open.
`)
	fmt.Fprint(w, dataUsage())
}
