package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// completion prints a shell's completion script: `source <(folio
// completion bash)`, or the same in zsh (through bashcompinit) or fish.
// It completes the commands, the groups' subcommands and each command's
// flags, all from the table.
func completion(s *invocation, args []string) error {
	switch args[0] {
	case "bash", "zsh":
		return bashCompletion(s.out.w, args[0] == "zsh")
	case "fish":
		return fishCompletion(s.out.w)
	}
	return usagef("no completion for %q: bash, zsh or fish", args[0])
}

func bashCompletion(w io.Writer, zsh bool) error {
	var b strings.Builder
	if zsh {
		b.WriteString("autoload -U +X bashcompinit && bashcompinit\n")
	}
	top := strings.Join(topCommands(), " ")
	b.WriteString("_folio() {\n  local cur=${COMP_WORDS[COMP_CWORD]} words\n  case $COMP_CWORD in\n")
	fmt.Fprintf(&b, "    1) words=%q ;;\n", top)
	b.WriteString("    2) case ${COMP_WORDS[1]} in\n")
	for _, g := range groups() {
		fmt.Fprintf(&b, "         %s) words=%q ;;\n", g, strings.Join(subcommands(g), " "))
	}
	fmt.Fprintf(&b, "         help) words=%q ;;\n", top)
	b.WriteString("         completion) words=\"bash zsh fish\" ;;\n")
	b.WriteString("       esac ;;\n  esac\n")
	// A flag completes from the flags of the command the words name.
	b.WriteString("  if [[ $cur == -* ]]; then\n    local name=${COMP_WORDS[1]}\n    case $name in\n")
	fmt.Fprintf(&b, "      %s) name=\"$name ${COMP_WORDS[2]}\" ;;\n", strings.Join(groups(), "|"))
	b.WriteString("    esac\n    case $name in\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "      %q) words=%q ;;\n", c.name, strings.Join(flagsOf(&c), " "))
	}
	b.WriteString("    esac\n  fi\n")
	b.WriteString("  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n}\ncomplete -o default -F _folio folio\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func fishCompletion(w io.Writer) error {
	var b strings.Builder
	for _, c := range topCommands() {
		fmt.Fprintf(&b, "complete -c folio -f -n __fish_use_subcommand -a %s\n", c)
	}
	for _, g := range groups() {
		fmt.Fprintf(&b, "complete -c folio -f -n '__fish_seen_subcommand_from %s' -a '%s'\n", g, strings.Join(subcommands(g), " "))
	}
	for _, c := range commands {
		cond := "__fish_seen_subcommand_from " + c.name
		if g, sub, ok := strings.Cut(c.name, " "); ok {
			cond = "__fish_seen_subcommand_from " + g + "; and __fish_seen_subcommand_from " + sub
		}
		for _, f := range flagsOf(&c) {
			fmt.Fprintf(&b, "complete -c folio -n '%s' -l %s\n", cond, strings.TrimPrefix(f, "--"))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// flagsOf lists a command's flags, as --name, --help last.
func flagsOf(c *command) []string {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	declareFlags(c, fs, func(string) string { return "" })
	var out []string
	fs.VisitAll(func(f *flag.Flag) { out = append(out, "--"+f.Name) })
	return append(out, "--help")
}
