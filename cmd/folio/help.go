package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// isHelp tells whether a command's argument asks for its usage: every
// command and subcommand answers these with its usage and exit status 0.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

// suggest returns the candidate closest to word within two edits (typos,
// a swapped pair), or "" when none is that close.
func suggest(word string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := editDistance(word, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// didYouMean is suggest's phrase for an error message: "" or
// `: did you mean "x"?`.
func didYouMean(word string, candidates []string) string {
	if s := suggest(word, candidates); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and swaps of neighbours, each 1.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
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
	v, commit, date, modified := version, "", "", false
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
