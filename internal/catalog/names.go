package catalog

import (
	"fmt"

	"github.com/foliodb/folio/internal/apierror"
)

// MaxNameLength bounds database and collection names.
const MaxNameLength = 128

// nameRule is the original server's rule (as of its last /v1/databases
// release): a letter first, then letters, digits, '_' or '-', at least two
// characters in all. Every request checks its names, so they are checked
// by hand (FuzzNameRule holds this to the pattern).
func nameRule(name string) bool {
	if len(name) < 2 || !isLetter(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; !isLetter(c) && !('0' <= c && c <= '9') && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// namePattern is nameRule as the pattern the original server used.
const namePattern = `^[a-zA-Z]+[a-zA-Z0-9_-]+$`

// reservedNames are words of the client languages that the original server
// refused as names, since clients generate code from them.
var reservedNames = map[string]bool{}

func init() {
	for _, w := range []string{
		"abstract", "and", "arguments", "as", "assert", "async", "await", "boolean", "break", "byte",
		"case", "catch", "chan", "char", "class", "const", "continue", "debugger", "def", "default",
		"del", "delete", "do", "double", "elif", "else", "enum", "eval", "except", "export", "extends",
		"fallthrough", "false", "final", "finally", "float", "for", "from", "func", "function", "global",
		"go", "goto", "if", "implements", "import", "in", "instanceof", "int", "interface", "is",
		"lambda", "let", "long", "map", "native", "new", "nil", "nonlocal", "not", "null", "or",
		"package", "pass", "private", "protected", "public", "raise", "range", "return", "select",
		"short", "static", "strictfp", "struct", "super", "switch", "synchronized", "this", "throw",
		"throws", "transient", "true", "try", "type", "typeof", "var", "void", "volatile", "while",
		"with", "yield",
	} {
		reservedNames[w] = true
	}
}

// nameProblem says what is wrong with a database or collection name, or
// "" if nothing is.
func nameProblem(name string) string {
	switch {
	case len(name) > MaxNameLength || !nameRule(name):
		return nameRuleText
	case reservedNames[name]:
		return "'" + name + "' is a keyword of a client language, which clients generate code from"
	}
	return ""
}

// nameRuleText is the name rule (nameRule and MaxNameLength) as the errors
// give it.
var nameRuleText = fmt.Sprintf("a name starts with a letter, then has letters, digits, '_' or '-', 2 to %d characters in all", MaxNameLength)

// checkName refuses a name the API does not allow, with the original's
// message ("invalid database name") and then the name and the rule.
func checkName(what, name string) error {
	if why := nameProblem(name); why != "" {
		return apierror.Errorf(apierror.InvalidArgument, "invalid %s name '%s': %s", what, apierror.Clip(name, 64), why)
	}
	return nil
}

// CheckDatabaseName refuses a database name the API does not allow.
func CheckDatabaseName(name string) error { return checkName("database", name) }

// CheckCollectionName refuses a collection name the API does not allow.
func CheckCollectionName(name string) error { return checkName("collection", name) }

// CheckCacheName refuses a cache name the API does not allow: the rule of
// collection names, but for the client languages' words, since no client
// generates code from a cache.
func CheckCacheName(name string) error {
	if len(name) > MaxNameLength || !nameRule(name) {
		return apierror.Errorf(apierror.InvalidArgument, "invalid cache name '%s': %s", apierror.Clip(name, 64), nameRuleText)
	}
	return nil
}
