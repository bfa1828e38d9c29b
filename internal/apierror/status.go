// Package status is the error model of Folio's API: an error with one of
// the API's codes and a message meant for the client.
//
// Where codes are made: a package that reads a request (its names, schema,
// filter, documents, credentials or transaction: catalog, schema, filter,
// query, docs, jsondoc, messages, streams, search, session, auth, and the
// transports' decoding) makes an *Error for the mistake it finds, with the
// message only it can write. The storage layers below them (kv and its
// backends, keyenc, keyspace, index, changelog, cluster, backup) make none,
// and do not import this package (tests/archtest): they return plain or
// sentinel errors, and the operations layer gives those their codes in one
// place (ops.apiError). Every error a call of the operations returns has a
// code; each transport maps codes to its wire's statuses in one place.
package apierror

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Code is an API error code, named as in the Tigris v1 API.
type Code string

// The codes of the API (reference §4).
const (
	Cancelled          Code = "CANCELLED"
	Unknown            Code = "UNKNOWN"
	InvalidArgument    Code = "INVALID_ARGUMENT"
	DeadlineExceeded   Code = "DEADLINE_EXCEEDED"
	NotFound           Code = "NOT_FOUND"
	AlreadyExists      Code = "ALREADY_EXISTS"
	PermissionDenied   Code = "PERMISSION_DENIED"
	ResourceExhausted  Code = "RESOURCE_EXHAUSTED"
	FailedPrecondition Code = "FAILED_PRECONDITION"
	Aborted            Code = "ABORTED"
	OutOfRange         Code = "OUT_OF_RANGE"
	Unimplemented      Code = "UNIMPLEMENTED"
	Internal           Code = "INTERNAL"
	Unavailable        Code = "UNAVAILABLE"
	DataLoss           Code = "DATA_LOSS"
	Unauthenticated    Code = "UNAUTHENTICATED"
	Conflict           Code = "CONFLICT"
	BadGateway         Code = "BAD_GATEWAY"
	MethodNotAllowed   Code = "METHOD_NOT_ALLOWED"
)

// Error is an error with an API code. Message is shown to the client as is.
type Error struct {
	Code    Code
	Message string
	// RetryDelay, when set, advises the client how long to wait before
	// retrying (the API's retry.delay).
	RetryDelay time.Duration
	// Cause is the error of the layers below that this one stands for,
	// when the server (not the request) is at fault: it goes to the log,
	// never to the client.
	Cause error
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Unwrap returns the cause, so that errors.Is sees through an Error.
func (e *Error) Unwrap() error { return e.Cause }

// Errorf returns an *Error with the code and a formatted message.
func Errorf(code Code, format string, args ...any) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// From returns the *Error in err's chain, if there is one. No error and an
// *Error itself, the common cases, are answered without errors.As, whose
// target escapes: an allocation in every call that asks of a nil error.
func From(err error) (*Error, bool) {
	if err == nil {
		return nil, false
	}
	if e, ok := err.(*Error); ok {
		return e, true
	}
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// CodeOf returns the code of err: the *Error's code, or Unknown for an
// error that carries none.
func CodeOf(err error) Code {
	if e, ok := From(err); ok {
		return e.Code
	}
	return Unknown
}

// Clip is a client's value (a name, a key, a filter's value) as a
// message shows it: as is, or cut to at most n bytes, at a character's
// start, with "…" after it. A message names what was wrong; a long value
// would bury the rest.
func Clip(value string, n int) string {
	if len(value) <= n {
		return value
	}
	for n > 0 && !utf8.RuneStart(value[n]) {
		n--
	}
	return value[:n] + "…"
}
