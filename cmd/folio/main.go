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
	"fmt"
	"os"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	if isDataCommand(os.Args[1:]) {
		os.Exit(runCLIMain(os.Args[1:]))
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "bench":
		err = bench(os.Args[2:])
	case "app":
		err = appCommand(os.Args[2:], os.Stdout)
	case "namespace":
		err = namespaceCommand(os.Args[2:], os.Stdout)
	case "key":
		err = keyCommand(os.Args[2:], os.Stdout)
	case "backup":
		err = backupCommand(os.Args[2:], os.Stdout)
	case "restore":
		err = restoreCommand(os.Args[2:], os.Stdout)
	case "check":
		err = checkCommand(os.Args[2:], os.Stdout)
	case "export":
		err = exportCommand(os.Args[2:], os.Stdout)
	case "version":
		fmt.Println("folio", version)
	case "help", "-h", "--help":
		usage()
	default:
		fmt.Fprintf(os.Stderr, "folio: unknown command %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "folio:", err)
		os.Exit(exitCode(err)) // 1, or the data commands' codes (docs/cli.md)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage: folio <command> [flags]

commands:
  serve     run the server (folio serve -h for its flags)
  bench     load a server and measure it (folio bench -h for its flags)
  app       create, list, rotate or delete applications (folio app create -h)
  namespace create or list namespaces (folio namespace create -h)
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
	fmt.Fprint(os.Stderr, dataUsage())
}
