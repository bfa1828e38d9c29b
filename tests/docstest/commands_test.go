package docstest

import (
	"reflect"
	"testing"
)

func TestCommands(t *testing.T) {
	tests := []struct {
		name  string
		block Block
		want  []Command
	}{
		{
			name:  "one a line, blank and comment lines left out",
			block: Block{Line: 10, Lang: "sh", Text: "# make it\nfolio db create shop\n\nfolio db list\n"},
			want:  []Command{{Line: 11, Text: "folio db create shop"}, {Line: 13, Text: "folio db list"}},
		},
		{
			name:  "a trailing comment kept apart; a # inside a word or quotes is no comment",
			block: Block{Line: 1, Lang: "sh", Text: "folio read shop users   # all of them\necho a#b '# c' \"# d\"\n"},
			want:  []Command{{Line: 1, Text: "folio read shop users", Comment: "all of them"}, {Line: 2, Text: `echo a#b '# c' "# d"`}},
		},
		{
			name:  "a quote open over several lines",
			block: Block{Line: 1, Lang: "sh", Text: "folio collection create shop users '{\n  \"primary_key\": [\"id\"]}'\nfolio db list\n"},
			want:  []Command{{Line: 1, Text: "folio collection create shop users '{\n  \"primary_key\": [\"id\"]}'"}, {Line: 3, Text: "folio db list"}},
		},
		{
			name:  "a line continued with a backslash, and an escaped quote",
			block: Block{Line: 1, Lang: "bash", Text: "printf '%s\\n' a \\\n  b | wc -l\necho \\'\n"},
			want:  []Command{{Line: 1, Text: "printf '%s\\n' a \\\n  b | wc -l"}, {Line: 3, Text: `echo \'`}},
		},
		{
			name:  "background jobs, and && that is not one",
			block: Block{Line: 1, Lang: "sh", Text: "folio serve &    # a server\nfolio db list && folio db list\n"},
			want: []Command{
				{Line: 1, Text: "folio serve", Comment: "a server", Background: true},
				{Line: 2, Text: "folio db list && folio db list"},
			},
		},
		{
			name:  "a heredoc, its body taken whole (quotes and # included)",
			block: Block{Line: 1, Lang: "sh", Text: "folio insert shop users <<'EOF'\n{\"id\": 1, \"n\": \"it's # 1\"}\nEOF\nfolio db list\n"},
			want: []Command{
				{Line: 1, Text: "folio insert shop users <<'EOF'\n{\"id\": 1, \"n\": \"it's # 1\"}\nEOF"},
				{Line: 4, Text: "folio db list"},
			},
		},
		{
			name:  "documented output and exit status in comments",
			block: Block{Line: 1, Lang: "sh", Text: "folio version        # → folio 0.1.0-dev\nfolio db describe x  # → exit 4: NOT_FOUND\nfolio db drop x # → exit 4\n"},
			want: []Command{
				{Line: 1, Text: "folio version", Comment: "→ folio 0.1.0-dev", Want: []string{"folio 0.1.0-dev"}},
				{Line: 2, Text: "folio db describe x", Comment: "→ exit 4: NOT_FOUND", Want: []string{"NOT_FOUND"}, WantExit: 4},
				{Line: 3, Text: "folio db drop x", Comment: "→ exit 4", WantExit: 4},
			},
		},
		{
			name:  "a $ prompt in a sh block is dropped",
			block: Block{Line: 1, Lang: "sh", Text: "$ folio db list\n"},
			want:  []Command{{Line: 1, Text: "folio db list"}},
		},
		{
			name:  "console: prompts, continuations and each command's output",
			block: Block{Line: 5, Lang: "console", Text: "$ folio db list\nDB\nshop\n$ folio insert shop users \\\n> '{\"id\": 1}'\nID\n1\n"},
			want: []Command{
				{Line: 5, Text: "folio db list", Want: []string{"DB", "shop"}},
				{Line: 8, Text: "folio insert shop users \\\n'{\"id\": 1}'", Want: []string{"ID", "1"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Commands(tt.block)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Commands:\n got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestCommandsRefusesAnUnendedCommand(t *testing.T) {
	for _, text := range []string{"echo '{\n", "echo a \\\n", "cat <<EOF\nbody\n"} {
		if cmds, err := Commands(Block{Line: 1, Lang: "sh", Text: text}); err == nil {
			t.Errorf("Commands(%q) = %#v, want an error: the command never ends", text, cmds)
		}
	}
}

func TestScripts(t *testing.T) {
	md := "# Title\n\n```sh\nfolio read shop users --table\n```\n\nIt prints:\n\n```\nID  NAME\n1   Ann\n```\n\n" +
		"## Layout\n\n```\ncmd/  the binary\n```\n\n```console\n$ folio db list\nshop\n```\n"
	got, err := Scripts(md)
	if err != nil {
		t.Fatal(err)
	}
	want := []Script{
		{Line: 4, Commands: []Command{{Line: 4, Text: "folio read shop users --table"}}, Output: []string{"ID  NAME", "1   Ann"}, OutputLine: 10},
		{Line: 21, Commands: []Command{{Line: 21, Text: "folio db list", Want: []string{"shop"}}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Scripts:\n got %#v\nwant %#v", got, want)
	}
}

func TestShows(t *testing.T) {
	tests := []struct {
		output  string
		want    []string
		missing string
	}{
		{output: "ID  NAME\n1   Ann\n2   Bob\n", want: []string{"ID NAME", "2  Bob"}},
		{output: "folio db describe: NOT_FOUND: database doesn't exist 'x'\n", want: []string{"NOT_FOUND"}},
		{output: "ID  NAME\n2   Bob\n1   Ann\n", want: []string{"1 Ann", "2 Bob"}, missing: "2 Bob"}, // out of order
		{output: "ID  NAME\n", want: []string{"ID NAME AGE"}, missing: "ID NAME AGE"},
		{output: "", want: []string{"", "  "}},
	}
	for _, tt := range tests {
		missing, ok := Shows(tt.output, tt.want)
		if ok != (tt.missing == "") || missing != tt.missing {
			t.Errorf("Shows(%q, %q) = %q, %v; want missing %q", tt.output, tt.want, missing, ok, tt.missing)
		}
	}
}
