package catalog

import (
	"regexp"
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
