package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/foliodb/folio/internal/suggest"
)

// isHelp tells whether a command's argument asks for its usage: every
// command and subcommand answers these with its usage and exit status 0.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

// didYouMean is suggest.Closest's phrase for the CLI's error messages: ""
// or ` (did you mean "x"?)`.
func didYouMean(word string, candidates []string) string {
	if s := suggest.Closest(word, candidates); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// groupUsage prints the usage of a command that only has subcommands.
func groupUsage(w io.Writer, group string) {
	subs := subcommands(group)
	fmt.Fprintf(w, "usage: folio %s %s [flags]\n\nsubcommands: %s\nfolio help %s SUBCOMMAND for each\n",
		group, strings.Join(subs, "|"), strings.Join(subs, ", "), group)
}

// sections are the headings `folio help` lists the commands under, in
// their order.
var sections = []struct {
	section section
	heading string
}{
	{sectionServer, "commands (folio help CMD, or folio CMD -h, for each):"},
	{sectionAdmin, "administration of a running server, with an admin's credentials:"},
	{sectionData, "data commands (docs/cli.md):"},
}

// usage lists every command with the first sentence of its summary.
func usage(w io.Writer) {
	var b strings.Builder
	b.WriteString("usage: folio <command> [flags]\n")
	for _, sec := range sections {
		fmt.Fprintf(&b, "\n%s\n", sec.heading)
		for _, c := range commands {
			if c.section == sec.section {
				summary, _, _ := strings.Cut(c.summary, ". ")
				fmt.Fprintf(&b, "  %-20s %s\n", c.name, strings.TrimSuffix(summary, "."))
			}
		}
	}
	b.WriteString(`
The commands that talk to a running server take --url (or FOLIO_URL; default
http://localhost:8081) and, with authentication on, --client-id and
--client-secret (or FOLIO_CLIENT_ID and FOLIO_CLIENT_SECRET; the owner's are in
the owner file), or --token. On a terminal the data commands print tables; with
--json, or into a pipe, JSON lines. The administration commands print tables
unless --json is given.
`)
	fmt.Fprint(w, b.String())
}

// buildInfo describes this binary: the version set at build time (or
// the module's version when installed with go install), and the commit
// and its date that Go records when building from a checkout.
func buildInfo() string {
	v, commit, date, modified := version, commit, commitTime, commitModified == "true"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if version == devVersion && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				date = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	out := "folio " + v
	if commit != "" {
		if len(commit) > 12 {
			commit = commit[:12]
		}
		if modified {
			commit += "+changes"
		}
		out += " (commit " + commit
		if date != "" {
			out += ", " + date
		}
		out += ")"
	}
	return out
}
