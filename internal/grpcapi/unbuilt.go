package grpcapi

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/foliodb/folio/internal/apierror"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// The calls of the API that Folio does not serve yet, all here. Each
// answers UNIMPLEMENTED, rather than gRPC's own "unknown service" or
// "unknown method", so that a client can tell "not built" from "no such
// call": a service served in some methods only (Observability) is
// registered by registerUnbuilt.

func unbuiltError(what string) error {
	return apierror.Errorf(apierror.Unimplemented, "%s is not implemented by this server yet", what)
}

// registerUnbuiltServices registers the services not served, or served in
// one method only.
func (s *Server) registerUnbuiltServices(g grpc.ServiceRegistrar) {
	// From v1.0.0-beta.1 on, the clients ask Observability for the
	// server's info (HTTP: /v1/observability/info beside /v1/info); the
	// request and response messages are Tigris.GetInfo's. Its other
	// methods answer as their HTTP paths do.
	s.registerUnbuilt(g, &api.Observability_ServiceDesc, api.UnimplementedObservabilityServer{}, "metrics queries",
		grpc.MethodDesc{MethodName: "GetInfo", Handler: s.observabilityGetInfo},
		unaryMethod(s, "QuotaLimits", api.Observability_QuotaLimits_FullMethodName, s.quotaLimits),
		unaryMethod(s, "QuotaUsage", api.Observability_QuotaUsage_FullMethodName, s.quotaUsage))
}

// registerUnbuilt registers a service whose every method answers
// unbuiltError(what), or naming the method if what is empty, but for the
// extra methods given, which replace the service's of the same name. impl
// is the generated Unimplemented server, which satisfies the service's
// interface; its methods are never called.
func (s *Server) registerUnbuilt(g grpc.ServiceRegistrar, desc *grpc.ServiceDesc, impl any, what string, extra ...grpc.MethodDesc) {
	message := func(method string) string {
		if what == "" {
			return method
		}
		return what
	}
	var methods []grpc.MethodDesc
	for _, m := range desc.Methods {
		// The request is not decoded (there is nothing to do with it), but
		// the call goes through the interceptors like any other.
		full := "/" + desc.ServiceName + "/" + m.MethodName
		info := &grpc.UnaryServerInfo{Server: impl, FullMethod: full}
		unbuilt := unbuiltError(message(full[1:]))
		call := func(ctx context.Context, _ any) (any, error) { return nil, s.fail(ctx, unbuilt) }
		methods = append(methods, grpc.MethodDesc{MethodName: m.MethodName, Handler: func(_ any, ctx context.Context, _ func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			if interceptor == nil {
				return call(ctx, nil)
			}
			return interceptor(ctx, nil, info, call)
		}})
	}
	d := withMethods(&grpc.ServiceDesc{ServiceName: desc.ServiceName, HandlerType: desc.HandlerType, Methods: methods, Metadata: desc.Metadata}, extra...)
	d.Streams = make([]grpc.StreamDesc, len(desc.Streams))
	for i, st := range desc.Streams {
		// The server runs a stream's interceptors itself. The request is
		// read (and dropped) so that the body timeout's timer stops.
		unbuilt := unbuiltError(message(desc.ServiceName + "/" + st.StreamName))
		d.Streams[i] = grpc.StreamDesc{StreamName: st.StreamName, ServerStreams: st.ServerStreams, ClientStreams: st.ClientStreams,
			Handler: func(_ any, stream grpc.ServerStream) error {
				if err := stream.RecvMsg(new(emptypb.Empty)); err != nil {
					return err
				}
				return s.fail(stream.Context(), unbuilt)
			}}
	}
	g.RegisterService(d, impl)
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
	return interceptor(ctx, in, &grpc.UnaryServerInfo{Server: s, FullMethod: api.Observability_GetInfo_FullMethodName}, call)
}
