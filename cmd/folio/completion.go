package main

import (
	"fmt"
	"slices"
	"strings"
)

// completion prints a shell's completion script: `source <(folio
// completion bash)`, or the same in zsh (through bashcompinit) or fish.
func completion(args []string, env cliEnv) int {
	if len(args) == 1 && isHelp(args[0]) {
		fmt.Fprintln(env.stdout, "usage: folio completion bash|zsh|fish\n\nprints the shell's completion script: source <(folio completion bash)")
		return exitOK
	}
	if len(args) != 1 {
		fmt.Fprintln(env.stderr, "usage: folio completion bash|zsh|fish")
		return exitUsage
	}
	top := topCommands()
	switch args[0] {
	case "bash", "zsh":
		var b strings.Builder
		if args[0] == "zsh" {
			b.WriteString("autoload -U +X bashcompinit && bashcompinit\n")
		}
		b.WriteString("_folio() {\n  local cur=${COMP_WORDS[COMP_CWORD]} words\n  case $COMP_CWORD in\n")
		fmt.Fprintf(&b, "    1) words=%q ;;\n", strings.Join(top, " "))
		b.WriteString("    2) case ${COMP_WORDS[1]} in\n")
		for _, g := range groups {
			fmt.Fprintf(&b, "         %s) words=%q ;;\n", g, strings.Join(subcommands(g), " "))
		}
		fmt.Fprintf(&b, "         help) words=%q ;;\n", strings.Join(top, " "))
		b.WriteString("         completion) words=\"bash zsh fish\" ;;\n")
		b.WriteString("       esac ;;\n  esac\n")
		b.WriteString("  if [[ $cur == -* ]]; then words=\"--url --json --table --client-id --client-secret --token --ca-cert --help\"; fi\n")
		b.WriteString("  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n}\ncomplete -o default -F _folio folio\n")
		fmt.Fprint(env.stdout, b.String())
	case "fish":
		for _, c := range top {
			fmt.Fprintf(env.stdout, "complete -c folio -f -n __fish_use_subcommand -a %s\n", c)
		}
		for _, g := range groups {
			fmt.Fprintf(env.stdout, "complete -c folio -f -n '__fish_seen_subcommand_from %s' -a '%s'\n", g, strings.Join(subcommands(g), " "))
		}
		for _, f := range []string{"url", "json", "table", "client-id", "client-secret", "token", "ca-cert"} {
			fmt.Fprintf(env.stdout, "complete -c folio -l %s\n", f)
		}
	default:
		fmt.Fprintf(env.stderr, "folio completion: no completion for %q: bash, zsh or fish\n", args[0])
		return exitUsage
	}
	return exitOK
}

// topCommands is every first word of a command.
func topCommands() []string {
	out := []string{"serve", "bench", "app", "namespace", "key", "backup", "restore", "check", "export", "import", "version", "help", "completion"}
	for _, c := range commands {
		first, _, _ := strings.Cut(c.name, " ")
		if !slices.Contains(out, first) {
			out = append(out, first)
		}
	}
	return out
}
