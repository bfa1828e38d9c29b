package grpcapi

import (
	"context"

	api "github.com/tigrisdata/tigris-client-go/api/server/v1"
	"google.golang.org/grpc"

	"github.com/foliodb/folio/internal/status"
)

// The services of the API that Folio does not serve yet. Each method
// answers UNIMPLEMENTED with the message its HTTP path answers 501 with,
// rather than gRPC's own "unknown service", so that a client can tell "not
// built" from "no such service".

func unbuiltError(what string) error {
	return status.Errorf(status.Unimplemented, "%s is not implemented by this server yet", what)
}

// registerUnbuilt registers a service whose every method answers
// unbuiltError(what), and the extra methods given. impl is the generated
// Unimplemented server, which satisfies the service's interface; its
// methods are never called.
func (s *Server) registerUnbuilt(g grpc.ServiceRegistrar, desc *grpc.ServiceDesc, impl any, what string, extra ...grpc.MethodDesc) {
	d := *desc
	d.Methods = make([]grpc.MethodDesc, 0, len(desc.Methods)+len(extra))
	for _, m := range desc.Methods {
		// The request is not decoded (there is nothing to do with it), but
		// the call goes through the interceptors like any other.
		info := &grpc.UnaryServerInfo{Server: impl, FullMethod: "/" + desc.ServiceName + "/" + m.MethodName}
		call := func(ctx context.Context, _ any) (any, error) { return nil, s.fail(ctx, unbuiltError(what)) }
		d.Methods = append(d.Methods, grpc.MethodDesc{MethodName: m.MethodName, Handler: func(_ any, ctx context.Context, _ func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			if interceptor == nil {
				return call(ctx, nil)
			}
			return interceptor(ctx, nil, info, call)
		}})
	}
	d.Methods = append(d.Methods, extra...)
	d.Streams = nil // none of these services has streams
	g.RegisterService(&d, impl)
}

func (s *Server) registerUnbuiltServices(g grpc.ServiceRegistrar) {
	// From v1.0.0-beta.1 on, the clients ask Observability for the
	// server's info (HTTP: /v1/observability/info beside /v1/info); the
	// request and response messages are Tigris.GetInfo's.
	s.registerUnbuilt(g, &api.Observability_ServiceDesc, api.UnimplementedObservabilityServer{}, "metrics queries",
		grpc.MethodDesc{MethodName: "GetInfo", Handler: s.observabilityGetInfo})
}

// observabilityGetInfo is Observability.GetInfo: Tigris.GetInfo under the
// later clients' name, through the server's interceptors like any call.
func (s *Server) observabilityGetInfo(_ any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	in := new(api.GetInfoRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	call := func(ctx context.Context, req any) (any, error) { return s.GetInfo(ctx, req.(*api.GetInfoRequest)) }
	if interceptor == nil {
		return call(ctx, in)
	}
	return interceptor(ctx, in, &grpc.UnaryServerInfo{Server: s, FullMethod: "/" + api.Observability_ServiceDesc.ServiceName + "/GetInfo"}, call)
}
