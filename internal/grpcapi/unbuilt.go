package grpcapi

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/foliodb/folio/internal/apierror"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// The calls of the API that Folio does not serve yet, all here. Each
// answers UNIMPLEMENTED, rather than gRPC's own "unknown service" or
// "unknown method", so that a client can tell "not built" from "no such
// call": a method of a service served in part (Tigris, Auth, User) is a
// method below, which building the call moves to its file; a service
// served in one method only (Observability) is registered by registerUnbuilt.

func unbuiltError(what string) error {
	return apierror.Errorf(apierror.Unimplemented, "%s is not implemented by this server yet", what)
}

// unbuilt is the error of a call not built yet, naming its method
// ("tigrisdata.v1.Tigris/CreateProject").
func (s *Server) unbuilt(ctx context.Context) error {
	method, _ := grpc.Method(ctx)
	return s.fail(ctx, unbuiltError(strings.TrimPrefix(method, "/")))
}

// Tigris: 2023's app keys.

func (s *Server) CreateAppKey(ctx context.Context, _ *api.CreateAppKeyRequest) (*api.CreateAppKeyResponse, error) {
	return nil, s.unbuilt(ctx)
}

func (s *Server) UpdateAppKey(ctx context.Context, _ *api.UpdateAppKeyRequest) (*api.UpdateAppKeyResponse, error) {
	return nil, s.unbuilt(ctx)
}

func (s *Server) DeleteAppKey(ctx context.Context, _ *api.DeleteAppKeyRequest) (*api.DeleteAppKeyResponse, error) {
	return nil, s.unbuilt(ctx)
}

func (s *Server) ListAppKeys(ctx context.Context, _ *api.ListAppKeysRequest) (*api.ListAppKeysResponse, error) {
	return nil, s.unbuilt(ctx)
}

func (s *Server) RotateAppKeySecret(ctx context.Context, _ *api.RotateAppKeyRequest) (*api.RotateAppKeyResponse, error) {
	return nil, s.unbuilt(ctx)
}

func (s *Server) CreateGlobalAppKey(ctx context.Context, _ *api.CreateGlobalAppKeyRequest) (*api.CreateGlobalAppKeyResponse, error) {
	return nil, s.unbuilt(ctx)
}

func (s *Server) UpdateGlobalAppKey(ctx context.Context, _ *api.UpdateGlobalAppKeyRequest) (*api.UpdateGlobalAppKeyResponse, error) {
	return nil, s.unbuilt(ctx)
}

func (s *Server) DeleteGlobalAppKey(ctx context.Context, _ *api.DeleteGlobalAppKeyRequest) (*api.DeleteGlobalAppKeyResponse, error) {
	return nil, s.unbuilt(ctx)
}

func (s *Server) ListGlobalAppKeys(ctx context.Context, _ *api.ListGlobalAppKeysRequest) (*api.ListGlobalAppKeysResponse, error) {
	return nil, s.unbuilt(ctx)
}

func (s *Server) RotateGlobalAppKeySecret(ctx context.Context, _ *api.RotateGlobalAppKeySecretRequest) (*api.RotateGlobalAppKeySecretResponse, error) {
	return nil, s.unbuilt(ctx)
}

// Management: 2023's metadata.

func (m managementService) InsertUserMetadata(ctx context.Context, _ *api.InsertUserMetadataRequest) (*api.InsertUserMetadataResponse, error) {
	return nil, m.s.unbuilt(ctx)
}

func (m managementService) GetUserMetadata(ctx context.Context, _ *api.GetUserMetadataRequest) (*api.GetUserMetadataResponse, error) {
	return nil, m.s.unbuilt(ctx)
}

func (m managementService) UpdateUserMetadata(ctx context.Context, _ *api.UpdateUserMetadataRequest) (*api.UpdateUserMetadataResponse, error) {
	return nil, m.s.unbuilt(ctx)
}

func (m managementService) InsertNamespaceMetadata(ctx context.Context, _ *api.InsertNamespaceMetadataRequest) (*api.InsertNamespaceMetadataResponse, error) {
	return nil, m.s.unbuilt(ctx)
}

func (m managementService) GetNamespaceMetadata(ctx context.Context, _ *api.GetNamespaceMetadataRequest) (*api.GetNamespaceMetadataResponse, error) {
	return nil, m.s.unbuilt(ctx)
}

func (m managementService) UpdateNamespaceMetadata(ctx context.Context, _ *api.UpdateNamespaceMetadataRequest) (*api.UpdateNamespaceMetadataResponse, error) {
	return nil, m.s.unbuilt(ctx)
}

// Auth: 2023's invitations and users.

func (a authService) CreateInvitations(ctx context.Context, _ *api.CreateInvitationsRequest) (*api.CreateInvitationsResponse, error) {
	return nil, a.s.unbuilt(ctx)
}

func (a authService) DeleteInvitations(ctx context.Context, _ *api.DeleteInvitationsRequest) (*api.DeleteInvitationsResponse, error) {
	return nil, a.s.unbuilt(ctx)
}

func (a authService) ListInvitations(ctx context.Context, _ *api.ListInvitationsRequest) (*api.ListInvitationsResponse, error) {
	return nil, a.s.unbuilt(ctx)
}

func (a authService) VerifyInvitation(ctx context.Context, _ *api.VerifyInvitationRequest) (*api.VerifyInvitationResponse, error) {
	return nil, a.s.unbuilt(ctx)
}

func (a authService) ListUsers(ctx context.Context, _ *api.ListUsersRequest) (*api.ListUsersResponse, error) {
	return nil, a.s.unbuilt(ctx)
}

// User: 2022's user metadata, with the message its HTTP paths answer 501
// with.

func (u userService) unbuiltMetadata(ctx context.Context) error {
	return u.s.fail(ctx, unbuiltError("user metadata"))
}

func (u userService) InsertUserMetadata(ctx context.Context, _ *api.InsertUserMetadataRequest) (*api.InsertUserMetadataResponse, error) {
	return nil, u.unbuiltMetadata(ctx)
}

func (u userService) GetUserMetadata(ctx context.Context, _ *api.GetUserMetadataRequest) (*api.GetUserMetadataResponse, error) {
	return nil, u.unbuiltMetadata(ctx)
}

func (u userService) UpdateUserMetadata(ctx context.Context, _ *api.UpdateUserMetadataRequest) (*api.UpdateUserMetadataResponse, error) {
	return nil, u.unbuiltMetadata(ctx)
}

// registerUnbuiltServices registers the services not served, or served in
// one method only.
func (s *Server) registerUnbuiltServices(g grpc.ServiceRegistrar) {
	// From v1.0.0-beta.1 on, the clients ask Observability for the
	// server's info (HTTP: /v1/observability/info beside /v1/info); the
	// request and response messages are Tigris.GetInfo's. Its other
	// methods answer as their HTTP paths do.
	s.registerUnbuilt(g, &api.Observability_ServiceDesc, api.UnimplementedObservabilityServer{}, "metrics queries",
		grpc.MethodDesc{MethodName: "GetInfo", Handler: s.observabilityGetInfo})
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
