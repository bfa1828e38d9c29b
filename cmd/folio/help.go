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
func groupUsage(w io.Writer, group string, subs []string, more string) {
	fmt.Fprintf(w, "usage: folio %s %s [flags]\n\nsubcommands: %s\n", group, strings.Join(subs, "|"), strings.Join(subs, ", "))
	if more != "" {
		fmt.Fprintln(w, more)
	}
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
