// Package schemagen generates the source text of model types, in Go,
// TypeScript and Java, from a collection schema: what describe returns when
// asked for a schema_format (reference §10b). There are two styles, one
// per API generation: what the original server's generator sent in late
// 2022 (Style2022), and what the final server, v1.0.0-beta.122, sent
// (Final): byte for byte where that text is valid code, so that tools
// built on it (the tigris CLI wraps each collection's text in a file
// header of its own) keep working. docs/api.md lists the differences.
//
// Each language's text holds declarations only: no package clause, no
// imports. The original's clients added those, and two headers in one file
// would not compile.
//
// It is pure logic over a parsed schema.Schema: it knows nothing of HTTP or
// storage, and cannot fail on a schema that Parse accepted.
package schemagen

import (
	"fmt"
	"strings"

	"github.com/foliodb/folio/internal/schema"
)

// Format is a language generated code can be in.
type Format string

// The formats, named as schema_format names them.
const (
	Go         Format = "go"
	TypeScript Format = "ts"
	Java       Format = "java"
)

// spellings are the names schema_format accepts for each format, compared
// without regard to case: the original accepted "golang" and "typescript"
// too.
var spellings = map[string]Format{
	"go":         Go,
	"golang":     Go,
	"ts":         TypeScript,
	"typescript": TypeScript,
	"java":       Java,
}

// Style is which server's text to write.
type Style int

const (
	// Style2022 is the text of the original's beta releases of November
	// 2022, which the 2022 routes answer: gofmt'ed Go, TypeScript
	// interfaces with TigrisSchema constants, fields in schema order.
	Style2022 Style = iota
	// Final is the final server's text (v1.0.0-beta.122), which the 2023
	// routes answer: Go with tigris tags for every annotation, TypeScript
	// classes with decorators, fields in name order.
	Final
)

// Request is one format asked for by a schema_format list, with the
// spelling the client used: the describe response's schema object is keyed
// by that spelling, which is what a client looks its text up by.
type Request struct {
	Key    string
	Format Format
}

// UnknownFormatError is the error of a schema_format naming a format there
// is no generator for.
type UnknownFormatError struct {
	Name string
}

func (e *UnknownFormatError) Error() string {
	return fmt.Sprintf("unsupported schema format '%s'. supported formats are: go, ts, java", e.Name)
}

// ParseFormats reads a schema_format value: a comma-separated list of
// formats, with spaces around names ignored. An empty value asks for
// nothing (the schema is then sent as it was given) and returns nil; a
// format named twice is generated once. An empty or unknown name in a
// non-empty list is an *UnknownFormatError, so that "go," is not silently
// taken for "go".
func ParseFormats(list string) ([]Request, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var out []Request
	seen := make(map[string]bool)
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		f, ok := spellings[strings.ToLower(name)]
		if !ok {
			return nil, &UnknownFormatError{Name: name}
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, Request{Key: name, Format: f})
		}
	}
	return out, nil
}

// Generate returns the source text of the model types of schema s in
// format f and style st: one type per object of the schema, nested ones
// first and the collection's own type last.
func Generate(s *schema.Schema, f Format, st Style) string {
	switch {
	case f == Go && st == Final:
		return generateGoFinal(s)
	case f == Go:
		return generateGo(s)
	case f == TypeScript && st == Final:
		return generateTypeScriptFinal(s)
	case f == TypeScript:
		return generateTypeScript(s)
	case f == Java && st == Final:
		return generateJavaFinal(s)
	case f == Java:
		return generateJava(s)
	}
	panic(fmt.Sprintf("schemagen: unknown format %q", f))
}
