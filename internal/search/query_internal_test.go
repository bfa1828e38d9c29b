package search

import (
	"strings"
	"testing"
)

func TestSplitQuery(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want string // parts joined by |, phrases in quotes
		err  bool
	}{
		{"", "", false},
		{"*", "", false},
		{"  * ", "", false},
		{"fox", "fox", false},
		{"quick  brown\tfox", "quick|brown|fox", false},
		{`"brown fox"`, `"brown fox"`, false},
		{`quick "brown fox" jumps`, `quick|"brown fox"|jumps`, false},
		{`a"b c"d`, `a|"b c"|d`, false},
		{`""`, "", false},
		{`"  "`, "", false},
		{`"open`, "", true},
		{`x "open`, "", true},
	} {
		parts, err := splitQuery(tc.q)
		if (err != nil) != tc.err {
			t.Errorf("splitQuery(%q): error %v, want error %v", tc.q, err, tc.err)
			continue
		}
		var got []string
		for _, p := range parts {
			if p.phrase {
				got = append(got, `"`+p.text+`"`)
			} else {
				got = append(got, p.text)
			}
		}
		if strings.Join(got, "|") != tc.want {
			t.Errorf("splitQuery(%q) = %q, want %q", tc.q, strings.Join(got, "|"), tc.want)
		}
	}
}

// FuzzSplitQuery: any text splits or fails cleanly; words never hold a
// space or a quote, phrases never a quote, and nothing is empty.
func FuzzSplitQuery(f *testing.F) {
	for _, s := range []string{"", "*", "a b", `"a b" c`, `"`, `a"b`, "\t\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		parts, err := splitQuery(q)
		if err != nil {
			if strings.Count(q, `"`)%2 == 0 {
				t.Errorf("splitQuery(%q) failed with balanced quotes: %v", q, err)
			}
			return
		}
		for _, p := range parts {
			if p.text == "" || strings.Contains(p.text, `"`) || (!p.phrase && strings.ContainsAny(p.text, " \t\n")) {
				t.Errorf("splitQuery(%q): bad part %+v", q, p)
			}
		}
	})
}
