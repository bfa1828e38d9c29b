// Command folio is the Folio document database server and its tools.
//
//	folio serve [flags]     run the server (see `folio serve -h`)
//	folio bench [flags]     generate load and measure it (see `folio bench -h`)
//	folio version           print the version
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
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "bench":
		err = bench(os.Args[2:])
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
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage: folio <command> [flags]

commands:
  serve     run the server (folio serve -h for its flags)
  bench     load a server and measure it (folio bench -h for its flags)
  version   print the version
`)
}
