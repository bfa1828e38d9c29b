package console

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// The browser tests find a page's controls by their data-test names, and
// read those names from the list at the top of each page module that keeps
// one. A name used in a module but missing from its list is a control the
// tests cannot know of; this keeps the lists whole.
func TestPageHooksAreListed(t *testing.T) {
	used := regexp.MustCompile(`"data-test":\s*"([a-z0-9-]+)"`)
	checked := 0
	err := fs.WalkDir(assets, "assets/js/pages", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(assets, name)
		if err != nil {
			return err
		}
		list := leadingComment(string(b))
		if !strings.Contains(list, "data-test hooks") {
			return nil // its hooks are listed elsewhere (app.js)
		}
		checked++
		for _, m := range used.FindAllStringSubmatch(string(b), -1) {
			if !regexp.MustCompile(`(^|[^a-z0-9-])` + regexp.QuoteMeta(m[1]) + `($|[^a-z0-9-])`).MatchString(list) {
				t.Errorf("%s uses data-test=%q, which its list of hooks does not name", name, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 5 {
		t.Fatalf("%d page modules list their hooks, want at least the five of search, live, messages, operations and admin", checked)
	}
}

// leadingComment is the block of // lines a module starts with.
func leadingComment(src string) string {
	var b strings.Builder
	for _, line := range strings.Split(src, "\n") {
		s := strings.TrimSpace(line)
		if !strings.HasPrefix(s, "//") {
			break
		}
		b.WriteString(s[2:])
		b.WriteByte('\n')
	}
	return b.String()
}
