package httpapi

import (
	"net/http"

	"github.com/foliodb/folio/internal/status"
)

// httpStatus maps an API code to its HTTP status (reference §4), with
// METHOD_NOT_ALLOWED as 405 where the original sent 500 by accident.
var httpStatus = map[status.Code]int{
	status.Cancelled:          499,
	status.Unknown:            http.StatusInternalServerError,
	status.InvalidArgument:    http.StatusBadRequest,
	status.DeadlineExceeded:   http.StatusGatewayTimeout,
	status.NotFound:           http.StatusNotFound,
	status.AlreadyExists:      http.StatusConflict,
	status.PermissionDenied:   http.StatusForbidden,
	status.ResourceExhausted:  http.StatusTooManyRequests,
	status.FailedPrecondition: http.StatusPreconditionFailed,
	status.Aborted:            http.StatusConflict,
	status.OutOfRange:         http.StatusBadRequest,
	status.Unimplemented:      http.StatusNotImplemented,
	status.Internal:           http.StatusInternalServerError,
	status.Unavailable:        http.StatusServiceUnavailable,
	status.DataLoss:           http.StatusInternalServerError,
	status.Unauthenticated:    http.StatusUnauthorized,
	status.Conflict:           http.StatusConflict,
	status.BadGateway:         http.StatusBadGateway,
	status.MethodNotAllowed:   http.StatusMethodNotAllowed,
}

// statusOf returns the HTTP status of an API error.
func statusOf(e *status.Error) int {
	if s, ok := httpStatus[e.Code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

type errorBody struct {
	Error errorDetails `json:"error"`
}

type errorDetails struct {
	Code    status.Code `json:"code"`
	Message string      `json:"message"`
	Retry   *retryInfo  `json:"retry,omitempty"`
}

type retryInfo struct {
	Delay int64 `json:"delay"` // milliseconds
}

func errorJSON(e *status.Error) errorBody {
	b := errorBody{Error: errorDetails{Code: e.Code, Message: e.Message}}
	if e.RetryDelay > 0 {
		b.Error.Retry = &retryInfo{Delay: e.RetryDelay.Milliseconds()}
	}
	return b
}
