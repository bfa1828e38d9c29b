// Package docstest reads the shell commands out of Folio's user
// documentation (README.md, docs/cli.md) with the output the documents
// show for them, so that a test (docs_test.go) can run them as a reader
// would, against a real `folio serve`, and fail where a document does not
// work as written.
//
// What counts as a command, and what as its documented output:
//
//   - A fenced block marked sh, bash or shell holds commands, one a line,
//     as a shell would split them: a line ending in `\`, a quote left open
//     (a JSON schema over several lines) or a heredoc (`<<EOF` up to the
//     line `EOF`) continues on the next line. Blank and comment lines are
//     not commands; a `$ ` prompt before a command is dropped.
//   - A block marked console holds `$ ` prompts: the command after each
//     (continued as above, with an optional `> ` prompt), and the lines up to
//     the next prompt as its output.
//   - A comment `# → text` after a command says its output shows text;
//     `# → exit N` says it exits with status N (by default it must exit 0),
//     and may be followed by text (`# → exit 4: NOT_FOUND`).
//   - An unmarked (or text, output) block right after a block of commands,
//     with no heading between them, is output one of those commands shows.
package docstest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Block is a fenced code block of a Markdown file.
type Block struct {
	Line int    // the line of its first content line, from 1
	Lang string // the first word of its info string: sh, console, ... or ""
	Text string // its content, each line ending in "\n"
	// AfterHeading says a heading lies between the previous block (or the
	// file's start) and this one.
	AfterHeading bool
}

// Blocks returns the fenced code blocks of a Markdown file, in order. A
// fence is a line starting with three backquotes; the block ends at the
// next line of backquotes alone.
func Blocks(markdown string) []Block {
	var (
		blocks  []Block
		cur     *Block
		text    strings.Builder
		heading bool
	)
	for i, line := range strings.Split(markdown, "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			lang, _, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "```")), " ")
			cur = &Block{Line: i + 2, Lang: lang, AfterHeading: heading}
			text.Reset()
		case cur == nil:
			heading = heading || strings.HasPrefix(line, "#")
		case strings.TrimSpace(line) == "```":
			cur.Text = text.String()
			blocks = append(blocks, *cur)
			cur, heading = nil, false
		default:
			text.WriteString(line + "\n")
		}
	}
	return blocks
}

// Shell tells whether a block holds commands.
func (b Block) Shell() bool {
	switch b.Lang {
	case "sh", "bash", "shell", "console":
		return true
	}
	return false
}

// output tells whether a block shows output (of the commands before it).
func (b Block) output() bool {
	switch b.Lang {
	case "", "text", "output":
		return true
	}
	return false
}

// Command is one command of a block.
type Command struct {
	Line int    // its first line in the file
	Text string // as written, without its prompt, trailing comment or `&`
	// Comment is the comment ending its last line, without the `#`.
	Comment string
	// Background says it ends with `&`: a job, as in an interactive shell
	// (the job numbers %1, %2, ... count these).
	Background bool
	// Want are the lines of output the document shows for it, and WantExit
	// the exit status (0 unless a `# → exit N` comment says otherwise).
	Want     []string
	WantExit int
}

// Script is the commands of one shell block, and the output the document
// shows right after the block (Output, at OutputLine), which one of its
// commands must print.
type Script struct {
	Line       int
	Commands   []Command
	Output     []string
	OutputLine int
}

// Scripts returns the shell blocks of a Markdown file as scripts, in
// order.
func Scripts(markdown string) ([]Script, error) {
	var scripts []Script
	blocks := Blocks(markdown)
	for i, b := range blocks {
		if !b.Shell() {
			continue
		}
		cmds, err := Commands(b)
		if err != nil {
			return nil, err
		}
		s := Script{Line: b.Line, Commands: cmds}
		if i+1 < len(blocks) && blocks[i+1].output() && !blocks[i+1].AfterHeading {
			s.Output, s.OutputLine = lines(blocks[i+1].Text), blocks[i+1].Line
		}
		scripts = append(scripts, s)
	}
	return scripts, nil
}

// Commands splits a shell block into its commands.
func Commands(b Block) ([]Command, error) {
	var (
		cmds    []Command
		pending strings.Builder // the lines of a command not yet complete
		start   int             // the line pending starts at
	)
	console := b.Lang == "console"
	for i, line := range lines(b.Text) {
		n := b.Line + i
		if pending.Len() == 0 {
			prompted := strings.HasPrefix(line, "$ ")
			if console && !prompted {
				// Output of the command before it.
				if len(cmds) > 0 {
					cmds[len(cmds)-1].Want = append(cmds[len(cmds)-1].Want, line)
				}
				continue
			}
			line = strings.TrimPrefix(line, "$ ")
			start = n
		} else if console {
			line = strings.TrimPrefix(line, "> ")
		}
		pending.WriteString(line + "\n")
		s := scan(pending.String())
		if !s.complete {
			continue
		}
		c, ok, err := command(pending.String(), s.comment, start)
		if err != nil {
			return nil, err
		}
		if ok {
			cmds = append(cmds, c)
		}
		pending.Reset()
	}
	if pending.Len() > 0 {
		return nil, fmt.Errorf("line %d: the command does not end (an open quote, a trailing \\ or a heredoc without its end)", start)
	}
	return cmds, nil
}

