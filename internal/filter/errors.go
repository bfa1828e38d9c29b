package filter

import (
	"fmt"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/schema"
)

// CodeInvalidArgument is the code of every Error this package returns:
// the client sent something it must fix (HTTP 400).
const CodeInvalidArgument = apierror.InvalidArgument

// Error is an error in a client's filter: a *apierror.Error, whose Message is
// the exact text the API sends. Errors from Matches are not one: they mean a
// stored document is not valid JSON, a server-side failure.
type Error = apierror.Error

func invalidf(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf(format, args...)}
}

// errValueType begins the message for a value that cannot be compared
// with its field, or a field that cannot be compared at all (arrays,
// objects): the original's message, which the detail follows.
const errValueType = "unsupported value type"

// valueTypeError is errValueType for value, which field f does not take:
// "unsupported value type: field 'age' takes an integer, not "thirty"".
// elements is set when f is the items of an array field, which compares
// with one element's value or with an array of them.
func valueTypeError(f *schema.Field, elements bool, value []byte) *Error {
	want := takes(f.Type)
	if elements {
		want += " or an array of " + plural(f.Type)
	}
	return invalidf("%s: field '%s' takes %s, not %s", errValueType, f.Path, want, shown(value))
}

// notComparable is errValueType for a field that a filter cannot compare.
func notComparable(f *schema.Field) *Error {
	switch {
	case f.Type == schema.Object && len(f.Properties) > 0:
		return invalidf("%s: field '%s' is an object, which a filter cannot compare; compare its fields, as '%s'", errValueType, f.Path, f.Properties[0].Path)
	case f.Type == schema.Object:
		return invalidf("%s: field '%s' is a free-form object, which a filter cannot compare", errValueType, f.Path)
	case f.Type == schema.Array && f.Items != nil:
		return invalidf("%s: field '%s' is an array of %s, which a filter cannot compare", errValueType, f.Path, plural(f.Items.Type))
	}
	return invalidf("%s: field '%s' is of type %s, which a filter cannot compare", errValueType, f.Path, f.Type)
}

// takes names a value a field of type t compares with.
func takes(t schema.Type) string {
	switch t {
	case schema.Int32, schema.Int64:
		return "an integer"
	case schema.Number:
		return "a number"
	case schema.Bool:
		return "true or false"
	case schema.Bytes:
		return "a base64 string"
	}
	return "a string"
}

// plural names the values of type t.
func plural(t schema.Type) string {
	switch t {
	case schema.Int32, schema.Int64:
		return "integers"
	case schema.Number:
		return "numbers"
	case schema.Bool:
		return "booleans"
	case schema.Bytes:
		return "base64 strings"
	case schema.Array:
		return "arrays"
	case schema.Object:
		return "objects"
	}
	return "strings"
}

// shown is a value of the filter as a message shows it.
func shown(value []byte) string { return apierror.Clip(string(value), 40) }
