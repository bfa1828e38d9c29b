package client

import (
	"errors"
	"fmt"
	"time"
)

// Code is an API error code, as the server names it.
type Code string

// The API's codes (docs/api.md "Errors").
const (
	InvalidArgument    Code = "INVALID_ARGUMENT"
	NotFound           Code = "NOT_FOUND"
	AlreadyExists      Code = "ALREADY_EXISTS"
	Aborted            Code = "ABORTED"
	PermissionDenied   Code = "PERMISSION_DENIED"
	Unauthenticated    Code = "UNAUTHENTICATED"
	ResourceExhausted  Code = "RESOURCE_EXHAUSTED"
	FailedPrecondition Code = "FAILED_PRECONDITION"
	OutOfRange         Code = "OUT_OF_RANGE"
	DeadlineExceeded   Code = "DEADLINE_EXCEEDED"
	Unimplemented      Code = "UNIMPLEMENTED"
	Unavailable        Code = "UNAVAILABLE"
	Internal           Code = "INTERNAL"
	MethodNotAllowed   Code = "METHOD_NOT_ALLOWED"
	Unknown            Code = "UNKNOWN"
)

// Error is an error the server answered.
type Error struct {
	Code    Code
	Message string
	// HTTPStatus is the response's status; 200 for an error line inside a
	// stream that had started.
	HTTPStatus int
	// RetryDelay is the server's hint of when to try again (ABORTED,
	// UNAVAILABLE), or 0.
	RetryDelay time.Duration
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// IsCode tells whether err is, or wraps, an *Error with the code.
func IsCode(err error, code Code) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// wireError is the API's error body, also a stream's error line.
type wireError struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	Retry   *struct {
		Delay int64 `json:"delay"` // milliseconds
	} `json:"retry"`
}

func (w *wireError) toError(status int) *Error {
	e := &Error{Code: w.Code, Message: w.Message, HTTPStatus: status}
	if w.Retry != nil {
		e.RetryDelay = time.Duration(w.Retry.Delay) * time.Millisecond
	}
	return e
}
