package cache

import (
	"regexp"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, key string
		want         bool
	}{
		{"*", "", true},
		{"*", "anything", true},
		{"", "", true},
		{"", "a", false},
		{"a", "a", true},
		{"a", "b", false},
		{"a", "aa", false},
		{"user:*", "user:1", true},
		{"user:*", "user:", true},
		{"user:*", "use", false},
		{"*:1", "user:1", true},
		{"*:1", "user:12", false},
		{"h?llo", "hello", true},
		{"h?llo", "hllo", false},
		{"h*llo", "hllo", true},
		{"h*llo", "heeeello", true},
		{"h[ae]llo", "hallo", true},
		{"h[ae]llo", "hillo", false},
		{"h[^e]llo", "hallo", true},
		{"h[^e]llo", "hello", false},
		{"h[a-b]llo", "hbllo", true},
		{"h[b-a]llo", "hbllo", true}, // a range either way round
		{"h[a-b]llo", "hcllo", false},
		{`h\*llo`, "h*llo", true},
		{`h\*llo`, "hello", false},
		{`[\]]`, "]", true},
		{`[\-]`, "-", true},
		{"[]", "a", false},  // an empty class matches nothing
		{"[^]", "a", true},  // and its negation anything
		{"[abc", "b", true}, // a class left open runs to the end
		{"[abc", "bc", false},
		{`a\`, `a\`, true}, // a \ at the end is itself
		{"**a", "a", true},
		{"a*b*c", "abbbbc", true},
		{"a*b*c", "acb", false},
		{"*a*a*a*a*a*a*a*b", strings.Repeat("a", 64), false}, // no blow-up
		{"?", "é", false},                                    // one byte, not one character, as Redis
		{"??", "é", true},
	} {
		if got := Match(c.pattern, c.key); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pattern, c.key, got, c.want)
		}
	}
}

// globRegexp is an independent reading of Redis's rules: the pattern
// translated into a regular expression over bytes.
func globRegexp(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	for p := 0; p < len(pattern); p++ {
		switch c := pattern[p]; c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '\\':
			if p+1 < len(pattern) {
				p++
			}
			b.WriteString(byteClass([]byte{pattern[p]}, false))
		case '[':
			p++
			negate := p < len(pattern) && pattern[p] == '^'
			if negate {
				p++
			}
			var set []byte
			for ; p < len(pattern) && pattern[p] != ']'; p++ {
				switch {
				case pattern[p] == '\\' && p+1 < len(pattern):
					p++
					set = append(set, pattern[p])
				case p+2 < len(pattern) && pattern[p+1] == '-':
					lo, hi := pattern[p], pattern[p+2]
					if lo > hi {
						lo, hi = hi, lo
					}
					for x := int(lo); x <= int(hi); x++ {
						set = append(set, byte(x))
					}
					p += 2
				default:
					set = append(set, pattern[p])
				}
			}
			b.WriteString(byteClass(set, negate))
		default:
			b.WriteString(byteClass([]byte{c}, false))
		}
	}
	b.WriteString(`$`)
	return regexp.MustCompile(b.String())
}

// byteClass is a regexp class of bytes (as Latin-1 runes: the key is
// matched as Latin-1 too).
func byteClass(set []byte, negate bool) string {
	var b strings.Builder
	b.WriteString("[")
	if negate {
		b.WriteString("^")
	}
	if len(set) == 0 {
		if negate {
			return `[\x00-\x{ff}]`
		}
		return `[^\x00-\x{10ffff}]`
	}
	for _, c := range set {
		b.WriteString(`\x{` + strings.ToLower(strings.TrimLeft(hex2(c), "")) + `}`)
	}
	b.WriteString("]")
	return b.String()
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

func latin1(s string) string {
	r := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		r[i] = rune(s[i])
	}
	return string(r)
}

func FuzzMatch(f *testing.F) {
	for _, seed := range [][2]string{{"*", "a"}, {"h[a-z]llo", "hello"}, {`[\]^a-]x*`, "]xx"}, {"a*?b", "acb"}, {"[^", "x"}, {`\`, `\`}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, key string) {
		if len(pattern) > 64 || len(key) > 64 {
			return
		}
		got := Match(pattern, key)
		want := globRegexp(pattern).MatchString(latin1(key))
		if got != want {
			t.Fatalf("Match(%q, %q) = %v, the regexp says %v", pattern, key, got, want)
		}
		// Every key matches itself quoted.
		var quoted strings.Builder
		for i := 0; i < len(key); i++ {
			quoted.WriteByte('\\')
			quoted.WriteByte(key[i])
		}
		if !Match(quoted.String(), key) {
			t.Fatalf("%q does not match itself quoted", key)
		}
	})
}
