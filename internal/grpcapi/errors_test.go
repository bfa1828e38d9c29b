package grpcapi

import (
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/foliodb/folio/internal/apierror"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// Every API code has its gRPC code, and a decoder that reads errors as the
// official clients do (clientDecode) gets the API code, the message and
// the retry delay back from what toGRPC sends, the Tigris-only codes
// included.
func TestErrorCodes(t *testing.T) {
	cases := []struct {
		code apierror.Code
		grpc codes.Code
		api  api.Code
	}{
		{apierror.Cancelled, codes.Canceled, api.Code_CANCELLED},
		{apierror.Unknown, codes.Unknown, api.Code_UNKNOWN},
		{apierror.InvalidArgument, codes.InvalidArgument, api.Code_INVALID_ARGUMENT},
		{apierror.DeadlineExceeded, codes.DeadlineExceeded, api.Code_DEADLINE_EXCEEDED},
		{apierror.NotFound, codes.NotFound, api.Code_NOT_FOUND},
		{apierror.AlreadyExists, codes.AlreadyExists, api.Code_ALREADY_EXISTS},
		{apierror.PermissionDenied, codes.PermissionDenied, api.Code_PERMISSION_DENIED},
		{apierror.ResourceExhausted, codes.ResourceExhausted, api.Code_RESOURCE_EXHAUSTED},
		{apierror.FailedPrecondition, codes.FailedPrecondition, api.Code_FAILED_PRECONDITION},
		{apierror.Aborted, codes.Aborted, api.Code_ABORTED},
		{apierror.OutOfRange, codes.OutOfRange, api.Code_OUT_OF_RANGE},
		{apierror.Unimplemented, codes.Unimplemented, api.Code_UNIMPLEMENTED},
		{apierror.Internal, codes.Internal, api.Code_INTERNAL},
		{apierror.Unavailable, codes.Unavailable, api.Code_UNAVAILABLE},
		{apierror.DataLoss, codes.DataLoss, api.Code_DATA_LOSS},
		{apierror.Unauthenticated, codes.Unauthenticated, api.Code_UNAUTHENTICATED},
		{apierror.Conflict, codes.Unknown, api.Code_CONFLICT},
		{apierror.BadGateway, codes.Unknown, api.Code_BAD_GATEWAY},
		{apierror.MethodNotAllowed, codes.Unknown, api.Code_METHOD_NOT_ALLOWED},
	}
	if len(cases) != len(grpcCode) {
		t.Errorf("%d cases for %d codes in the table", len(cases), len(grpcCode))
	}
	for _, tc := range cases {
		t.Run(string(tc.code), func(t *testing.T) {
			err := toGRPC(&apierror.Error{Code: tc.code, Message: "it failed", RetryDelay: 1500 * time.Millisecond})
			if got := grpcstatus.Code(err); got != tc.grpc {
				t.Errorf("gRPC code %v, want %v", got, tc.grpc)
			}
			// The code numbers agree with the published enum's, so a client
			// that only reads the gRPC code sees the right one.
			if tc.api <= api.Code_UNAUTHENTICATED && codes.Code(tc.api) != tc.grpc {
				t.Errorf("the published enum numbers %s %d, gRPC's %v %d", tc.code, tc.api, tc.grpc, tc.grpc)
			}
			if code, msg, delay := clientDecode(err); code != tc.api || msg != "it failed" || delay != 1500*time.Millisecond {
				t.Errorf("the client decodes %v %q retry %v", code, msg, delay)
			}
		})
	}
	// Without a delay there is no RetryInfo.
	if _, _, d := clientDecode(toGRPC(&apierror.Error{Code: apierror.NotFound, Message: "x"})); d != 0 {
		t.Errorf("retry delay %v without one", d)
	}
	// A code missing from the table (a bug) still goes out, as UNKNOWN.
	if got := grpcstatus.Code(toGRPC(&apierror.Error{Code: "NO_SUCH_CODE", Message: "x"})); got != codes.Unknown {
		t.Errorf("an unknown code went out as %v", got)
	}
}

// clientDecode reads an error as the official Go client's
// api.FromStatusError does (api/server/v1/error.go, alpha.32 to v1.0.0):
// the code is the gRPC code's number unless an ErrorInfo names one, and a
// RetryInfo gives the delay.
func clientDecode(err error) (api.Code, string, time.Duration) {
	st := grpcstatus.Convert(err)
	code := api.Code(st.Code())
	var delay time.Duration
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			code = api.Code_UNKNOWN
			if c, ok := api.Code_value[d.Reason]; ok {
				code = api.Code(c)
			}
		case *errdetails.RetryInfo:
			delay = d.RetryDelay.AsDuration()
		}
	}
	return code, st.Message(), delay
}
