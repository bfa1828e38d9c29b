package filter

import (
	"fmt"

	"github.com/foliodb/folio/internal/status"
)

// CodeInvalidArgument is the code of every Error this package returns:
// the client sent something it must fix (HTTP 400).
const CodeInvalidArgument = status.InvalidArgument

// Error is an error in a client's filter: a *status.Error, whose Message is
// the exact text the API sends. Errors from Matches are not one: they mean a
// stored document is not valid JSON, a server-side failure.
type Error = status.Error

func invalidf(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf(format, args...)}
}

// errValueType is the message for a value that cannot be compared with its
// field, or a field that cannot be compared at all (arrays, objects).
const errValueType = "unsupported value type"
