package schema

import "fmt"

// CodeInvalidArgument is the Tigris error code of every *Error this package
// returns today: the client sent a schema or document it must fix. The API
// answers it with HTTP 400.
const CodeInvalidArgument = "INVALID_ARGUMENT"

// Error is an error caused by the client's input. Message is the exact text
// the API sends to the client; Code is the Tigris error code name the API
// layer maps to an HTTP status (see reference §4). Callers classify errors
// with errors.As:
//
//	var se *schema.Error
//	if errors.As(err, &se) { code, msg = se.Code, se.Message }
//
// Errors that are not an *Error (for example one returned by a Generator)
// are the server's own failures.
type Error struct {
	Code    string
	Message string
}

// Error returns the message, as sent to the client.
func (e *Error) Error() string { return e.Message }

func invalidf(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf(format, args...)}
}
