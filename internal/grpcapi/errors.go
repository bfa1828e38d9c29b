package grpcapi

import (
	"context"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/foliodb/folio/internal/apierror"
)

// grpcCode maps an API code to its gRPC status code: the one place where
// they are paired. The API's codes up to UNAUTHENTICATED are gRPC's own,
// with the same numbers; the Tigris-only ones (CONFLICT, BAD_GATEWAY,
// METHOD_NOT_ALLOWED) have no gRPC code and go out as UNKNOWN, as the
// original sent them. Every error also carries its API code by name in an
// ErrorInfo detail (see toGRPC), from which the official clients take it.
var grpcCode = map[apierror.Code]codes.Code{
	apierror.Cancelled:          codes.Canceled,
	apierror.Unknown:            codes.Unknown,
	apierror.InvalidArgument:    codes.InvalidArgument,
	apierror.DeadlineExceeded:   codes.DeadlineExceeded,
	apierror.NotFound:           codes.NotFound,
	apierror.AlreadyExists:      codes.AlreadyExists,
	apierror.PermissionDenied:   codes.PermissionDenied,
	apierror.ResourceExhausted:  codes.ResourceExhausted,
	apierror.FailedPrecondition: codes.FailedPrecondition,
	apierror.Aborted:            codes.Aborted,
	apierror.OutOfRange:         codes.OutOfRange,
	apierror.Unimplemented:      codes.Unimplemented,
	apierror.Internal:           codes.Internal,
	apierror.Unavailable:        codes.Unavailable,
	apierror.DataLoss:           codes.DataLoss,
	apierror.Unauthenticated:    codes.Unauthenticated,
	apierror.Conflict:           codes.Unknown,
	apierror.BadGateway:         codes.Unknown,
	apierror.MethodNotAllowed:   codes.Unknown,
}

// codeOf returns the gRPC code of an API code; one missing from the table
// (a bug) is UNKNOWN.
func codeOf(c apierror.Code) codes.Code {
	if gc, ok := grpcCode[c]; ok {
		return gc
	}
	return codes.Unknown
}

// toGRPC encodes an API error as the original did (api/server/v1/error.go
// of the published definitions): the gRPC code of its API code, its
// message, an ErrorInfo whose Reason is the API code's name, and a
// RetryInfo when the error advises a delay. Clients reconstruct the API
// error from these (FromStatusError).
func toGRPC(e *apierror.Error) error {
	st := grpcstatus.New(codeOf(e.Code), e.Message)
	info := &errdetails.ErrorInfo{Reason: string(e.Code)}
	var withDetails *grpcstatus.Status
	var err error
	if e.RetryDelay > 0 {
		withDetails, err = st.WithDetails(info, &errdetails.RetryInfo{RetryDelay: durationpb.New(e.RetryDelay)})
	} else {
		withDetails, err = st.WithDetails(info)
	}
	if err != nil {
		return st.Err() // details that cannot be marshalled: the code and message still go
	}
	return withDetails.Err()
}

// fail returns the gRPC error for err: what a client may see of it (the
// same as over HTTP: ops.Public), encoded by toGRPC.
func (s *Server) fail(ctx context.Context, err error) error {
	method, _ := grpc.Method(ctx)
	return toGRPC(s.ops.Public(ctx, err, "grpc_method", method))
}

// apiCodeOf returns the API code of a gRPC status: the one its ErrorInfo
// names (toGRPC's), or else the API code of its gRPC code (one each, but
// for UNKNOWN's several).
func apiCodeOf(st *grpcstatus.Status) apierror.Code {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.Reason != "" {
			return apierror.Code(info.Reason)
		}
	}
	for api, gc := range grpcCode {
		if gc == st.Code() && gc != codes.Unknown {
			return api
		}
	}
	return apierror.Unknown
}
