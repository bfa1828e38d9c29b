package catalog

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/apierror"
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

// A refused name's message starts as the original's, then names the name
// and gives the rule, or says it is reserved.
func TestNameMessages(t *testing.T) {
	rule := "a name starts with a letter, then has letters, digits, '_' or '-', 2 to 128 characters in all"
	for _, tc := range []struct{ name, want string }{
		{"1db", "invalid database name '1db': " + rule},
		{"a", "invalid database name 'a': " + rule},
		{"shop.2", "invalid database name 'shop.2': " + rule},
		{strings.Repeat("a", 129), "invalid database name '" + strings.Repeat("a", 64) + "…': " + rule},
		{"select", "invalid database name 'select': 'select' is a keyword of a client language, which clients generate code from"},
	} {
		err := CheckDatabaseName(tc.name)
		if e, ok := apierror.From(err); !ok || e.Code != apierror.InvalidArgument || e.Message != tc.want {
			t.Errorf("%q: %v, want %q", tc.name, err, tc.want)
		}
	}
	if err := CheckCollectionName("1x"); err == nil || !strings.HasPrefix(err.(*apierror.Error).Message, "invalid collection name '1x': a name starts") {
		t.Errorf("collection 1x: %v", err)
	}
}
