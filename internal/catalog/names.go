package catalog

import (
	"regexp"

	"github.com/foliodb/folio/internal/status"
)

// MaxNameLength bounds database and collection names.
const MaxNameLength = 128

// The original server's rule (as of its last /v1/databases release): a
// letter first, then letters, digits, '_' or '-', at least two characters
// in all.
var namePattern = regexp.MustCompile(`^[a-zA-Z]+[a-zA-Z0-9_-]+$`)

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

func validName(name string) bool {
	return len(name) <= MaxNameLength && namePattern.MatchString(name) && !reservedNames[name]
}

// CheckDatabaseName refuses a database name the API does not allow.
func CheckDatabaseName(name string) error {
	if !validName(name) {
		return status.Errorf(status.InvalidArgument, "invalid database name")
	}
	return nil
}

// CheckCollectionName refuses a collection name the API does not allow.
func CheckCollectionName(name string) error {
	if !validName(name) {
		return status.Errorf(status.InvalidArgument, "invalid collection name")
	}
	return nil
}
