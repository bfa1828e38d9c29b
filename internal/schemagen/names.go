package schemagen

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// camel turns a schema name into CamelCase the way the original's
// generator did (iancoleman/strcase's ToCamel): the first letter and every
// letter after a separator ('_', '-', '.', ' ') or a digit is upper-cased,
// other letters are kept as they are, and anything that is neither a
// letter nor a digit is dropped. "user_name" and "userName" both give
// "UserName", "field_3" gives "Field3", "uUID1" gives "UUID1".
func camel(s string) string {
	var b strings.Builder
	capNext := true
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			if capNext {
				r = unicode.ToUpper(r)
			}
			b.WriteRune(r)
			capNext = false
		case unicode.IsDigit(r):
			b.WriteRune(r)
			capNext = true
		default:
			capNext = r == '_' || r == '-' || r == '.' || r == ' '
		}
	}
	return b.String()
}

// exported is camel(s) made a usable exported identifier in every target
// language: a name with no letter or digit, or one that does not start
// with an upper-case letter after camel (a digit, or a letter of a script
// without case), gets an "X" in front, so that Go exports it (encoding/json
// skips unexported fields) and no language sees a leading digit.
func exported(s string) string {
	c := camel(s)
	r, _ := utf8.DecodeRuneInString(c)
	if c == "" || !unicode.IsUpper(r) {
		return "X" + c
	}
	return c
}

// lowerFirst lower-cases the first letter: the TypeScript schema
// constant of type User is userSchema.
func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

// upperFirst upper-cases the first letter: Java's accessor of field
// user_name is getUser_name, as the original generated (and as Jackson maps
// back to "user_name").
func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// typeName is the name of the type generated for a collection or for an
// object field: the name singularised, then CamelCased, as the original
// did ("users" gives User, "order_items" gives OrderItem).
func typeName(s string) string {
	return exported(singular(s))
}

// irregular plurals that the suffix rules below would get wrong. The
// original used a full English inflection library (gertd/go-pluralize);
// this covers the words collection and field names are commonly made of.
var irregular = map[string]string{
	"people":   "person",
	"men":      "man",
	"women":    "woman",
	"children": "child",
	"mice":     "mouse",
	"geese":    "goose",
	"feet":     "foot",
	"teeth":    "tooth",
	"oxen":     "ox",
	"indices":  "index",
	"matrices": "matrix",
	"vertices": "vertex",
	"criteria": "criterion",
	"analyses": "analysis",
	"theses":   "thesis",
	"crises":   "crisis",
	"statuses": "status",
	"aliases":  "alias",
	"buses":    "bus",
	"movies":   "movie",
	"cookies":  "cookie",
	"quizzes":  "quiz",
	"leaves":   "leaf",
	"wolves":   "wolf",
	"lives":    "life",
	"wives":    "wife",
	"knives":   "knife",
	"halves":   "half",
	"shelves":  "shelf",
}

// unchanged are the words singular leaves alone: uncountable ones, and
// singular ones that end in an s the rules below would cut.
var unchanged = map[string]bool{
	"data": true, "info": true, "information": true, "news": true, "series": true, "species": true,
	"metadata": true, "equipment": true, "media": true, "sheep": true, "fish": true, "deer": true,
	"money": true, "feedback": true, "software": true, "analytics": true, "physics": true,
	"alias": true, "canvas": true, "gas": true, "atlas": true, "yes": true,
}

// singular returns the singular of the last word of s, keeping the rest
// and the case of what it keeps: "order_items" gives "order_item",
// "UserAddresses" gives "UserAddress", "people" gives "person".
func singular(s string) string {
	start := lastWord(s)
	word := s[start:]
	lower := strings.ToLower(word)
	if unchanged[lower] || len(lower) < 3 {
		return s
	}
	if sing, ok := irregular[lower]; ok {
		return s[:start] + matchCase(word, sing)
	}
	cut, add := 0, ""
	switch {
	case strings.HasSuffix(lower, "ies") && len(lower) > 4:
		cut, add = 3, "y" // categories
	case strings.HasSuffix(lower, "sses"), strings.HasSuffix(lower, "shes"),
		strings.HasSuffix(lower, "ches"), strings.HasSuffix(lower, "xes"),
		strings.HasSuffix(lower, "zzes"):
		cut = 2 // addresses, dishes, matches, boxes, buzzes
	case strings.HasSuffix(lower, "oes") && len(lower) > 4:
		cut = 2 // heroes
	case strings.HasSuffix(lower, "ss"), strings.HasSuffix(lower, "us"), strings.HasSuffix(lower, "is"):
		return s // class, status, analysis: already singular
	case strings.HasSuffix(lower, "s"):
		cut = 1
	default:
		return s
	}
	return s[:len(s)-cut] + matchCase(word[len(word)-cut:], add)
}

