package schema

import (
	"fmt"

	"github.com/foliodb/folio/internal/apierror"
)

// CodeInvalidArgument is the code of every Error this package returns:
// the client sent something it must fix (HTTP 400).
const CodeInvalidArgument = apierror.InvalidArgument

// Error is an error caused by the client's input: a *apierror.Error, whose
// Message is the exact text the API sends. Callers classify errors with
// errors.As or apierror.From; errors that are not one (for example one
// returned by a Generator) are the server's own failures.
type Error = apierror.Error

func invalidf(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf(format, args...)}
}
