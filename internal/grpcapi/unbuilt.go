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

// Search is not built yet (full-text search).
func (s *Server) Search(req *api.SearchRequest, stream api.Tigris_SearchServer) error {
	return s.fail(stream.Context(), unbuiltError("search"))
}

func unbuiltError(what string) error {
	return status.Errorf(status.Unimplemented, "%s is not implemented by this server yet", what)
}

// registerUnbuilt registers a service whose every method answers
// unbuiltError(what). impl is the generated Unimplemented server, which
// satisfies the service's interface; its methods are never called.
func (s *Server) registerUnbuilt(g grpc.ServiceRegistrar, desc *grpc.ServiceDesc, impl any, what string) {
	d := *desc
	d.Methods = make([]grpc.MethodDesc, len(desc.Methods))
	for i, m := range desc.Methods {
		d.Methods[i] = grpc.MethodDesc{MethodName: m.MethodName, Handler: func(_ any, ctx context.Context, _ func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			return nil, s.fail(ctx, unbuiltError(what))
		}}
	}
	d.Streams = nil // none of these services has streams
	g.RegisterService(&d, impl)
}

func (s *Server) registerUnbuiltServices(g grpc.ServiceRegistrar) {
	s.registerUnbuilt(g, &api.Auth_ServiceDesc, api.UnimplementedAuthServer{}, "authentication")
	s.registerUnbuilt(g, &api.User_ServiceDesc, api.UnimplementedUserServer{}, "application management")
	s.registerUnbuilt(g, &api.Admin_ServiceDesc, api.UnimplementedAdminServer{}, "namespace management")
	s.registerUnbuilt(g, &api.Observability_ServiceDesc, api.UnimplementedObservabilityServer{}, "metrics queries")
}
