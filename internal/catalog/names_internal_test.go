package catalog

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// nameRule accepts exactly the names the original server's pattern does.
func FuzzNameRule(f *testing.F) {
	for _, s := range []string{"", "a", "ab", "a1", "1a", "a-b_c", "A_", "é1", "ab\n", "a b", "a.b", "Z9"} {
		f.Add(s)
	}
	pattern := regexp.MustCompile(namePattern)
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := nameRule(name), pattern.MatchString(name); got != want {
			t.Fatalf("nameRule(%q) = %v, the pattern says %v", name, got, want)
		}
	})
}

// docs/operations.md gives the name rule users read: it must be the rule
// the server applies (issue 41, item 10: the docs' pattern lacked '-').
func TestDocumentedNameRule(t *testing.T) {
	b, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "| database and collection names |") {
			continue
		}
		_, rest, _ := strings.Cut(line, "`")
		pattern, _, _ := strings.Cut(rest, "`")
		if pattern != namePattern {
			t.Fatalf("docs/operations.md gives the name pattern %q; the server's is %q", pattern, namePattern)
		}
		return
	}
	t.Fatal("docs/operations.md has no row for the name rule")
}
