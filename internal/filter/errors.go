package filter

import "fmt"

// CodeInvalidArgument is the Tigris error code of every *Error this package
// returns: the client sent a filter or collation it must fix (HTTP 400).
// That includes "and filter needs minimum 2 filters", which the original
// server answered with 500 UNKNOWN by accident (reference §11).
const CodeInvalidArgument = "INVALID_ARGUMENT"

// Error is an error in a client's filter. Message is the exact text the API
// sends; Code is the Tigris error code name the API layer maps to an HTTP
// status. Callers classify errors with errors.As:
//
//	var fe *filter.Error
//	if errors.As(err, &fe) { code, msg = fe.Code, fe.Message }
//
// Errors from Matches are not *Error: they mean a stored document is not
// valid JSON, a server-side failure.
type Error struct {
	Code    string
	Message string
}

// Error returns the message, as sent to the client.
func (e *Error) Error() string { return e.Message }

func invalidf(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf(format, args...)}
}

// errValueType is the message for a value that cannot be compared with its
// field, or a field that cannot be compared at all (arrays, objects).
const errValueType = "unsupported value type"
