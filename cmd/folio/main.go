// Command folio is the Folio document database server and its tools.
//
//	folio serve [flags]     run the server (see `folio serve -h`)
//	folio bench [flags]     generate load and measure it (see `folio bench -h`)
//	folio app ...           manage applications of a running server
//	folio namespace ...     manage namespaces of a running server
//	folio key rotate        make a new key sign a running server's tokens
//	folio backup, restore   copy the embedded store while it serves, and back
//	folio check             verify a stopped embedded store's blocks offline
//	folio export, import    a database or collection as JSON lines, and back
//	folio version           print the version
//	folio db|collection|insert|read|... the data commands (docs/cli.md)
//
// Every command is a row of one table (commands.go); cli.go runs them.
package main

import "os"

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
	os.Exit(runMain(os.Args[1:]))
}
