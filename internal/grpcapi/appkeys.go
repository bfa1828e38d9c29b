package grpcapi

import (
	"context"

	"github.com/foliodb/folio/internal/ops"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// Tigris's app keys and Auth's invitations and users (2023's), over the
// same operations as their HTTP paths. The messages are the final API's,
// with Folio's role on keys and, on invitations, the codes and the
// application an invitation became (fields from 1001).

func appKeyOut(a *ops.Application) *api.AppKey {
	out := &api.AppKey{Id: a.ID, Name: a.Name, Description: a.Description, Secret: a.Secret,
		CreatedAt: a.CreatedAt.UnixMilli(), CreatedBy: a.CreatedBy, UpdatedBy: a.UpdatedBy,
		Project: a.Project, Role: string(a.Role)}
	if !a.UpdatedAt.IsZero() {
		out.UpdatedAt = a.UpdatedAt.UnixMilli()
	}
	return out
}

func globalAppKeyOut(a *ops.Application) *api.GlobalAppKey {
	k := appKeyOut(a)
	return &api.GlobalAppKey{Id: k.Id, Name: k.Name, Description: k.Description, Secret: k.Secret, CreatedAt: k.CreatedAt,
		CreatedBy: k.CreatedBy, UpdatedAt: k.UpdatedAt, UpdatedBy: k.UpdatedBy, Role: k.Role}
}

func (s *Server) CreateAppKey(ctx context.Context, req *api.CreateAppKeyRequest) (*api.CreateAppKeyResponse, error) {
	key, err := s.ops.CreateAppKey(ctx, caller2023(ctx), ops.AppKeyRequest{Project: req.GetProject(), Name: req.GetName(),
		Description: req.GetDescription(), Role: req.GetRole()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.CreateAppKeyResponse{CreatedAppKey: appKeyOut(key)}, nil
}

func (s *Server) UpdateAppKey(ctx context.Context, req *api.UpdateAppKeyRequest) (*api.UpdateAppKeyResponse, error) {
	key, err := s.ops.UpdateAppKey(ctx, caller2023(ctx), ops.AppKeyRequest{Project: req.GetProject(), ID: req.GetId(),
		Name: req.GetName(), Description: req.GetDescription(), Role: req.GetRole()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.UpdateAppKeyResponse{UpdatedAppKey: appKeyOut(key)}, nil
}

func (s *Server) DeleteAppKey(ctx context.Context, req *api.DeleteAppKeyRequest) (*api.DeleteAppKeyResponse, error) {
	err := s.ops.DeleteAppKey(ctx, caller2023(ctx), ops.AppKeyRequest{Project: req.GetProject(), ID: req.GetId()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.DeleteAppKeyResponse{Deleted: true}, nil
}

func (s *Server) ListAppKeys(ctx context.Context, req *api.ListAppKeysRequest) (*api.ListAppKeysResponse, error) {
	keys, err := s.ops.ListAppKeys(ctx, caller2023(ctx), ops.AppKeyRequest{Project: req.GetProject()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &api.ListAppKeysResponse{}
	for _, k := range keys {
		out.AppKeys = append(out.AppKeys, appKeyOut(k))
	}
	return out, nil
}

func (s *Server) RotateAppKeySecret(ctx context.Context, req *api.RotateAppKeyRequest) (*api.RotateAppKeyResponse, error) {
	key, err := s.ops.RotateAppKeySecret(ctx, caller2023(ctx), ops.AppKeyRequest{Project: req.GetProject(), ID: req.GetId()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.RotateAppKeyResponse{AppKey: appKeyOut(key)}, nil
}

func (s *Server) CreateGlobalAppKey(ctx context.Context, req *api.CreateGlobalAppKeyRequest) (*api.CreateGlobalAppKeyResponse, error) {
	key, err := s.ops.CreateGlobalAppKey(ctx, caller2023(ctx), ops.AppKeyRequest{Name: req.GetName(),
		Description: req.GetDescription(), Role: req.GetRole()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.CreateGlobalAppKeyResponse{CreatedAppKey: globalAppKeyOut(key)}, nil
}

func (s *Server) UpdateGlobalAppKey(ctx context.Context, req *api.UpdateGlobalAppKeyRequest) (*api.UpdateGlobalAppKeyResponse, error) {
	key, err := s.ops.UpdateGlobalAppKey(ctx, caller2023(ctx), ops.AppKeyRequest{ID: req.GetId(), Name: req.GetName(),
		Description: req.GetDescription(), Role: req.GetRole()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.UpdateGlobalAppKeyResponse{UpdatedAppKey: globalAppKeyOut(key)}, nil
}

func (s *Server) DeleteGlobalAppKey(ctx context.Context, req *api.DeleteGlobalAppKeyRequest) (*api.DeleteGlobalAppKeyResponse, error) {
	if err := s.ops.DeleteGlobalAppKey(ctx, caller2023(ctx), ops.AppKeyRequest{ID: req.GetId()}); err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.DeleteGlobalAppKeyResponse{Deleted: true}, nil
}

func (s *Server) ListGlobalAppKeys(ctx context.Context, _ *api.ListGlobalAppKeysRequest) (*api.ListGlobalAppKeysResponse, error) {
	keys, err := s.ops.ListGlobalAppKeys(ctx, caller2023(ctx))
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &api.ListGlobalAppKeysResponse{}
	for _, k := range keys {
		out.AppKeys = append(out.AppKeys, globalAppKeyOut(k))
	}
	return out, nil
}

func (s *Server) RotateGlobalAppKeySecret(ctx context.Context, req *api.RotateGlobalAppKeySecretRequest) (*api.RotateGlobalAppKeySecretResponse, error) {
	key, err := s.ops.RotateGlobalAppKeySecret(ctx, caller2023(ctx), ops.AppKeyRequest{ID: req.GetId()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.RotateGlobalAppKeySecretResponse{AppKey: globalAppKeyOut(key)}, nil
}

func (a authService) CreateInvitations(ctx context.Context, req *api.CreateInvitationsRequest) (*api.CreateInvitationsResponse, error) {
	var in ops.CreateInvitationsRequest
	for _, i := range req.GetInvitations() {
		in.Invitations = append(in.Invitations, ops.NewInvitation{Email: i.GetEmail(), Role: i.GetRole(), SentByName: i.GetInvitationSentByName()})
	}
	made, err := a.s.ops.CreateInvitations(ctx, caller(ctx), in)
	if err != nil {
		return nil, a.s.fail(ctx, err)
	}
	out := &api.CreateInvitationsResponse{Status: "created", Count: int32(len(made)),
		Message: "invitation(s) created: hand each code to its invitee (Folio sends no mail)"}
	for _, inv := range made {
		out.Created = append(out.Created, &api.CreatedInvitation{Email: inv.Email, Role: string(inv.Role), Code: inv.Code,
			ExpirationTime: inv.ExpiresAt.UnixMilli()})
	}
	return out, nil
}

func (a authService) DeleteInvitations(ctx context.Context, req *api.DeleteInvitationsRequest) (*api.DeleteInvitationsResponse, error) {
	err := a.s.ops.DeleteInvitations(ctx, caller(ctx), ops.InvitationsRequest{Email: req.GetEmail(), Status: req.GetStatus()})
	if err != nil {
		return nil, a.s.fail(ctx, err)
	}
	return &api.DeleteInvitationsResponse{Status: "deleted", Message: "Invitation(s) deleted"}, nil
}

func (a authService) ListInvitations(ctx context.Context, req *api.ListInvitationsRequest) (*api.ListInvitationsResponse, error) {
	list, err := a.s.ops.ListInvitations(ctx, caller(ctx), ops.InvitationsRequest{Status: req.GetStatus()})
	if err != nil {
		return nil, a.s.fail(ctx, err)
	}
	out := &api.ListInvitationsResponse{}
	for _, inv := range list {
		out.Invitations = append(out.Invitations, &api.Invitation{Email: inv.Email, Role: string(inv.Role), Status: inv.Status,
			TigrisNamespace: inv.Namespace.Name, TigrisNamespaceName: inv.Namespace.Name, CreatedBy: inv.CreatedBy,
			CreatedByName: inv.CreatedByName, ExpirationTime: inv.ExpiresAt.UnixMilli()})
	}
	return out, nil
}

func (a authService) VerifyInvitation(ctx context.Context, req *api.VerifyInvitationRequest) (*api.VerifyInvitationResponse, error) {
	app, err := a.s.ops.VerifyInvitation(ctx, caller(ctx), ops.VerifyInvitationRequest{Email: req.GetEmail(), Code: req.GetCode()})
	if err != nil {
		return nil, a.s.fail(ctx, err)
	}
	return &api.VerifyInvitationResponse{TigrisNamespace: app.Namespace.Name, TigrisNamespaceName: app.Namespace.Name,
		Role: string(app.Role), ClientId: app.ID, ClientSecret: app.Secret}, nil
}

func (a authService) ListUsers(ctx context.Context, _ *api.ListUsersRequest) (*api.ListUsersResponse, error) {
	apps, err := a.s.ops.ListUsers(ctx, caller(ctx))
	if err != nil {
		return nil, a.s.fail(ctx, err)
	}
	out := &api.ListUsersResponse{}
	for _, app := range apps {
		out.Users = append(out.Users, &api.User{Email: app.Email, Name: app.Name, CreatedAt: app.CreatedAt.UnixMilli(), Role: string(app.Role)})
	}
	return out, nil
}
