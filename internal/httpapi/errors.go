package httpapi

import (
	"net/http"

	"github.com/foliodb/folio/internal/apierror"
)

// httpStatus maps an API code to its HTTP status (reference §4), with
// METHOD_NOT_ALLOWED as 405 where the original sent 500 by accident.
var httpStatus = map[apierror.Code]int{
	apierror.Cancelled:          499,
	apierror.Unknown:            http.StatusInternalServerError,
	apierror.InvalidArgument:    http.StatusBadRequest,
	apierror.DeadlineExceeded:   http.StatusGatewayTimeout,
	apierror.NotFound:           http.StatusNotFound,
	apierror.AlreadyExists:      http.StatusConflict,
	apierror.PermissionDenied:   http.StatusForbidden,
	apierror.ResourceExhausted:  http.StatusTooManyRequests,
	apierror.FailedPrecondition: http.StatusPreconditionFailed,
	apierror.Aborted:            http.StatusConflict,
	apierror.OutOfRange:         http.StatusBadRequest,
	apierror.Unimplemented:      http.StatusNotImplemented,
	apierror.Internal:           http.StatusInternalServerError,
	apierror.Unavailable:        http.StatusServiceUnavailable,
	apierror.DataLoss:           http.StatusInternalServerError,
	apierror.Unauthenticated:    http.StatusUnauthorized,
	apierror.Conflict:           http.StatusConflict,
	apierror.BadGateway:         http.StatusBadGateway,
	apierror.MethodNotAllowed:   http.StatusMethodNotAllowed,
}

// statusOf returns the HTTP status of an API error.
func statusOf(e *apierror.Error) int {
	if s, ok := httpStatus[e.Code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

type errorBody struct {
	Error errorDetails `json:"error"`
}

type errorDetails struct {
	Code    apierror.Code `json:"code"`
	Message string        `json:"message"`
	Retry   *retryInfo    `json:"retry,omitempty"`
}

type retryInfo struct {
	Delay int64 `json:"delay"` // milliseconds
}

func errorJSON(e *apierror.Error) errorBody {
	b := errorBody{Error: errorDetails{Code: e.Code, Message: e.Message}}
	if e.RetryDelay > 0 {
		b.Error.Retry = &retryInfo{Delay: e.RetryDelay.Milliseconds()}
	}
	return b
}

// errSlowBody is the error for a request body that did not arrive within
// the body timeout.
func errSlowBody() error {
	return apierror.Errorf(apierror.InvalidArgument, "the request body did not arrive within the server's body timeout")
}

// AnswerSlowBody answers a request whose body did not arrive within the
// body timeout before any handler ran (a server that reads bodies ahead,
// internal/http1), as a handler answers one whose body read times out.
func AnswerSlowBody(w http.ResponseWriter) {
	e, _ := apierror.From(errSlowBody())
	writeJSON(w, http.StatusBadRequest, errorJSON(e))
}

// AnswerRefused answers a request an HTTP server refused before any
// handler (internal/http1: malformed, headers too large, an unknown HTTP
// version) with the API's JSON error rather than plain text.
func AnswerRefused(w http.ResponseWriter, status int, why string) {
	code := apierror.InvalidArgument
	if status == http.StatusHTTPVersionNotSupported {
		code = apierror.Unimplemented
	}
	e, _ := apierror.From(apierror.Errorf(code, "%s", why))
	writeJSON(w, status, errorJSON(e))
}