// wantComment is a `# → ...` comment: the exit status and output the
// command shows.
var wantComment = regexp.MustCompile(`^→\s*(?:exit (\d+)[:,]?\s*)?(.*)$`)

// command makes a Command of a complete command's text; ok is false for a
// line that holds only a comment or nothing.
func command(text string, comment, line int) (c Command, ok bool, err error) {
	c.Line = line
	if comment >= 0 {
		c.Comment = strings.TrimSpace(text[comment+1:])
		text = text[:comment]
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return Command{}, false, nil
	}
	if strings.HasSuffix(text, "&") && !strings.HasSuffix(text, "&&") {
		c.Background, text = true, strings.TrimSpace(strings.TrimSuffix(text, "&"))
	}
	c.Text = text
	if m := wantComment.FindStringSubmatch(c.Comment); m != nil {
		if m[1] != "" {
			if c.WantExit, err = strconv.Atoi(m[1]); err != nil {
				return Command{}, false, fmt.Errorf("line %d: %v", line, err)
			}
		}
		if m[2] != "" {
			c.Want = []string{m[2]}
		}
	}
	return c, true, nil
}

// scanned is what scan found in a command's text.
type scanned struct {
	// complete: no quote left open, no line continued with `\`, no heredoc
	// waiting for its end.
	complete bool
	// comment is where the comment of the last line starts (its `#`), or
	// -1.
	comment int
}

// scan reads text (whole lines) as a POSIX shell splits commands: quotes,
// backslashes, comments and heredocs. It does not follow quotes nested in
// a command substitution inside double quotes ("$(echo "x")").
func scan(text string) scanned {
	var (
		quote     byte     // the open quote, or 0
		heredocs  []string // delimiters of heredocs whose body is next
		comment   = -1
		continued bool // the last newline was escaped
		wordStart = true
	)
	for i := 0; i < len(text); i++ {
		c := text[i]
		continued = false
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
		case quote == '"':
			if c == '\\' {
				i++
			} else if c == '"' {
				quote = 0
			}
		case c == '\\':
			i++
			continued = i < len(text) && text[i] == '\n'
			if i >= len(text) {
				continued = true
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && wordStart:
			comment = i
			for i+1 < len(text) && text[i+1] != '\n' {
				i++
			}
		case c == '<' && strings.HasPrefix(text[i:], "<<") && !strings.HasPrefix(text[i:], "<<<"):
			delim, n := heredocDelimiter(text[i+2:])
			heredocs = append(heredocs, delim)
			i += 1 + n
		case c == '\n':
			if i+1 < len(text) {
				comment = -1 // a comment ends with its line
			}
			for len(heredocs) > 0 {
				end, found := heredocEnd(text[i+1:], heredocs[0])
				if !found {
					return scanned{complete: false, comment: -1}
				}
				i += end
				heredocs = heredocs[1:]
			}
		}
		wordStart = strings.IndexByte(" \t\n;|&()<>", c) >= 0
	}
	return scanned{complete: quote == 0 && !continued && len(heredocs) == 0, comment: comment}
}

// heredocDelimiter reads the word after `<<` (with its optional `-` and
// quotes), and returns it and how many bytes it took.
func heredocDelimiter(s string) (string, int) {
	n := 0
	if strings.HasPrefix(s, "-") {
		n++
	}
	for n < len(s) && (s[n] == ' ' || s[n] == '\t') {
		n++
	}
	end := n
	for end < len(s) && strings.IndexByte(" \t\n;|&<>", s[end]) < 0 {
		end++
	}
	return strings.Trim(s[n:end], `'"`), end
}

// heredocEnd finds the line that is delim alone (leading tabs allowed, as
// with `<<-`) in s, the text after a newline, and returns the offset of
// that line's newline.
func heredocEnd(s, delim string) (int, bool) {
	off := 0
	for off < len(s) {
		line, rest, more := strings.Cut(s[off:], "\n")
		if strings.TrimLeft(line, "\t") == delim {
			if !more {
				return len(s), true
			}
			return off + len(line) + 1, true
		}
		if !more {
			break
		}
		off = len(s) - len(rest)
	}
	return 0, false
}

// lines splits text into its lines, without their "\n".
func lines(text string) []string {
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// Normalize is a line as output is compared loosely: spaces collapsed and
// trimmed, so that a table's alignment may differ.
func Normalize(line string) string { return strings.Join(strings.Fields(line), " ") }

// Shows tells whether output holds the lines want, in order (each compared
// after Normalize, as a part of an output line), and if not, the first
// line it misses.
func Shows(output string, want []string) (missing string, ok bool) {
	got := lines(output)
	j := 0
	for _, w := range want {
		w = Normalize(w)
		if w == "" {
			continue
		}
		for j < len(got) && !strings.Contains(Normalize(got[j]), w) {
			j++
		}
		if j == len(got) {
			return w, false
		}
		j++
	}
	return "", true
}