// lastWord returns where the last word of a name starts: after the last
// separator or digit, or at its last upper-case letter that follows a
// lower-case one (camelCase).
func lastWord(s string) int {
	start := 0
	prevLower := false
	for i, r := range s {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ' || unicode.IsDigit(r):
			start = i + utf8.RuneLen(r)
			prevLower = false
		case unicode.IsUpper(r):
			if prevLower {
				start = i
			}
			prevLower = false
		default:
			prevLower = unicode.IsLower(r)
		}
	}
	return start
}

// matchCase returns repl upper-cased when like is all upper case
// ("USERS" gives "USER", "CATEGORIES" gives "CATEGORY").
func matchCase(like, repl string) string {
	if like != "" && strings.ToUpper(like) == like && strings.ToLower(like) != like {
		return strings.ToUpper(repl)
	}
	return repl
}

// namer hands out names that are unique within one scope, adding 1, 2...
// to a name already taken or reserved (the original named a second,
// different type User "User1").
type namer struct {
	taken    map[string]bool
	reserved func(string) bool
}

func newNamer(reserved func(string) bool) *namer {
	if reserved == nil {
		reserved = func(string) bool { return false }
	}
	return &namer{taken: make(map[string]bool), reserved: reserved}
}

func (n *namer) free(name string) bool { return !n.taken[name] && !n.reserved(name) }

// claim returns base, or base1, base2... whichever is free first, and
// takes it.
func (n *namer) claim(base string) string {
	name := base
	for i := 1; !n.free(name); i++ {
		name = base + strconv.Itoa(i)
	}
	n.taken[name] = true
	return name
}

// pluralOf are the irregular plurals: irregular read the other way.
var pluralOf = func() map[string]string {
	m := make(map[string]string, len(irregular))
	for pl, sing := range irregular {
		m[sing] = pl
	}
	return m
}()

// plural returns s with its last word in the plural, keeping the rest and
// the case of what it keeps, as the final server named array fields in Go
// (a field "array_value" is ArrayValues). Like singular it follows common
// English rules where the original used an inflection library: a word
// already plural stays so ("Tags"), "-s", "-x", "-ch", "-sh", "-zz" take
// "es", a consonant and "y" becomes "ies".
func plural(s string) string {
	start := lastWord(s)
	word := s[start:]
	lower := strings.ToLower(word)
	if unchanged[lower] && lower != "alias" && lower != "gas" && lower != "atlas" && lower != "canvas" {
		return s
	}
	if pl, ok := pluralOf[lower]; ok {
		return s[:start] + restoreCase(word, pl)
	}
	if _, ok := irregular[lower]; ok {
		return s // a plural already: people
	}
	add := "s"
	switch {
	case lower == "":
		return s + "s" // after a digit: X3s
	case strings.HasSuffix(lower, "ss"), strings.HasSuffix(lower, "us"), strings.HasSuffix(lower, "as"),
		strings.HasSuffix(lower, "x"), strings.HasSuffix(lower, "ch"), strings.HasSuffix(lower, "sh"),
		strings.HasSuffix(lower, "zz"):
		add = "es" // classes, statuses, aliases, boxes, matches, dishes, buzzes
	case strings.HasSuffix(lower, "sis"):
		return s[:len(s)-2] + matchCase(word, "es") // analysis: analyses
	case strings.HasSuffix(lower, "s"):
		return s // tags: already plural
	case strings.HasSuffix(lower, "y") && len(lower) > 1 && !strings.ContainsRune("aeiou", rune(lower[len(lower)-2])):
		return s[:len(s)-1] + matchCase(word, "ies") // category: categories
	}
	return s + matchCase(word, add)
}

// restoreCase returns repl, a lower-case word, in the case of like: upper
// case, capitalised, or as it is.
func restoreCase(like, repl string) string {
	if r := matchCase(like, repl); r != repl {
		return r
	}
	if r, _ := utf8.DecodeRuneInString(like); unicode.IsUpper(r) {
		return upperFirst(repl)
	}
	return repl
}
