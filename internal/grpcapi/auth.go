package grpcapi

import (
	"context"
	"fmt"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/ops"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// Authentication over gRPC: a call's "authorization" metadata (the bearer
// token the official clients send as per-call credentials) makes its
// caller, once, before the call runs; and the Auth, User and Admin
// services, over the same operations as their HTTP paths.

type callerKey struct{}

// caller is who makes the call: in its state (call.go), or else in a
// context value.
func caller(ctx context.Context) ops.Caller {
	if st := stateOf(ctx); st != nil && st.authenticated {
		return st.caller
	}
	c, _ := ctx.Value(callerKey{}).(ops.Caller)
	return c
}

// callerOn is the caller of a request of a method both API generations
// have, which speaks in the terms of the generation that sent it: a
// request that names a branch is 2023's (the final clients always name
// one, main unless told otherwise), whose errors call a database a
// project.
func callerOn(ctx context.Context, branch string) ops.Caller {
	c := caller(ctx)
	c.Projects = branch != ""
	return c
}

// caller2023 is the caller of a method only the 2023 API has.
func caller2023(ctx context.Context) ops.Caller {
	c := caller(ctx)
	c.Projects = true
	return c
}

func (s *Server) withCaller(ctx context.Context) context.Context {
	authorization, _ := mdFirst(ctx, "authorization")
	c := s.ops.Authenticate(ctx, authorization)
	c.Transport = ops.TransportGRPC
	if st := stateOf(ctx); st != nil {
		st.caller, st.authenticated = c, true
		return ctx
	}
	return context.WithValue(ctx, callerKey{}, c)
}

// peerHost is the address a call came from, for the limit on failed token
// requests.
func peerHost(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(p.Addr.String())
	if err != nil {
		return p.Addr.String()
	}
	return host
}

// authService serves Auth: tokens, and 2023's invitations and users
// (appkeys.go).
type authService struct {
	api.UnsafeAuthServer
	s *Server
}

// getAccessTokenHandler serves Auth.GetAccessToken under 2022's name,
// getAccessToken, which alpha.32's Go client calls (TypeScript's and
// 2023's call GetAccessToken): the generated service can declare only one
// of the two, whose Go names are the same.
func (a authService) getAccessTokenHandler(_ any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	in := new(api.GetAccessTokenRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	call := func(ctx context.Context, req any) (any, error) {
		return a.GetAccessToken(ctx, req.(*api.GetAccessTokenRequest))
	}
	if interceptor == nil {
		return call(ctx, in)
	}
	return interceptor(ctx, in, &grpc.UnaryServerInfo{Server: a, FullMethod: "/" + api.Auth_ServiceDesc.ServiceName + "/getAccessToken"}, call)
}

func (a authService) GetAccessToken(ctx context.Context, req *api.GetAccessTokenRequest) (*api.GetAccessTokenResponse, error) {
	grant := ops.GrantRefreshToken // the enum's zero value
	if req.GetGrantType() == api.GrantType_CLIENT_CREDENTIALS {
		grant = ops.GrantClientCredentials
	} else if req.GetGrantType() != api.GrantType_REFRESH_TOKEN {
		grant = fmt.Sprint(req.GetGrantType())
	}
	t, err := a.s.ops.GetAccessToken(ctx, caller(ctx), ops.TokenRequest{GrantType: grant,
		ClientID: req.GetClientId(), ClientSecret: req.GetClientSecret(), RefreshToken: req.GetRefreshToken(), From: peerHost(ctx)})
	if err != nil {
		return nil, a.s.fail(ctx, err)
	}
	return &api.GetAccessTokenResponse{AccessToken: t.Access, RefreshToken: t.Refresh, ExpiresIn: int32(t.ExpiresIn.Seconds())}, nil
}

// userService serves User: applications. The published messages carry
// neither a role nor a namespace: applications made over gRPC have the
// default role in the caller's namespace, unless Folio's own fields (role
// and namespace, from 1001) name them, as its Go client does.
type userService struct {
	api.UnsafeUserServer
	s *Server
}

func applicationOut(a *ops.Application) *api.Application {
	out := &api.Application{Id: a.ID, Name: a.Name, Description: a.Description, Secret: a.Secret,
		CreatedAt: a.CreatedAt.UnixMilli(), CreatedBy: a.CreatedBy, UpdatedBy: a.UpdatedBy,
		Role: string(a.Role), Namespace: a.Namespace.Name}
	if !a.UpdatedAt.IsZero() {
		out.UpdatedAt = a.UpdatedAt.UnixMilli()
	}
	return out
}

func (u userService) CreateApplication(ctx context.Context, req *api.CreateApplicationRequest) (*api.CreateApplicationResponse, error) {
	app, err := u.s.ops.CreateApplication(ctx, caller(ctx), ops.CreateApplicationRequest{Name: req.GetName(), Description: req.GetDescription(),
		Role: req.GetRole(), Namespace: req.GetNamespace()})
	if err != nil {
		return nil, u.s.fail(ctx, err)
	}
	return &api.CreateApplicationResponse{CreatedApplication: applicationOut(app)}, nil
}

func (u userService) UpdateApplication(ctx context.Context, req *api.UpdateApplicationRequest) (*api.UpdateApplicationResponse, error) {
	app, err := u.s.ops.UpdateApplication(ctx, caller(ctx), ops.UpdateApplicationRequest{ID: req.GetId(), Name: req.GetName(), Description: req.GetDescription()})
	if err != nil {
		return nil, u.s.fail(ctx, err)
	}
	return &api.UpdateApplicationResponse{UpdatedApplication: applicationOut(app)}, nil
}

func (u userService) DeleteApplication(ctx context.Context, req *api.DeleteApplicationsRequest) (*api.DeleteApplicationResponse, error) {
	if err := u.s.ops.DeleteApplication(ctx, caller(ctx), ops.ApplicationRequest{ID: req.GetId()}); err != nil {
		return nil, u.s.fail(ctx, err)
	}
	return &api.DeleteApplicationResponse{Deleted: true}, nil
}

func (u userService) ListApplications(ctx context.Context, _ *api.ListApplicationsRequest) (*api.ListApplicationsResponse, error) {
	apps, err := u.s.ops.ListApplications(ctx, caller(ctx))
	if err != nil {
		return nil, u.s.fail(ctx, err)
	}
	out := &api.ListApplicationsResponse{Applications: make([]*api.Application, len(apps))}
	for i, a := range apps {
		out.Applications[i] = applicationOut(a)
	}
	return out, nil
}

func (u userService) RotateApplicationSecret(ctx context.Context, req *api.RotateApplicationSecretRequest) (*api.RotateApplicationSecretResponse, error) {
	app, err := u.s.ops.RotateApplicationSecret(ctx, caller(ctx), ops.ApplicationRequest{ID: req.GetId()})
	if err != nil {
		return nil, u.s.fail(ctx, err)
	}
	return &api.RotateApplicationSecretResponse{Application: applicationOut(app)}, nil
}

// adminService serves Admin: 2022's namespaces.
type adminService struct {
	api.UnsafeAdminServer
	s *Server
}

func (a adminService) CreateNamespace(ctx context.Context, req *api.CreateNamespaceRequest2022) (*api.CreateNamespaceResponse2022, error) {
	ns, err := a.s.ops.CreateNamespace(ctx, caller(ctx), ops.CreateNamespaceRequest{Name: req.GetName(), ID: int64(req.GetId())})
	if err != nil {
		return nil, a.s.fail(ctx, err)
	}
	return &api.CreateNamespaceResponse2022{Status: "created", Message: fmt.Sprintf("Namespace created, with id=%d, and name=%s", ns.ID, ns.Name)}, nil
}

func (a adminService) ListNamespaces(ctx context.Context, _ *api.ListNamespacesRequest2022) (*api.ListNamespacesResponse2022, error) {
	list, err := a.s.ops.ListNamespaces(ctx, caller(ctx))
	if err != nil {
		return nil, a.s.fail(ctx, err)
	}
	out := &api.ListNamespacesResponse2022{Namespaces: make([]*api.NamespaceInfo2022, len(list))}
	for i, ns := range list {
		out.Namespaces[i] = &api.NamespaceInfo2022{Id: int32(ns.ID), Name: ns.Name}
	}
	return out, nil
}

// managementService serves Management: the final API's namespaces (its
// metadata calls are not built yet: unbuilt.go). A namespace's id is its
// name in Folio, its code its number.
type managementService struct {
	api.UnsafeManagementServer
	s *Server
}

func namespaceInfo(ns *ops.Namespace) *api.NamespaceInfo {
	return &api.NamespaceInfo{Code: int32(ns.ID), Id: ns.Name, Name: ns.Name}
}

func (m managementService) CreateNamespace(ctx context.Context, req *api.CreateNamespaceRequest) (*api.CreateNamespaceResponse, error) {
	r := ops.CreateNamespaceRequest{Name: req.GetName(), ID: int64(req.GetCode())}
	switch {
	case r.Name == "":
		r.Malformed = apierror.Errorf(apierror.InvalidArgument, "'name' is required")
	case req.GetId() != "" && req.GetId() != r.Name:
		r.Malformed = apierror.Errorf(apierror.InvalidArgument, "'id' must be the namespace's name or left out: Folio names a namespace by its name")
	}
	ns, err := m.s.ops.CreateNamespace(ctx, caller(ctx), r)
	if err != nil {
		return nil, m.s.fail(ctx, err)
	}
	return &api.CreateNamespaceResponse{Status: "created", Namespace: namespaceInfo(ns),
		Message: fmt.Sprintf("Namespace created, with code=%d, and id=%s", ns.ID, ns.Name)}, nil
}

func (m managementService) ListNamespaces(ctx context.Context, req *api.ListNamespacesRequest) (*api.ListNamespacesResponse, error) {
	if req.GetDescribe() {
		return nil, m.s.fail(ctx, apierror.Errorf(apierror.Unimplemented, "describing namespaces (describe=true) is not implemented by this server"))
	}
	list, err := m.s.ops.ListNamespaces(ctx, caller(ctx))
	if err != nil {
		return nil, m.s.fail(ctx, err)
	}
	one := req.GetNamespaceId()
	out := &api.ListNamespacesResponse{}
	for i := range list {
		if one == "" || list[i].Name == one {
			out.Namespaces = append(out.Namespaces, namespaceInfo(&list[i]))
		}
	}
	if one != "" && len(out.Namespaces) == 0 {
		return nil, m.s.fail(ctx, apierror.Errorf(apierror.NotFound, "namespace '%s' doesn't exist", one))
	}
	return out, nil
}

func (m managementService) DeleteNamespace(ctx context.Context, req *api.DeleteNamespaceRequest) (*api.DeleteNamespaceResponse, error) {
	if err := m.s.ops.DeleteNamespace(ctx, caller(ctx), req.GetNamespaceId()); err != nil {
		return nil, m.s.fail(ctx, err)
	}
	return &api.DeleteNamespaceResponse{Status: "deleted", Message: fmt.Sprintf("Namespace: %s deleted successfully", req.GetNamespaceId())}, nil
}
